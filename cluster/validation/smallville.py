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
DENSITY = (
    "density 2|E| / (|V|(|V|-1)) over the residents, an edge joining two residents who know "
    "each other (undirected)"
)


def _aware(run: RunTables, fact: str, by_tick: int | None = None) -> set[int]:
    k = run.table("knowledge")
    if k.empty:
        return set()
    rows = k[k["fact"] == fact]
    if by_tick is not None:
        rows = rows[rows["tick"] <= by_tick]
    return {int(a) for a in rows["agent_id"]}


def invitations(run: RunTables, before_tick: int) -> list[tuple[int, int, int]]:
    """(tick, inviter, invitee) for each resident first told of the party by another one, in
    conversation or a message, before `before_tick`: the host's invitations and the ones
    passed on by guests, as the paper tells them (§3.4.3)."""
    k = run.table("knowledge")
    if k.empty:
        return []
    rows = k[(k["fact"] == "party") & (k["source"] >= 0) & (k["tick"] < before_tick)]
    return sorted(
        (int(t), int(by), int(to))
        for t, by, to in zip(rows["tick"], rows["source"], rows["agent_id"], strict=True)
        if int(to) != HOST
    )


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
    invites = invitations(run, start)
    with (run.folder / "invitations.csv").open("w", encoding="utf-8") as f:
        f.write("tick,inviter,invitee\n" + "".join(f"{t},{a},{b}\n" for t, a, b in invites))
    invited = {b for _, _, b in invites}
    state = run.table("agent_state")
    came: set[int] = set()
    if not state.empty:
        at = state[(state["tick"] >= start) & (state["tick"] < end)]
        came = {int(a) for a in at[at["place_kind"] == PARTY_PLACE_KIND]["agent_id"]}
    by_host = sum(1 for _, a, _ in invites if a == HOST)
    note = (
        "invited: residents told of the party by another one before it began (the host's "
        "invitations and those passed on; each invitee's first, in the run's invitations.csv); "
        "came: at the cafe during the party"
    )
    note = "; ".join(x for x in (note, moved) if x)
    detail = f"{len(invited & came)}/{len(invited)} (by the host {by_host})"
    out["party_attendance_invited"] = (
        Measured(len(invited & came) / len(invited), note, detail)
        if invited
        else Measured(None, note + "; nobody was invited before the party began")
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
    out["density_start"] = Measured(
        _density(start_pairs, n),
        f"{DENSITY}; at the start: {len(start_pairs)} pairs, the town's ties "
        "(smallville-relations.csv: housemates and acquaintances read from the residents' "
        "descriptions), not the paper's interviews",
    )
    out["density_end"] = Measured(
        _density(start_pairs | met, n),
        f"{DENSITY}; at the end: the starting pairs and every pair that held a conversation",
        f"{len(start_pairs | met)} pairs",
    )
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
