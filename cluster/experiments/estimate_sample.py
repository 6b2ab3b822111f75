"""The samples `societas estimate` calibrates on: the scenario with fewer agents (and, for a
run too long to count whole, fewer whole days) that keeps every survey and intervention, with
notes saying how each was scaled or moved."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from societas.agents.environment import SimTime
from societas.agents.experiments.checks import SURVEY_SALT, tick_at
from societas.agents.experiments.schedule import ticks_of
from societas.agents.llm.config import LLMConfig
from societas.agents.scenario import ScenarioConfig, ScenarioConfigError, load_scenario

COUNT_BUDGET = 50_000  # agent-ticks of the rules count runs, every arm (a baseline: as many again)
MIN_SAMPLE = 100  # fewer agents meet friends more often than a whole town's (see default_sample)


def default_sample(agents: int) -> int:
    """A tenth of the agents, at least 100 and at most 2,000 (never more than all).

    Per-agent social calls depend on the population's size (in a small town more of the
    people one meets are friends, and friends talk more), so a sample is never tiny."""
    return min(agents, max(MIN_SAMPLE, min(2000, agents // 10)))


@dataclass
class Plan:
    """Agents and ticks of the rules count runs, and how they stand for the whole run."""

    agents: int
    ticks: int
    notes: list[str] = field(default_factory=list)


def plan_counts(sc: ScenarioConfig, sample: int | None, runs: int) -> Plan:
    """The count runs' size: every tick of the run when `runs` x agents x ticks fits
    COUNT_BUDGET (with fewer agents, down to MIN_SAMPLE, when no sample is asked for), else
    as many whole days as fit."""
    n, ticks = sc.agents.count, sc.ticks
    agents = min(n, sample or default_sample(n))
    if sample is None and agents * ticks * runs > COUNT_BUDGET:
        agents = max(min(n, MIN_SAMPLE), min(agents, COUNT_BUDGET // (ticks * runs)))
    span = ticks
    if agents * ticks * runs > COUNT_BUDGET:
        days = max(1, COUNT_BUDGET // (agents * runs * sc.ticks_per_day))
        span = min(ticks, days * sc.ticks_per_day)
    who = f"all {n} agents" if agents == n else f"{agents} of the {n:,} agents (x{n / agents:.3g})"
    when = f"all {ticks} ticks" if span == ticks else f"the first {span} of {ticks} ticks"
    scaled = "" if span == ticks else f" (x{ticks / span:.3g})"
    each = " of each arm" if runs > 1 else ""
    notes = [f"calls counted on {who} over {when}{scaled}{each}, on the rules policy"]
    return Plan(agents=agents, ticks=span, notes=notes)


def survey_asks(sc: ScenarioConfig) -> int:
    """Answers the run's surveys ask for: each survey's selected agents x its questions."""
    if not sc.surveys:
        return 0
    from societas.agents.population import population_for

    pop = population_for(sc)
    return sum(
        len(pop.select(s.select, SURVEY_SALT + i, sc.seed)) * len(s.questions)
        for i, s in enumerate(sc.surveys)
    )


def one_off(sc: ScenarioConfig) -> list[int]:
    """The interventions that fire once in the run (no `every`, or none left to fire again
    before `until` or the end): their calls happen once, not in every span counted."""
    return [i for i, iv in enumerate(sc.interventions) if len(ticks_of(iv, sc)) == 1]


def sampled(
    sc: ScenarioConfig,
    agents: int,
    ticks: int,
    llm: LLMConfig,
    folder: Path,
    surveys_at: int | None = None,
    without: Collection[int] = (),
) -> tuple[ScenarioConfig, list[str]]:
    """`sc` with `agents` agents over `ticks` ticks on `llm`, and notes on what changed.

    Places and the isolated agents keep their share of the agents; selectors by count are
    scaled to the sample, by ids kept where in it. Surveys and interventions after the last
    tick move to the same time of a day inside it (all surveys to tick `surveys_at` when
    given, interventions past it are then left out), an intervention that fires once in the
    run firing once there too; the interventions numbered in `without` are left out (the
    baseline one-off events are counted against); a selector that matches no agent of the
    sample leaves its survey or intervention out."""
    n = sc.agents.count
    data = sc.model_dump(mode="python")
    notes: list[str] = []
    data.update(ticks=ticks, groups=1, arms=[], sweep={}, llm=llm.model_dump(mode="python"))
    data["agents"]["count"] = agents
    if data["map"]["per_agents"] is None:  # as many agents per place as in the run
        data["map"]["per_agents"] = n
    net = data["network"]
    if net["isolated"]:  # the same share of agents in their own small world
        net["isolated"] = min(max(1, round(net["isolated"] * agents / n)), max(0, agents - 3))
    net["k"] = min(net["k"], max(2, agents - net["isolated"] - 1))
    if net.get("edges") is not None and agents < n:
        net["edges"] = _edges_within(Path(net["edges"]), agents, folder)
    if data["analysis"].get("baseline_tick") is not None:
        data["analysis"]["baseline_tick"] = min(data["analysis"]["baseline_tick"], ticks - 1)
    once = set(one_off(sc))
    moved, recurring, kept = [], [], []
    after: dict[int, int] = {}  # one-off intervention -> ticks of the count run after it
    for i, iv in enumerate(data["interventions"]):
        if i in without:
            continue
        if iv["tick"] >= ticks:
            if surveys_at is not None:
                continue
            iv["tick"] %= ticks
            iv["until"] = None
            if i in once:
                iv["every"] = None
            else:
                recurring.append(i)
            moved.append(i)
        kept.append(iv)
        if i in once:
            after[i] = ticks - iv["tick"]
    data["interventions"] = kept
    for sv in data["surveys"]:
        tick = tick_at(sc, sv["day"], sv["hour"])
        target = surveys_at if surveys_at is not None else tick % ticks
        if target != tick:
            at = SimTime.of(target, sc.tick_minutes * 60.0, sc.start_hour)
            sv["day"], sv["hour"] = at.day, at.hour
    for where in (*data["interventions"], *data["surveys"]):
        where["select"] = _select_within(where["select"], agents, n)
    if moved:
        again = (
            f"; {recurring} recur in the run and are scaled with the count runs "
            f"(x{sc.ticks / ticks:.3g})"
            if recurring
            else ""
        )
        notes.append(
            f"interventions {moved} fire after tick {ticks - 1}: moved to the same time of "
            f"day inside the count runs{again}"
        )
    if after and ticks < sc.ticks and surveys_at is None:
        least, most = min(after.values()), max(after.values())
        span = f"{least}" if least == most else f"{least}-{most}"
        notes.append(
            f"what the one-off interventions {sorted(after)} set off is counted over the {span} "
            "ticks after them in the count runs, not beyond"
        )
    return _validated(data, notes), notes


def _select_within(sel: dict[str, Any], agents: int, n: int) -> dict[str, Any]:
    """A selector for `agents` of the `n`: a count scaled, ids kept where in the sample."""
    sel = dict(sel)
    if sel.get("count") is not None:
        sel["count"] = min(agents, max(1, round(sel["count"] * agents / n)))
    if sel.get("ids"):
        sel["ids"] = [i for i in sel["ids"] if i < agents] or [sel["ids"][0] % agents]
    return sel


def _edges_within(path: Path, agents: int, folder: Path) -> str:
    """A CSV copy of the edge list (CSV or Parquet) with the ties among the first `agents`."""
    import pyarrow.compute as pc
    from pyarrow import csv as pa_csv

    if path.suffix.lower() == ".csv":
        table = pa_csv.read_csv(path)
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    inside = pc.and_(pc.less(table["source"], agents), pc.less(table["target"], agents))
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"edges-{agents}.csv"
    pa_csv.write_csv(table.filter(inside), out)
    return str(out)


def _validated(data: dict[str, Any], notes: list[str]) -> ScenarioConfig:
    """The sample validated; a survey or intervention whose selector matches no agent of
    the sample is left out (and noted) rather than failing the estimate."""
    try:
        return load_scenario(data)
    except ScenarioConfigError as err:
        empty = {
            tuple(path.split(".")[:2])
            for path, msg in err.problems
            if path.endswith(".select") and msg.startswith("matches no agent")
        }
        if not empty or len(empty) != len(err.problems):
            raise
    for kind in ("interventions", "surveys"):
        drop = {int(i) for k, i in empty if k == kind}
        if drop:
            notes.append(
                f"{kind} {sorted(drop)} left out of the count runs: no agent of the sample "
                "matches the selector"
            )
        data[kind] = [x for i, x in enumerate(data[kind]) if i not in drop]
    return load_scenario(data)
