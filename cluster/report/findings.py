"""The scenario's findings: outcome curves with 95% bands, arms on the same axes.

Each `Metric` is a titled chart of one or more series, each series a function run -> Band.
Which metrics exist follows the run's config and tables: evacuation when an event brings
danger, income/consumption always, opinions when attitudes were recorded, information reach
when facts were seeded, activity mix and needs always. With several arms, every arm is drawn
on the same axes and a second panel shows each arm minus the first with its interval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from societas.cluster.report import figures as F
from societas.cluster.report.card import interventions_of_arms
from societas.cluster.report.data import Arm, RunData
from societas.cluster.report.stats import (
    Band,
    agent_band,
    arm_band,
    cumulative_share,
    difference,
    paired_band,
    share_band,
    within_unit,
)

Maker = Callable[[RunData], Band]
DASHES = (None, "dot", "dash", "dashdot", "longdash")
SHARE_RANGE = (0.0, 1.02)
AGE_GROUPS = ("18-29", "30-44", "45-64", "65+")


@dataclass
class Metric:
    """One chart: its series (name -> run -> Band), axis title, caption and y range."""

    key: str
    title: str
    y_title: str
    caption: str
    series: list[tuple[str, Maker]] = field(default_factory=list)
    y_range: tuple[float, float] | None = None
    skip_if_flat: bool = False  # leave out when no series moves (e.g. income without policy)
    per_agent: str | None = None  # SQL of (tick, agent_id, v) of the first series: paired
    share: bool = False  # a 0/1 outcome: within-run bands are Wilson intervals in [0, 1]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def outcome_metrics(run: RunData, single: bool) -> list[Metric]:
    """The scenario's named outcomes, the primary first: mean per tick with its interval."""
    record = [o["name"] for o in (run.config.get("outcomes") or {}).get("record", [])]
    if not record or not run.has("outcomes"):
        return []
    primary = (run.config.get("analysis") or {}).get("primary")
    out = []
    for name in sorted(record, key=lambda n: n != primary):
        where = f"variable = {_quote(name)}"
        share = run.outcome_is_binary(name) is True
        make: Maker = (
            partial(share_band, expr="value = 1", table="outcomes", where=where)
            if share
            else partial(agent_band, expr="value", table="outcomes", where=where)
        )
        role = "primary outcome" if name == primary else "outcome"
        out.append(
            Metric(
                f"outcome_{name}",
                f"{role[0].upper()}{role[1:]}: {name}" + (" (share)" if share else ""),
                name,
                "Mean over agents per tick with its 95% interval (Wilson for a share; over "
                "seeds when replicated). With arms sharing seed and population the lower "
                "panel is the paired difference (per agent, then over seeds).",
                [("all agents", make)],
                (0.0, 1.02) if share else None,
                per_agent=f"SELECT tick, agent_id, value AS v FROM outcomes WHERE {where}",
                share=share,
            )
        )
    return out


def _shelter(where: str = "true", table: str = "agent_state") -> Maker:
    return lambda r: share_band(r, "place_kind = 'shelter'", table, where)


def _with_profiles(make: Callable[[RunData], Band]) -> Maker:
    def run_it(run: RunData) -> Band:
        run.profiles_table()
        return make(run)

    return run_it


