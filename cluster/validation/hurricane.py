"""AgentSociety's hurricane study: activity relative to a pre-storm day, by storm phase."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from societas.cluster.validation.measured import Measured
from societas.cluster.validation.suite import CONFIGS, Suite
from societas.cluster.validation.tables import RunTables

AWAY = ("home", "shelter")  # activity: an agent anywhere but at home or in a shelter
DEFINITION = (
    "activity: share of agents away from home and shelter per tick, summed over the phase and "
    "divided by the same clock hours of the first (pre-storm) day"
)


def _phase_ticks(run: RunTables) -> dict[str, tuple[int, int]]:
    """before: warning to landfall; at_landfall: landfall to all clear; after: to the end."""
    events = [i for i in run.scenario.interventions if i.kind == "event"]
    warning = next((i.tick for i in events if i.trust_gated), None)
    landfall = next((i.tick for i in events if i.danger and not i.trust_gated), None)
    clear = next((i.tick for i in events if i.all_clear), None)
    end = run.scenario.ticks
    phases: dict[str, tuple[int, int]] = {}
    if warning is not None and landfall is not None:
        phases["before_landfall"] = (warning, landfall)
    if landfall is not None:
        phases["at_landfall"] = (landfall, clear if clear is not None else end)
    if clear is not None and clear < end:
        phases["after"] = (clear, end)
    return phases


def measure(runs: Mapping[str, RunTables]) -> dict[str, Measured]:
    """Activity ratio per phase against the first day's activity at the same clock hours; the
    landfall ratio is compared both with AgentSociety's simulated figure and the real visits."""
    run = runs["storm"]
    per_day = round(24 * 60 / run.scenario.tick_minutes)
    state = run.table("agent_state")
    names = {"before_landfall": "activity_before_landfall", "at_landfall": "activity_at_landfall"}
    names["after"] = "visits_after_real"
    if state.empty or run.scenario.ticks <= per_day:
        gap = Measured(None, "the run has no storm days after the first")
        return dict.fromkeys([*names.values(), "visits_at_landfall_real"], gap)
    away = ~state["place_kind"].isin(AWAY)
    share = away.groupby(state["tick"]).mean().reindex(range(run.scenario.ticks), fill_value=0.0)
    activity = share.to_numpy(dtype=float)
    baseline = activity[:per_day]
    out: dict[str, Measured] = {}
    phases = _phase_ticks(run)
    for phase, metric in names.items():
        if phase not in phases or phases[phase][0] < per_day:
            out[metric] = Measured(None, "the phase does not fall after the pre-storm day")
            continue
        ticks = np.arange(*phases[phase])
        base = float(baseline[ticks % per_day].sum())
        value = float(activity[ticks].sum()) / base if base > 0 else None
        out[metric] = Measured(value, DEFINITION)
    out["visits_at_landfall_real"] = out["activity_at_landfall"]
    return out


SUITE = Suite(
    name="hurricane",
    config=CONFIGS / "hurricane.yaml",
    default_agents=200,
    max_agents=None,
    conditions={"storm": {}},
    measure=measure,
)
