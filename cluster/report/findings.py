"""The scenario's findings: outcome curves with 95% bands, arms on the same axes.

Each `Metric` is a titled chart of one or more series, each series a function run -> Band.
Which metrics exist follows the run's config and tables: evacuation when an event brings
danger, income/consumption always, opinions when attitudes were recorded, information reach
when facts were seeded, activity mix and needs always. With several arms, every arm is drawn
on the same axes and a second panel shows each arm minus the first with its interval, paired
per agent when the arms share seed and population; each chart's caption says which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pyarrow as pa
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
    members: str | None = None  # SQL of the agent_ids the series read as MEMBERS
    members_are: str = ""  # who the first series' members are, in words


# The agents a metric's series select (`Metric.members`), registered in each run's database
# before its series are read: the same agents in every arm when the arms share seed and
# population, so that a paired difference compares each agent with itself.
MEMBERS = "series_members"
IN_MEMBERS = f"agent_id IN (SELECT agent_id FROM {MEMBERS})"


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
                "seeds when replicated).",
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
        "Dashed lines: interventions (numbers as in the interventions table).",
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
    out = []
    for col, title, unit in (
        ("income", "Monthly income", "currency units / month"),
        ("consumption", "Monthly consumption", "currency units / month"),
        ("work_hours", "Planned work hours", "hours / day"),
    ):
        where = IN_MEMBERS if policy else "true"
        metric = Metric(
            col,
            title,
            unit,
            "Mean per tick with its 95% interval.",
            [("all agents", partial(agent_band, expr=col))],
            skip_if_flat=not policy,
            per_agent=f"SELECT tick, agent_id, {col}::DOUBLE AS v FROM agent_state WHERE {where}",
        )
        if policy:
            metric.series = [
                ("recipients", partial(agent_band, expr=col, where=IN_MEMBERS)),
                ("others", partial(agent_band, expr=col, where=f"NOT ({IN_MEMBERS})")),
            ]
            metric.members = (
                "SELECT DISTINCT agent_id FROM agent_state WHERE transfers > 0 "
                "AND tick = (SELECT max(tick) FROM agent_state)"
            )
            metric.members_are = "agents with a transfer at the end of the run"
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
                per_agent=f"SELECT tick, agent_id, value AS v FROM attitudes WHERE {cond}",
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


def metric_figure(metric: Metric, arms: list[Arm]) -> tuple[Any, list[dict[str, Any]], str]:
    """The chart of one metric over all arms (+ a difference panel), its headline rows and its
    caption (what the bands are and, with several arms, what the lower panel is), over the
    ticks every run has."""
    ref = arms[0].first
    several = len(arms) > 1
    span = min(r.ticks for a in arms for r in a.runs)
    pairs = [_pairs(arms[0], arm) for arm in arms[1:]]
    shared = several and all(p is not None for p in pairs)
    _register_members(metric, arms, shared)
    if several:
        fig = make_subplots(
            rows=2, cols=1, shared_xaxes=True, row_heights=[0.65, 0.35], vertical_spacing=0.08
        )
        F.style(fig, metric.title, metric.y_title, height=560)
    else:
        fig = F.new_figure(metric.title, metric.y_title)
    rows: list[dict[str, Any]] = []
    firsts: list[Band] = []
    marks = [(r["n"], int(r["tick"])) for r in interventions_of_arms(arms) if r["tick"] < span]
    checkpoints = _checkpoints(marks)
    for a, arm in enumerate(arms):
        for s, (name, make) in enumerate(metric.series):
            raw = _cut(arm_band(arm, make), span)
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
    caption = " ".join([metric.caption, _members_words(metric, several, shared)]).strip()
    if several:
        lowers = []
        for a in range(1, len(arms)):
            diff, how = _arm_difference(metric, pairs[a - 1], shared, firsts[0], firsts[a])
            label = f"{arms[a].label} − {arms[0].label}"
            lowers.append((label, how))
            F.add_band(fig, ref, _cut(diff, span), label, F.PALETTE[a], row=2, col=1, dash="dot")
            name = f"difference: {label} ({metric.series[0][0]})"
            rows.append(_headline(ref, name, _cut(diff, span), checkpoints))
        caption += " " + _lower_words(metric.series[0][0], lowers)
        fig.add_hline(y=0, line={"color": "#444", "width": 1}, row=2, col=1)
        fig.update_yaxes(title_text=metric.y_title, row=1, col=1, automargin=True)
        fig.update_yaxes(title_text="difference", row=2, col=1, automargin=True)
        fig.update_xaxes(title_text="", row=1, col=1)
        if metric.y_range:
            fig.update_yaxes(range=list(metric.y_range), row=1, col=1)
    elif metric.y_range:
        fig.update_yaxes(range=list(metric.y_range))
    shortest = min((r for a in arms for r in a.runs), key=lambda r: r.ticks)
    F.time_axis(fig, shortest, row=2 if several else None, col=1 if several else None)
    F.intervention_lines(fig, ref, marks=marks)
    return fig, rows, caption


def _checkpoints(marks: list[tuple[int, int]]) -> list[tuple[str, int]]:
    """The tick just before each intervention tick (the baseline and what the earlier ones
    did), one column per tick naming every intervention there: `before #1, #2`."""
    before: dict[int, list[str]] = {}
    for n, tick in sorted(marks, key=lambda m: m[1]):
        if tick > 0:
            before.setdefault(tick - 1, []).append(f"#{n}")
    return [(f"before {', '.join(numbers)}", tick) for tick, numbers in before.items()]


def _cut(band: Band, span: int) -> Band:
    """The band's first `span` ticks (the ticks every run compared has)."""
    return Band(band.ticks[:span], band.mean[:span], band.lo[:span], band.hi[:span],
                band.n[:span], band.over, band.share)  # fmt: skip