def evacuation_metrics(run: RunData, single: bool) -> list[Metric]:
    """Share at shelters; by trust tercile and by age group in a single-arm report."""
    if not any(iv.get("danger") for iv in run.interventions):
        return []
    main = Metric(
        "evacuation",
        "Evacuation: share of agents at a shelter",
        "share of agents at a shelter",
        "Share of agents per tick with its 95% interval (Wilson; over seeds when replicated). "
        "With arms sharing seed and population the lower panel is the paired difference (per "
        "agent, then over seeds). Dashed lines: interventions (numbers as in the "
        "interventions table).",
        [("all agents", _shelter())],
        (0.0, 1.02),
        per_agent="SELECT tick, agent_id, (place_kind = 'shelter')::DOUBLE AS v FROM agent_state",
        share=True,
    )
    out = [main]
    if single and run.population is not None:
        joined = "agent_state JOIN profiles USING (agent_id)"
        cuts = np.quantile([p.trust for p in run.population.profiles], [1 / 3, 2 / 3])
        for name, cond in (
            ("low trust", f"trust < {cuts[0]:.6f}"),
            ("mid trust", f"trust >= {cuts[0]:.6f} AND trust < {cuts[1]:.6f}"),
            ("high trust", f"trust >= {cuts[1]:.6f}"),
        ):
            main.series.append((name, _with_profiles(_shelter(cond, joined))))
        out.append(
            Metric(
                "evacuation_age",
                "Evacuation by age group",
                "share at a shelter",
                "Share of each age group at a shelter, with 95% intervals over its agents.",
                [(g, _with_profiles(_shelter(f"age_group = '{g}'", joined))) for g in AGE_GROUPS],
                (0.0, 1.02),
            )
        )
    return out


def economy_metrics(run: RunData, single: bool) -> list[Metric]:
    """Income, consumption and planned work hours; recipients vs others under a policy."""
    policy = [iv for iv in run.interventions if iv.get("kind") == "policy"]
    last = max(0, run.ticks - 1)
    rec = f"agent_id IN (SELECT agent_id FROM agent_state WHERE tick = {last} AND transfers > 0)"
    out = []
    for col, title, unit in (
        ("income", "Monthly income", "currency units / month"),
        ("consumption", "Monthly consumption", "currency units / month"),
        ("work_hours", "Planned work hours", "hours / day"),
    ):
        if policy:
            series: list[tuple[str, Maker]] = [
                ("recipients", partial(agent_band, expr=col, where=rec)),
                ("others", partial(agent_band, expr=col, where=f"NOT ({rec})")),
            ]
        else:
            series = [("all agents", partial(agent_band, expr=col))]
        metric = Metric(col, title, unit, "Mean per tick with its 95% interval.", series)
        metric.skip_if_flat = not policy
        out.append(metric)
    if not policy:
        return out[:2]  # work hours only move under an income policy
    return out


def opinion_metrics(run: RunData, single: bool) -> list[Metric]:
    """Per topic: mean attitude (band) and its spread (sd across agents: polarization)."""
    topics = [t["name"] for t in run.config.get("topics", [])]
    if not topics or not run.has("attitudes"):
        return []
    out = []
    for topic in topics:
        cond = f"topic = '{topic}'"
        out.append(
            Metric(
                f"attitude_{topic}",
                f"Opinion on {topic}: mean and spread",
                "attitude (0 against .. 10 for)",
                "Solid: mean attitude with its 95% interval. Dotted: spread (standard deviation "
                "across agents; rising spread = polarization).",
                [
                    ("mean", partial(agent_band, expr="value", table="attitudes", where=cond)),
                    ("spread (sd)", partial(_spread, cond=cond)),
                ],
                (0.0, 10.0),
            )
        )
    return out


def _spread(run: RunData, cond: str) -> Band:
    cols = run.columns(
        f"SELECT tick, stddev_pop(value) AS s, count(*) AS n FROM attitudes WHERE {cond} "
        "GROUP BY tick ORDER BY tick"
    )
    ticks = np.arange(run.ticks)
    s = np.full(run.ticks, np.nan)
    n = np.zeros(run.ticks)
    if cols:
        s[cols["tick"].astype(int)] = cols["s"].astype(float)
        n[cols["tick"].astype(int)] = cols["n"].astype(float)
    nan = np.full(run.ticks, np.nan)
    return Band(ticks, s, nan, nan, n, "agents")


def reach_metrics(run: RunData, single: bool) -> list[Metric]:
    """Per seeded fact: cumulative share of agents who know it."""
    facts = [f["id"] for f in run.config.get("facts", [])]
    if not facts:
        return []
    series: list[tuple[str, Maker]] = [(fact, _reach_of(fact)) for fact in facts]
    return [
        Metric(
            "reach",
            "Information reach: share of agents who know each fact",
            "share of agents who know it",
            "Cumulative share with a binomial 95% interval.",
            series,
            (0.0, 1.02),
        )
    ]


