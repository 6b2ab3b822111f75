"""Fixtures: a small real GroupEngine (Qdrant Edge + BM25 memory, rules gateway) and a way to
run one agent's block with a hand-made context."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from societas.agents.agent import AgentContext
from societas.agents.environment import EnvironmentView, SimTime
from societas.agents.runtime.engine import GroupEngine
from societas.agents.scenario import load_scenario

SMALL: dict[str, Any] = {
    "name": "unit",
    "ticks": 48,
    "agents": {"count": 12},
    "network": {"k": 4},
    "map": {"workplaces": 2, "shops": 1, "cafes": 1, "parks": 1, "shelters": 1},
    "facts": [{"id": "f1", "text": "The bridge is closed for repairs."}],
    "topics": [{"name": "carbon tax"}],
}


@pytest.fixture
async def engine(tmp_path, bm25_embedder) -> AsyncIterator[GroupEngine]:
    eng = GroupEngine(load_scenario(SMALL), 0, list(range(12)), tmp_path, embedder=bm25_embedder)
    await eng.setup()
    yield eng
    await eng.close()


def make_ctx(
    engine: GroupEngine, agent_id: int, tick: int = 0, inbox=(), events=(), danger: bool = False
) -> AgentContext:
    """A context for one agent at `tick`, with the engine's memory clock set."""
    sc = engine.scenario
    now = SimTime.of(tick, sc.tick_seconds, sc.start_hour)
    engine.memory.clock.set(now.day, now.t)
    return AgentContext(
        agent=engine.agents[agent_id],
        time=now,
        env=EnvironmentView(engine.population.town, now, danger),
        llm=engine.llm,
        scenario=sc,
        population=engine.population,
        results=engine.results,
        reflector=engine.reflector,
        outbox=[],
        inbox=list(inbox),
        events=list(events),
    )
