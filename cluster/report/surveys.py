"""Survey answers per arm: a choice question as the share choosing each option, a Likert
question as its distribution over the points and its mean, a number as its mean; shares with
Wilson intervals (inside [0, 1]), means with t intervals over the agents that answered. Each
question also says how many were asked and how many gave no usable answer (a model's answer
that fell back is no data): non-response that differs between arms is a finding of its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from societas.cluster.report import figures as F
from societas.cluster.report.data import Arm
from societas.cluster.report.stats import t_interval, wilson


@dataclass
class Answers:
    """The numeric answers to one question in one arm (pooled over its replicates)."""

    kind: str
    points: list[str] = field(default_factory=list)  # option names or Likert points
    values: list[float] = field(default_factory=list)
    asked: int = 0  # rows of the question, answered or not


def _questions(arm: Arm) -> dict[tuple[str, str], dict[str, Any]]:
    cfg = arm.first.config
    return {(s["id"], q["id"]): q for s in cfg.get("surveys", []) for q in s["questions"]}


def answers(arm: Arm) -> dict[str, Answers]:
    """question label -> its answers in this arm."""
    questions = _questions(arm)
    out: dict[str, Answers] = {}
    for run in arm.runs:
        for survey, qid, day, time, value in run.rows(
            "SELECT survey, question_id, day, time, value FROM surveys ORDER BY ALL"
        ):
            q = questions.get((survey, qid), {})
            if q.get("kind") == "open":  # words only: quoted, not counted
                continue
            label = f"{survey} · {qid} (day {day} {time})"
            if label not in out:
                kind = str(q.get("kind", "number"))
                points = (
                    list(q.get("options") or [])
                    if kind == "choice"
                    else [str(p) for p in range(1, int(q.get("scale", 5)) + 1)]
                    if kind == "likert"
                    else []
                )
                out[label] = Answers(kind, points)
            out[label].asked += 1
            if value is not None and np.isfinite(value):
                out[label].values.append(float(value))
    return out


def _shares(a: Answers) -> list[tuple[str, float, float, float]]:
    """(point, share, low, high) per option or Likert point."""
    x = np.asarray(a.values)
    out = []
    for i, point in enumerate(a.points):
        hit = float(np.sum(x == (i if a.kind == "choice" else i + 1)))
        lo, hi = wilson(hit, x.size)
        out.append((point, hit / max(1, x.size), lo, hi))
    return out


def survey_figure(arms: list[Arm]) -> tuple[go.Figure | None, list[dict[str, Any]]]:
    """One panel per question: bars per option/point (shares) or per arm (means)."""
    if not any(run.has("surveys") for arm in arms for run in arm.runs):
        return None, []
    per_arm = {arm.label: answers(arm) for arm in arms}
    labels = sorted({q for a in per_arm.values() for q in a})
    if not labels:
        return None, []
    cols = min(3, len(labels))
    nrows = -(-len(labels) // cols)
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=labels, vertical_spacing=0.22)
    F.style(fig, "Survey answers", "", height=150 + 230 * nrows)
    fig.update_layout(hovermode="closest", margin={"t": 90}, barmode="group")
    fig.update_annotations(font={"size": 11})
    rows = []
    for i, (arm, by_question) in enumerate(per_arm.items()):
        color = F.PALETTE[i % len(F.PALETTE)]
        for k, q in enumerate(labels):
            where = {"row": k // cols + 1, "col": k % cols + 1}
            a = by_question.get(q)
            if a is None:
                continue
            n, missing = len(a.values), a.asked - len(a.values)
            row: dict[str, Any] = {"arm": arm, "question": q, "kind": a.kind, "n": n,
                                   "asked": a.asked, "no_answer": missing,
                                   "mean": None, "half_width": None}  # fmt: skip
            rows.append(row)
            if not a.values:  # asked, and no usable answer at all
                continue
            m, lo, hi, _ = t_interval(a.values)
            half = (hi - lo) / 2 if np.isfinite(hi) else float("nan")
            if a.kind != "choice":  # an option index has no mean worth reading
                row.update(mean=round(m, 4), half_width=round(half, 4))
            of = f"n={n} of {a.asked} asked" + (f", {missing} without answer" if missing else "")
            if a.points:
                shares = _shares(a)
                row["shares"] = {p: round(s, 4) for p, s, _, _ in shares}
                mean_note = f", mean {m:.2f}" if a.kind == "likert" else ""
                fig.add_trace(
                    go.Bar(x=[p for p, *_ in shares], y=[s for _, s, _, _ in shares],
                           name=arm, legendgroup=arm, showlegend=k == 0, marker_color=color,
                           error_y={"type": "data", "symmetric": False, "visible": True,
                                    "array": [h - s for _, s, _, h in shares],
                                    "arrayminus": [s - lo for _, s, lo, _ in shares]},
                           hovertemplate=f"{arm}: %{{y:.0%}} ({of}{mean_note})"
                           "<extra></extra>"),
                    **where,
                )  # fmt: skip
            else:
                fig.add_trace(
                    go.Bar(x=[arm], y=[m], name=arm, legendgroup=arm, showlegend=k == 0,
                           marker_color=color,
                           error_y={"type": "data", "array": [half], "visible": True},
                           hovertemplate=f"{arm}: %{{y:.3g}} ± {half:.3g} ({of})"
                           "<extra></extra>"),
                    **where,
                )  # fmt: skip
    return fig, rows