def _reach_of(fact: str) -> Maker:
    """The cumulative share of agents who know `fact`, per tick."""

    def band(run: RunData) -> Band:
        return cumulative_share(
            run,
            f"SELECT agent_id, min(tick) AS tick FROM knowledge WHERE fact = '{fact}' "
            "GROUP BY agent_id",
            run.agents,
        )

    return band


def needs_metric(run: RunData, single: bool) -> list[Metric]:
    """Mean satisfaction of each need."""
    if not run.has("needs"):
        return []
    needs = ("hunger", "energy", "safety", "social")
    return [
        Metric(
            "needs",
            "Needs: mean satisfaction",
            "satisfaction (1 = satisfied)",
            "Mean satisfaction of each need with its 95% interval.",
            [(n, partial(agent_band, expr=n, table="needs")) for n in needs],
            (0.0, 1.02),
            per_agent="SELECT tick, agent_id, hunger AS v FROM needs",
        )
    ]


def is_flat(rows: list[dict[str, Any]]) -> bool:
    """True when no series of a metric moved over the run (its lowest = its peak)."""
    return all(r.get("peak") == r.get("low") for r in rows)


def attitude_heatmaps(run: RunData) -> list[tuple[str, Any]]:
    """Per topic: the distribution of attitudes over time (share of agents per bin)."""
    out = []
    for topic in [t["name"] for t in run.config.get("topics", [])]:
        cols = run.columns(
            "SELECT tick, least(floor(value * 2), 19)::INT AS bin, count(*) AS k FROM attitudes "
            "WHERE topic = ? GROUP BY ALL",
            topic,
        )
        if not cols:
            continue
        z = np.zeros((20, run.ticks))
        np.add.at(z, (cols["bin"].astype(int), cols["tick"].astype(int)), cols["k"])
        z = z / np.maximum(z.sum(axis=0, keepdims=True), 1)
        fig = F.new_figure(f"Distribution of attitudes to {topic} over time",
                           "attitude (0 against .. 10 for)")  # fmt: skip
        fig.update_layout(hovermode="closest")
        fig.add_trace(
            go.Heatmap(x=run.hours(np.arange(run.ticks)), y=np.arange(20) / 2 + 0.25, z=z,
                       colorscale="Viridis", colorbar={"title": {"text": "share"}},
                       hovertemplate="%{y:.1f}: %{z:.2f}<extra></extra>")
        )  # fmt: skip
        F.time_axis(fig, run)
        out.append((topic, fig))
    return out


def metrics_for(run: RunData, single: bool) -> list[Metric]:
    """Every metric this run's scenario and tables support, most important first."""
    out: list[Metric] = []
    makers = (
        outcome_metrics,
        evacuation_metrics,
        reach_metrics,
        opinion_metrics,
        economy_metrics,
        needs_metric,
    )
    for fn in makers:
        out += fn(run, single)
    return out


