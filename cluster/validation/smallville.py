"""The Generative Agents town: diffusion of two facts, party attendance, relationship density."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from societas.cluster.validation import hallucination
from societas.cluster.validation.measured import Measured
from societas.cluster.validation.suite import CONFIGS, Suite
from societas.cluster.validation.tables import RunTables

HOST, CANDIDATE = 0, 1
PARTY_DAY, PARTY_FROM, PARTY_TO = 1, 17.0, 19.0  # February 14, 5 to 7 pm
PARTY_PLACE_KIND = "cafe"  # the town has one cafe: Hobbs Cafe
RESIDENTS = 25
RELATIONS = CONFIGS / "smallville-relations.csv"


def _aware(run: RunTables, fact: str, by_tick: int | None = None) -> set[int]:
    k = run.table("knowledge")
    if k.empty:
        return set()
    rows = k[k["fact"] == fact]
    if by_tick is not None:
        rows = rows[rows["tick"] <= by_tick]
    return {int(a) for a in rows["agent_id"]}


def _party_window(run: RunTables) -> tuple[int, int, str]:
    """[start, end) ticks of the party, moved to the run's last two hours in a shorter run."""
    start, end = run.tick_of(PARTY_DAY, PARTY_FROM), run.tick_of(PARTY_DAY, PARTY_TO)
    ticks = run.scenario.ticks
    if end <= ticks:
        return start, end, ""
    span = end - start
    return max(0, ticks - span), ticks, "party window moved to the run's last two hours"


def _pairs(ties: Mapping[int, tuple[tuple[int, float], ...]]) -> set[tuple[int, int]]:
    return {(min(a, b), max(a, b)) for a, row in ties.items() for b, _ in row if a != b}


def _density(pairs: set[tuple[int, int]], n: int) -> float:
    return len(pairs) / (n * (n - 1) / 2)


def measure(runs: Mapping[str, RunTables]) -> dict[str, Measured]:
    """Share aware of each fact at start and end, attendance among the invited, density."""
    run = runs["town"]
    n = run.n_agents
    out: dict[str, Measured] = {}
    seeded = "seeded in one resident at tick 0, as in the paper"
    for fact in ("candidacy", "party"):
        out[f"{fact}_aware_start"] = Measured(len(_aware(run, fact, 0)) / n, seeded)
        out[f"{fact}_aware_end"] = Measured(len(_aware(run, fact)) / n)
    start, end, moved = _party_window(run)
    invited = _aware(run, "party", start - 1) - {HOST}
    state = run.table("agent_state")
    came: set[int] = set()
    if not state.empty:
        at = state[(state["tick"] >= start) & (state["tick"] < end)]
        came = {int(a) for a in at[at["place_kind"] == PARTY_PLACE_KIND]["agent_id"]}
    note = "invited: residents who had heard of the party before it began (no invitation list)"
    note = "; ".join(x for x in (note, moved) if x)
    out["party_attendance_invited"] = (
        Measured(len(invited & came) / len(invited), note, f"{len(invited & came)}/{len(invited)}")
        if invited
        else Measured(None, note + "; nobody had heard of the party before it began")
    )
    start_pairs = _pairs(run.population.friends)
    rel = run.table("relationships")
    met = set()
    if not rel.empty:
        talked = rel[rel["talks"] > 0]
        met = {
            (min(a, b), max(a, b))
            for a, b in zip(
                talked["agent_id"].astype(int), talked["other_id"].astype(int), strict=True
            )
            if a != b
        }
    edge = "an edge: a tie of the starting network or a conversation held (undirected)"
    gap = "housemates and acquaintances from smallville-relations.csv, not the paper's interviews"
    out["density_start"] = Measured(_density(start_pairs, n), f"{edge}; start: {gap}")
    out["density_end"] = Measured(_density(start_pairs | met, n), edge)
    out["hallucination_share"] = hallucination.measure(run)
    return out


def town(seed: int, agents: int, folder: Path) -> dict[str, Any]:
    """The full town as configured; fewer residents keep only the relations among them."""
    if agents >= RESIDENTS:
        return {}
    kept = [
        line
        for line in RELATIONS.read_text(encoding="utf-8").splitlines()[1:]
        if line and max(int(x) for x in line.split(",")[:2]) < agents
    ]
    edges = folder / "relations.csv"
    edges.write_text("source,target,weight\n" + "".join(f"{x}\n" for x in kept), "utf-8")
    k = max(2, min(4, agents - 1 - (agents - 1) % 2))
    return {"network": {"edges": str(edges), "k": k}}


SUITE = Suite(
    name="smallville",
    config=CONFIGS / "smallville.yaml",
    default_agents=RESIDENTS,
    max_agents=RESIDENTS,
    conditions={"town": town},
    measure=measure,
)
