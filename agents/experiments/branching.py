"""Switch a running group to another scenario at a tick boundary (a branch going live):
blocks rebuilt from the new scenario, interventions re-selected with the same seeded salts
(index in the list), population and agent state untouched."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from societas.agents.blocks import default_blocks
from societas.agents.experiments.custom import import_blocks

if TYPE_CHECKING:
    from societas.agents.runtime.engine import GroupEngine
    from societas.agents.scenario import ScenarioConfig


def apply_scenario(engine: GroupEngine, scenario: ScenarioConfig) -> None:
    """From the next tick on, `engine` runs `scenario` (same seed, population and clock)."""
    assert engine.population is not None, "call setup() first"
    engine.scenario = scenario
    blocks = default_blocks(scenario) + import_blocks(scenario)
    for agent in engine.agents.values():
        agent.blocks = blocks
    mine = set(engine.agent_ids)
    events = defaultdict(list)
    for n, iv in enumerate(scenario.interventions):
        events[iv.tick].append((iv, engine.population.select(iv.select, n, scenario.seed) & mine))
    engine.events_at = events
    threshold = scenario.cognition.reflection_threshold
    engine.reflector.config = engine.reflector.config.model_copy(update={"threshold": threshold})
