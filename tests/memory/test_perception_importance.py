"""Cognitive perception in a run's memory writer: a raw event's given importance reaches the
sensory buffer, so attention's important-event trigger fires before its count does."""

from __future__ import annotations

import pytest

from societas.agents.cognition import PendingMemories
from societas.agents.llm.gateway import LLMGateway


@pytest.fixture
async def scholar(group_factory):
    g = group_factory(
        "edge",
        profile="cognitive",
        cognitive={"attention": {"every": 50, "importance_at": 0.8}},
    )
    await g.add_agents({1: {"name": "Ann Lee"}, 2: {"name": "Bob Ray"}})
    yield g
    await g.close()


async def _observations(group, agent_id: int) -> list[str]:
    hits = await group.agent(agent_id).stream.search("storm warning", top_k=10)
    return [h.text for h in hits if h.topic == "observation"]


async def test_an_important_event_fires_attention_and_a_mundane_one_waits(scholar):
    pending = PendingMemories(LLMGateway({"provider": "rules"}))
    await pending.add(scholar.agent(1), "event", "A storm warning was issued", importance=0.9)
    await pending.add(scholar.agent(2), "event", "A storm warning was issued", importance=0.3)
    await pending.add(scholar.agent(2), "event", "The storm warning was repeated")  # rated later
    ids = await pending.flush(scholar)
    assert len(ids) == 1  # agent 1's observation; agent 2's events wait in its buffer
    assert len(await _observations(scholar, 1)) == 1
    assert await _observations(scholar, 2) == []
    assert scholar.cognition.counters["raw_events"] == 3
    assert scholar.cognition.counters["observations"] == 1
