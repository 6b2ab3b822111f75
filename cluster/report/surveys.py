"""Survey answers: the mean numeric answer per question with its 95% interval, per arm."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from societas.cluster.report import figures as F
from societas.cluster.report.data import Arm
from societas.cluster.report.stats import Z95


def survey_means(arm: Arm) -> dict[str, tuple[float, float, int]]:
    """question label -> (mean, 95% half-width, answers), pooled over the arm's replicates."""
    values: dict[str, list[float]] = {}
    for run in arm.runs:
        for survey, qid, day, time, value in run.rows(
            "SELECT survey, question_id, day, time, value FROM surveys "
            "WHERE value IS NOT NULL AND isfinite(value) ORDER BY ALL"
        ):
            values.setdefault(f"{survey} · {qid} (day {day} {time})", []).append(float(value))
    out = {}
    for label, v in values.items():
        x = np.asarray(v)
        half = Z95 * x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else float("nan")
        out[label] = (float(x.mean()), float(half), int(x.size))
    return out


def survey_figure(arms: list[Arm]) -> tuple[go.Figure | None, list[dict[str, Any]]]:
    """Grouped bars (one group per question, one bar per arm) with 95% error bars."""
    if not any(run.has("surveys") for arm in arms for run in arm.runs):
        return None, []
    per_arm = {arm.label: survey_means(arm) for arm in arms}
    labels = sorted({q for means in per_arm.values() for q in means})
    if not labels:
        return None, []
    cols = min(3, len(labels))
    nrows = -(-len(labels) // cols)
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=labels, vertical_spacing=0.22)
    F.style(fig, "Survey answers (numeric questions)", "", height=150 + 230 * nrows)
    fig.update_layout(hovermode="closest", margin={"t": 90}, showlegend=False)
    fig.update_annotations(font={"size": 11})
    rows = []
    for i, (arm, means) in enumerate(per_arm.items()):
        for k, q in enumerate(labels):
            m, h, n = means.get(q, (np.nan, np.nan, 0))
            fig.add_trace(
                go.Bar(x=[arm], y=[m], name=arm, legendgroup=arm, showlegend=k == 0,
                       marker_color=F.PALETTE[i % len(F.PALETTE)],
                       error_y={"type": "data", "array": [h], "visible": True},
                       hovertemplate=f"{arm}: %{{y:.3g}} ± {h:.3g} (n={n})<extra></extra>"),
                row=k // cols + 1, col=k % cols + 1,
            )  # fmt: skip
            if n:
                rows.append({"arm": arm, "question": q, "mean": round(m, 4),
                             "half_width": round(h, 4), "n": n})  # fmt: skip
    return fig, rows
