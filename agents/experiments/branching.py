"""Switch a running group to another scenario at a tick boundary (a branch going live):
blocks rebuilt from the new scenario, interventions re-selected with the same seeded salts
(index in the list), population and agent state untouched."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from societas.agents.blocks import default_blocks
from societas.agents.experiments.custom import import_blocks
from societas.agents.experiments.outcomes import OutcomeRecorder
from societas.agents.experiments.schedule import ticks_of

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
        chosen = engine.population.select(iv.select, n, scenario.seed) & mine
        for at in ticks_of(iv, scenario):
            events[at].append((iv, chosen))
    engine.events_at = events
    engine.outcomes = OutcomeRecorder(scenario)
    threshold = scenario.cognition.reflection_threshold
    engine.reflector.config = engine.reflector.config.model_copy(update={"threshold": threshold})


def unreported_totals(engine: GroupEngine) -> dict[str, int]:
    """Running totals gained since the last tick's stats (e.g. LLM calls of the conversation
    rounds after a tick): saved with a checkpoint so the tick after a restore reports them as
    the uninterrupted run does (resumes and branches give the same `llm` rows)."""
    assert engine.memory is not None
    acc = engine.llm.accounting
    models = acc.models.values()
    totals = {
        "llm.requests": sum(m.requests for m in models),
        "llm.prompt_tokens": sum(m.prompt_tokens for m in models),
        "llm.completion_tokens": sum(m.completion_tokens for m in models),
        "llm.fallbacks": acc.events["json.fallback"] + acc.events["json.failed"],
        **{f"mem.{k}": int(v) for k, v in engine.memory.counters.items()},
    }
    for (model, endpoint), c in acc.calls.items():
        key = f"llm.{model}\x00{endpoint}."
        totals.update(
            {key + "requests": c.requests, key + "tokens": c.tokens, key + "errors": c.errors}
        )
    return engine.deltas.unread(totals)


def carry_over(engine: GroupEngine, unreported: dict[str, int]) -> None:
    """After a restore: the next tick's stats also report what the checkpoint left unreported."""
    engine.deltas.owe(unreported)
