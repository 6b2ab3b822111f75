"""AgentSociety's polarization protocol: attitude change under control and echo chamber."""

from __future__ import annotations

from collections.abc import Mapping

from societas.cluster.validation.measured import Measured
from societas.cluster.validation.suite import CONFIGS, Suite
from societas.cluster.validation.tables import RunTables

TOPIC = "gun control"
MIDPOINT = 5.0  # the neutral point of the 0..10 attitude scale
OPPOSING_GAP = (
    "not measured: exposure only to opposing views is not a scenario feature (exposure: has "
    "echo_chamber and tolerance, no way to send each reader the other side's posts)"
)
DEFINITIONS = (
    "more polarized: same side of the midpoint (5) and further from it at the end; more "
    "moderate: closer to it; flipped: on the other side at the end"
)


def changes(run: RunTables) -> dict[str, float] | None:
    """Shares of agents more polarized, more moderate and flipped between first and last
    attitude on the topic; None when the run recorded no attitudes."""
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
    n = len(first)
    return {
        "more_polarized": float(more.sum()) / n,
        "more_moderate": float(less.sum()) / n,
        "flipped": float(flipped.sum()) / n,
    }


def measure(runs: Mapping[str, RunTables]) -> dict[str, Measured]:
    """The paper's three shares per condition (the opposing condition is not measurable)."""
    out: dict[str, Measured] = {}
    for condition in ("control", "echo_chamber"):
        shares = changes(runs[condition])
        for key in ("more_polarized", "more_moderate", "flipped"):
            value = None if shares is None else shares[key]
            out[f"{condition}_{key}"] = Measured(value, DEFINITIONS)
    for key in ("more_moderate", "flipped"):
        out[f"opposing_{key}"] = Measured(None, OPPOSING_GAP)
    return out


SUITE = Suite(
    name="polarization",
    config=CONFIGS / "polarization.yaml",
    default_agents=200,
    max_agents=None,
    conditions={
        "control": {
            "network": {"homophily": 0.0},
            "exposure": {"echo_chamber": False},
        },
        "echo_chamber": {
            "network": {"homophily": 0.9, "homophily_on": "attitude"},
            "exposure": {"echo_chamber": True},
        },
    },
    measure=measure,
)