def _pairs(ref: Arm, arm: Arm) -> list[tuple[RunData, RunData]] | None:
    """(arm run, reference run) of each seed when every run of `arm` has a reference run of
    its seed with the same population; None when the arms cannot be paired per agent."""
    from societas.cluster.report.effects import seed_pairs

    pairs = seed_pairs(ref, arm)
    return pairs if pairs and len(pairs) == len(arm.runs) else None


def _register_members(metric: Metric, arms: list[Arm], shared: bool) -> None:
    """Register MEMBERS in every run: with arms sharing seed and population, the agents that
    any run of that seed selects (the same agents in every arm); else each run's own."""
    if metric.members is None:
        return
    runs = [r for a in arms for r in a.runs]
    own = [{int(row[0]) for row in r.rows(metric.members)} for r in runs]
    by_seed: dict[int, set[int]] = {}
    for run, ids in zip(runs, own, strict=True):
        by_seed.setdefault(run.seed, set()).update(ids)
    for run, ids in zip(runs, own, strict=True):
        chosen = by_seed[run.seed] if shared else ids
        run.db.register(MEMBERS, pa.table({"agent_id": pa.array(sorted(chosen), pa.int64())}))


def _members_words(metric: Metric, several: bool, shared: bool) -> str:
    """Who the first series' members are in each arm (say it before reading a comparison)."""
    if metric.members is None:
        return ""
    name, who = metric.series[0][0], metric.members_are
    if not several:
        return f"{name.capitalize()}: {who}; others: the rest."
    if shared:
        return (
            f"{name.capitalize()}: {who} in any arm, the same agents in every arm (the arms "
            "share seed and population); others: the rest."
        )
    return f"{name.capitalize()}: {who}, each run's own; others: the rest."


def _arm_difference(
    metric: Metric,
    pairs: list[tuple[RunData, RunData]] | None,
    shared: bool,
    ref_band: Band,
    band: Band,
) -> tuple[Band, str]:
    """Arm minus reference and how it was computed: paired per agent (then over seeds) when
    the arms share seed and population and the metric has per-agent values (and, for a
    series of members, every arm does: the same members in each); else the difference of
    independent means (of independent shares within one run)."""
    if metric.per_agent is None:
        why = "this series has no per-agent values"
    elif pairs is None:
        why = "the arms do not share seed and population"
    elif metric.members is not None and not shared:
        name = metric.series[0][0]
        why = f"not every arm shares seed and population, so each run has its own {name}"
    else:
        diff = paired_band(pairs, metric.per_agent)
        if len(pairs) == 1:
            return diff, (
                "paired per agent (the arms share seed and population): the mean of each "
                "agent's own difference, with a t interval over the agents of the one run"
            )
        return diff, (
            "paired per agent within each seed (the arms share seed and population), then "
            f"the mean over the {len(pairs)} seeds with a t interval over seeds"
        )
    if ref_band.share and band.share:
        how = "the difference of the two shares with Newcombe's interval for independent shares"
    elif band.over.startswith("seeds"):
        how = (
            "the difference of the arms' means over seeds, its interval combining the two "
            "arms' intervals as independent"
        )
    else:
        how = (
            "the difference of the two means, its interval combining the two arms' intervals "
            "over agents as independent"
        )
    return difference(ref_band, band), f"unpaired ({why}): {how}"


def _lower_words(series: str, lowers: list[tuple[str, str]]) -> str:
    """The caption of the lower panel: which difference of which series, computed how."""
    hows = list(dict.fromkeys(how for _, how in lowers))
    if len(hows) == 1:
        names = " and ".join(label for label, _ in lowers)
        return f"Lower panel: {names} ({series}), {hows[0]}."
    parts = "; ".join(f"{label} ({series}), {how}" for label, how in lowers)
    return f"Lower panel: {parts}."


def _headline(
    run: RunData, label: str, band: Band, checkpoints: list[tuple[str, int]]
) -> dict[str, Any]:
    """A series' numbers for the table under its chart (None where it has no value)."""
    m = band.mean
    row: dict[str, Any] = {
        "series": label,
        "at": {f"{name} ({run.tick_label(t)})": _with_interval(band, t) for name, t in checkpoints},
        "final": None,
        "final_lo": None,
        "final_hi": None,
        "peak": None,
        "peak_at": None,
        "low": None,
        "low_hi": None,
        "low_at": None,
        "interval_over": band.over,
    }
    if not np.any(np.isfinite(m)):
        return row
    peak, low = int(np.nanargmax(m)), int(np.nanargmin(m))
    return row | {
        "final": _r(m[-1]),
        "final_lo": _r(band.lo[-1]),
        "final_hi": _r(band.hi[-1]),
        "peak": _r(m[peak]),
        "peak_at": run.tick_label(int(band.ticks[peak])),
        "low": _r(m[low]),
        "low_hi": _r(band.hi[low]),
        "low_at": run.tick_label(int(band.ticks[low])),
    }


def _with_interval(band: Band, tick: int) -> str:
    """`0.55 [0.51, 0.59]`; `1.78 (no interval)` without one; a dash without a value."""
    if tick >= band.mean.size or not np.isfinite(band.mean[tick]):
        return "—"
    mean, lo, hi = band.mean[tick], band.lo[tick], band.hi[tick]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{_r(mean)} (no interval)"
    return f"{_r(mean)} [{_r(lo)}, {_r(hi)}]"


def _r(x: float) -> float | None:
    """Four significant digits (a table of headline numbers, not a data dump)."""
    return float(f"{float(x):.4g}") if np.isfinite(x) else None