def metric_figure(metric: Metric, arms: list[Arm]) -> tuple[Any, list[dict[str, Any]]]:
    """The chart of one metric over all arms (+ a difference panel) and its headline rows."""
    ref = arms[0].first
    several = len(arms) > 1
    if several:
        fig = make_subplots(
            rows=2, cols=1, shared_xaxes=True, row_heights=[0.65, 0.35], vertical_spacing=0.08
        )
        F.style(fig, metric.title, metric.y_title, height=560)
    else:
        fig = F.new_figure(metric.title, metric.y_title)
    rows: list[dict[str, Any]] = []
    firsts: list[Band] = []
    marks = [(r["n"], int(r["tick"])) for r in interventions_of_arms(arms)]
    # the outcome just before each intervention: the baseline and what the earlier ones did
    checkpoints = [(f"before #{n}", t - 1) for n, t in marks if 0 < t <= ref.ticks]
    for a, arm in enumerate(arms):
        for s, (name, make) in enumerate(metric.series):
            raw = arm_band(arm, make)
            band = within_unit(raw) if metric.y_range == SHARE_RANGE else raw  # a share's range
            label = f"{arm.label} · {name}" if several else name
            color = F.PALETTE[a if several else s % len(F.PALETTE)]
            if not several and name == "all agents" and len(metric.series) > 1:
                color = "#222222"  # the overall curve in black above its breakdowns
            dash = DASHES[s % len(DASHES)] if several else None
            if name.startswith("spread"):
                dash = "dot"
            F.add_band(fig, ref, band, label, color, row=1 if several else None, col=1, dash=dash)
            rows.append(_headline(ref, label, band, checkpoints))
            if s == 0:
                firsts.append(raw)  # differences from the intervals as computed, not as drawn
    if several:
        for a in range(1, len(arms)):
            diff = _arm_difference(metric, arms[0], arms[a], firsts[0], firsts[a])
            label = f"{arms[a].label} − {arms[0].label}"
            F.add_band(fig, ref, diff, label, F.PALETTE[a], row=2, col=1, dash="dot")
            name = f"difference: {label} ({metric.series[0][0]})"
            rows.append(_headline(ref, name, diff, checkpoints))
        fig.add_hline(y=0, line={"color": "#444", "width": 1}, row=2, col=1)
        fig.update_yaxes(title_text=metric.y_title, row=1, col=1, automargin=True)
        fig.update_yaxes(title_text="difference", row=2, col=1, automargin=True)
        F.time_axis(fig, ref, row=2, col=1)
        fig.update_xaxes(title_text="", row=1, col=1)
        if metric.y_range:
            fig.update_yaxes(range=list(metric.y_range), row=1, col=1)
    else:
        F.time_axis(fig, ref)
        if metric.y_range:
            fig.update_yaxes(range=list(metric.y_range))
    F.intervention_lines(fig, ref, marks=marks)
    return fig, rows


def _arm_difference(metric: Metric, ref: Arm, arm: Arm, ref_band: Band, band: Band) -> Band:
    """Arm minus reference: paired per agent (then over seeds) when the arms share seed and
    population and the metric has per-agent values; else the difference of independent means."""
    from societas.cluster.report.effects import shares_seed_and_population

    seeds = {int(r.config.get("seed", 0)): r for r in ref.runs}
    pairs = [(r, seeds[int(r.config.get("seed", 0))]) for r in arm.runs
             if int(r.config.get("seed", 0)) in seeds]  # fmt: skip
    if (
        metric.per_agent is not None
        and pairs
        and len(pairs) == len(arm.runs)
        and all(shares_seed_and_population(a, b) for a, b in pairs)
    ):
        return paired_band(pairs, metric.per_agent)
    return difference(ref_band, band)


def _headline(
    run: RunData, label: str, band: Band, checkpoints: list[tuple[str, int]]
) -> dict[str, Any]:
    m = band.mean
    if not np.any(np.isfinite(m)):
        return {"series": label, "final": None, "at": {}}
    peak, low = int(np.nanargmax(m)), int(np.nanargmin(m))
    at = {
        f"{name} ({run.tick_label(t)})": f"{_r(m[t])} [{_r(band.lo[t])}, {_r(band.hi[t])}]"
        for name, t in checkpoints
        if t < m.size
    }
    return {
        "at": at,
        "series": label,
        "final": _r(m[-1]),
        "final_lo": _r(band.lo[-1]),
        "final_hi": _r(band.hi[-1]),
        "peak": _r(m[peak]),
        "peak_at": run.tick_label(int(band.ticks[peak])),
        "low": _r(m[low]),
        "low_hi": _r(band.hi[low]),
        "low_at": run.tick_label(int(band.ticks[low])),
        "interval_over": band.over,
    }


def _r(x: float) -> float | None:
    """Four significant digits (a table of headline numbers, not a data dump)."""
    return float(f"{float(x):.4g}") if np.isfinite(x) else None
