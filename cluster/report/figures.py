"""Plotly helpers shared by the views: one look, bands, a simulated-time axis, HTML divs.

Figures go into the page as `<div>` + a small script each (`include_plotlyjs=False`); the
page embeds plotly.js once in its head (no CDN, opens offline). Axis titles use automargin
so long labels are never cut off.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import plotly.graph_objects as go

from societas.cluster.report.data import RunData
from societas.cluster.report.stats import Band

PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
)  # fmt: skip
CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["select2d"]}


def plotlyjs() -> str:
    """plotly.js itself, to embed once per page."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def new_figure(title: str, y_title: str, x_title: str = "", height: int = 380) -> go.Figure:
    """An empty figure with the report's look."""
    return style(go.Figure(), title, y_title, x_title, height)


def style(fig: go.Figure, title: str, y_title: str, x_title: str = "", height: int = 380) -> Any:
    """The report's look on a figure (also one from make_subplots)."""
    fig.update_layout(
        template="simple_white",
        title={"text": title, "x": 0.0, "xanchor": "left", "font": {"size": 15}},
        height=height,
        margin={"l": 60, "r": 20, "t": 70, "b": 50},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1.0, "xanchor": "right"},
        font={"family": "system-ui, sans-serif", "size": 12},
        hovermode="x unified",
    )
    fig.update_xaxes(title_text=x_title, automargin=True, showgrid=True, gridcolor="#eee")
    fig.update_yaxes(title_text=y_title, automargin=True, showgrid=True, gridcolor="#eee")
    return fig


def time_axis(fig: go.Figure, run: RunData, row: int | None = None, col: int | None = None) -> None:
    """x axis in simulated time: ticks every 6 hours labelled `d0 06:00`."""
    hours = run.hours([0, max(0, run.ticks - 1)])
    start, end = float(hours[0]), float(hours[1])
    step = 6.0 if end - start <= 96 else 24.0
    vals = np.arange(np.ceil(start / step) * step, end + 1e-9, step)
    text = [f"d{int(v // 24)} {int(v % 24):02d}:00" for v in vals]
    fig.update_xaxes(
        tickvals=vals.tolist(),
        ticktext=text,
        title_text="simulated time (day, hour)",
        row=row,
        col=col,
    )


def add_band(
    fig: go.Figure,
    run: RunData,
    band: Band,
    name: str,
    color: str,
    row: int | None = None,
    col: int | None = None,
    dash: str | None = None,
    showlegend: bool = True,
) -> None:
    """A mean line with its shaded 95% interval (hover shows the interval and n)."""
    x = run.hours(band.ticks[: band.mean.size])
    if np.any(np.isfinite(band.lo)):
        kw: dict[str, Any] = {"row": row, "col": col} if row else {}
        fig.add_trace(
            go.Scatter(
                x=np.concatenate([x, x[::-1]]),
                y=np.concatenate([band.hi, band.lo[::-1]]),
                fill="toself",
                fillcolor=rgba(color, 0.18),
                line={"width": 0},
                hoverinfo="skip",
                showlegend=False,
                legendgroup=name,
                name=f"{name} 95% CI",
            ),
            **kw,
        )
    custom = np.stack([band.lo, band.hi, band.n], axis=1)
    trace = go.Scatter(
        x=x,
        y=band.mean,
        name=name,
        legendgroup=name,
        showlegend=showlegend,
        line={"color": color, "width": 2, "dash": dash},
        customdata=custom,
        hovertemplate=(
            "%{y:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}] n=%{customdata[2]:.0f}"
        ),
    )
    if row:
        fig.add_trace(trace, row=row, col=col)
    else:
        fig.add_trace(trace)


def intervention_lines(
    fig: go.Figure,
    run: RunData,
    label: bool = True,
    marks: list[tuple[int, int]] | None = None,
) -> None:
    """Dashed vertical lines at each intervention, numbered like the interventions table
    (`marks`: (number, tick) pairs; default: this run's interventions in order)."""
    if marks is None:
        marks = [(i, int(iv.get("tick", 0))) for i, iv in enumerate(run.interventions, 1)]
    by_tick: dict[int, list[str]] = {}
    for n, tick in marks:
        by_tick.setdefault(tick, []).append(str(n))
    for tick, numbers in sorted(by_tick.items()):
        i = ",".join(numbers)
        x = float(run.hours([tick])[0])
        fig.add_vline(x=x, line={"dash": "dash", "color": "#888", "width": 1})
        if label:
            fig.add_annotation(
                x=x,
                y=1.0,
                yref="paper",
                text=f"<b>{i}</b>",
                showarrow=False,
                yanchor="bottom",
                font={"size": 11, "color": "#555"},
                bgcolor="#fff",
            )


def div(fig: go.Figure, div_id: str) -> str:
    """The figure as an HTML `<div>` + script (plotly.js comes from the page head)."""
    return fig.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=re.sub(r"[^A-Za-z0-9_-]+", "-", div_id),
        config=CONFIG,
        default_height=f"{int(fig.layout.height or 380)}px",
        default_width="100%",
    )
