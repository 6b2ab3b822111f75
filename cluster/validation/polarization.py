"""AgentSociety's polarization protocol: attitude change under control, echo chamber and
exposure to opposing views."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from societas.cluster.validation.measured import Measured
from societas.cluster.validation.suite import CONFIGS, Suite
from societas.cluster.validation.tables import RunTables

TOPIC = "gun control"
MIDPOINT = 5.0  # the neutral point of the 0..10 attitude scale
TIES = 8  # ties per agent in the opposing network, as the generated network's k
START = (3.0, 7.0)  # the paper's starting attitudes, half of the agents each
TICKS = 144  # three simulated days of 30 minutes, as the paper's runs
START_NOTE = "every agent starts at 3 or 7 (even odds) and runs three days, as in the paper"
OPPOSING_NOTE = (
    "opposing views: each agent's ties (network.edges) all lead to the other side of the "
    "midpoint, posts reach friends only and none is ignored"
)
DEFINITIONS = (
    "more polarized: same side of the midpoint (5) and further from it at the end; more "
    "moderate: closer to it; flipped: on the other side at the end; unchanged: as far from it"
)
SHARES = ("more_polarized", "more_moderate", "flipped", "unchanged")


def changes(run: RunTables) -> dict[str, float] | None:
    """Shares of agents more polarized, more moderate, flipped and unchanged between first and
    last attitude on the topic; None when the run recorded no attitudes."""
    a = run.table("attitudes")
    if a.empty:
        return None
    a = a[a["topic"] == TOPIC].sort_values(["agent_id", "tick"])
    if a.empty:
        return None
    first = a.groupby("agent_id")["value"].first() - MIDPOINT
    last = a.groupby("agent_id")["value"].last() - MIDPOINT
    flipped = (first * last) < 0
    same = ~flipped
    more = same & (last.abs() > first.abs())
    less = same & (last.abs() < first.abs())
    kept = same & (last.abs() == first.abs())
    n = len(first)
    return {
        "more_polarized": float(more.sum()) / n,
        "more_moderate": float(less.sum()) / n,
        "flipped": float(flipped.sum()) / n,
        "unchanged": float(kept.sum()) / n,
    }


def measure(runs: Mapping[str, RunTables]) -> dict[str, Measured]:
    """The paper's four shares per condition."""
    out: dict[str, Measured] = {}
    for condition in ("control", "echo_chamber", "opposing"):
        shares = changes(runs[condition])
        note = f"{DEFINITIONS}; {START_NOTE}"
        note += "; " + OPPOSING_NOTE if condition == "opposing" else ""
        for key in SHARES:
            value = None if shares is None else shares[key]
            out[f"{condition}_{key}"] = Measured(value, note)
    return out


def _starting(seed: int, agents: int, folder: Path) -> tuple[np.ndarray, Path]:
    """The paper's start: each agent at 3 or 7 with even odds, as a profiles file."""
    values = np.random.default_rng(seed).choice(START, size=agents)
    profiles = folder / "profiles.csv"
    rows = "".join(f"{i},{v:.1f}\n" for i, v in enumerate(values))
    profiles.write_text(f"id,attitude.{TOPIC}\n{rows}", encoding="utf-8")
    return values, profiles


def _condition(seed: int, agents: int, folder: Path, rest: dict[str, Any]) -> dict[str, Any]:
    _, profiles = _starting(seed, agents, folder)
    return {"ticks": TICKS, "agents": {"profiles": str(profiles)}, **rest}


def control(seed: int, agents: int, folder: Path) -> dict[str, Any]:
    """Free discussion: a mixed network, posts reach random readers."""
    rest = {"network": {"homophily": 0.0}, "exposure": {"echo_chamber": False}}
    return _condition(seed, agents, folder, rest)


def echo_chamber(seed: int, agents: int, folder: Path) -> dict[str, Any]:
    """Like-minded ties (homophily on the attitude), posts reach friends only."""
    rest = {
        "network": {"homophily": 0.9, "homophily_on": "attitude"},
        "exposure": {"echo_chamber": True},
    }
    return _condition(seed, agents, folder, rest)


def opposing(seed: int, agents: int, folder: Path) -> dict[str, Any]:
    """The paper's start and a network whose every tie crosses the midpoint."""
    values, profiles = _starting(seed, agents, folder)
    rng = np.random.default_rng(seed + 1)
    above = np.flatnonzero(values > MIDPOINT)
    below = np.flatnonzero(values < MIDPOINT)
    pairs: set[tuple[int, int]] = set()
    if len(above) and len(below):
        for agent in range(agents):
            other = below if values[agent] > MIDPOINT else above
            picks = rng.choice(other, size=min(TIES // 2, len(other)), replace=False)
            pairs |= {(min(agent, int(b)), max(agent, int(b))) for b in picks}
    edges = folder / "edges.csv"
    lines = "".join(f"{a},{b},0.5\n" for a, b in sorted(pairs))
    edges.write_text(f"source,target,weight\n{lines}", encoding="utf-8")
    return {
        "ticks": TICKS,
        "agents": {"profiles": str(profiles)},
        "network": {"edges": str(edges), "homophily": 0.0},
        "exposure": {"echo_chamber": True, "tolerance": 10.0},
    }


SUITE = Suite(
    name="polarization",
    config=CONFIGS / "polarization.yaml",
    default_agents=200,
    max_agents=None,
    conditions={"control": control, "echo_chamber": echo_chamber, "opposing": opposing},
    measure=measure,
)
