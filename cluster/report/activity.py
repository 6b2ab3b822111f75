"""Activity mix over the day (stacked shares) and the language-model work per tick."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from societas.cluster.report import figures as F
from societas.cluster.report.data import Arm, RunData
from societas.cluster.report.stats import dense

CATEGORIES = ("sleep", "home", "eat", "work", "shop", "leisure", "social", "evacuate")


def activity_shares(run: RunData) -> dict[str, np.ndarray]:
    """Share of agents in each activity category per tick."""
    cols = run.columns(
        "SELECT tick, category, count(*) AS k FROM agent_state GROUP BY tick, category"
    )
    if not cols:
        return {}
    ticks, cats, k = cols["tick"].astype(int), cols["category"].astype(str), cols["k"]
    total = dense(run, *_sum_by(ticks, k), fill=0.0)
    names = list(CATEGORIES) + sorted(set(cats) - set(CATEGORIES))
    out = {}
    for c in names:
        m = cats == c
        if m.any():
            counts = dense(run, ticks[m], k[m].astype(float), 0.0)
            out[c] = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
    return out


def _sum_by(ticks: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq = np.unique(ticks)
    return uniq, np.array([k[ticks == t].sum() for t in uniq], dtype=float)


def activity_figure(arm: Arm) -> tuple[go.Figure, dict[str, float]]:
    """Stacked area of activity shares of the arm's first run; returns mean shares too."""
    run = arm.first
    shares = activity_shares(run)
    fig = F.new_figure(f"Activity mix over time — {arm.label}", "share of agents")
    x = run.hours(np.arange(run.ticks))
    for i, (cat, y) in enumerate(shares.items()):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                name=cat,
                stackgroup="one",
                line={"width": 0.5, "color": F.PALETTE[i % len(F.PALETTE)]},
                hovertemplate="%{y:.2f}",
            )
        )
    F.time_axis(fig, run)
    fig.update_yaxes(range=[0, 1])
    F.intervention_lines(fig, run, label=False)
    return fig, {c: round(float(np.mean(v)), 4) for c, v in shares.items()}


def llm_figure(run: RunData) -> tuple[go.Figure | None, dict[str, Any]]:
    """Tokens per tick (bars) and requests (line); None when the run has no llm table."""
    cols = run.columns(
        "SELECT tick, sum(requests) AS req, sum(prompt_tokens) AS pt, "
        "sum(completion_tokens) AS ct FROM llm GROUP BY tick ORDER BY tick"
    )
    if not cols:
        return None, {}
    ticks = cols["tick"].astype(int)
    x = run.hours(ticks)
    label = "tokens"
    if run.is_rules and not run.model_tasks:
        label = "estimated tokens (rules policy: no model called)"
    elif run.is_rules:  # some tasks on a model: its tokens counted, the rules' estimated
        label = "tokens (the model's counted, the rules policy's estimated)"
    fig = F.new_figure("Language-model work per tick", label)
    fig.add_trace(go.Bar(x=x, y=cols["pt"], name="prompt tokens", marker_color=F.PALETTE[3]))
    fig.add_trace(go.Bar(x=x, y=cols["ct"], name="completion tokens", marker_color=F.PALETTE[4]))
    fig.add_trace(
        go.Scatter(
            x=x, y=cols["req"], name="requests", yaxis="y2", line={"color": "#222", "width": 1.5}
        )
    )
    fig.update_layout(
        barmode="stack",
        yaxis2={"title": {"text": "requests"}, "overlaying": "y", "side": "right",
                "automargin": True, "showgrid": False, "rangemode": "tozero"},
        margin={"r": 60},
    )  # fmt: skip
    F.time_axis(fig, run)
    totals = {
        "requests": int(cols["req"].sum()),
        "prompt_tokens": int(cols["pt"].sum()),
        "completion_tokens": int(cols["ct"].sum()),
    }
    return fig, totals
