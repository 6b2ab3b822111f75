"""The `cognitive` profile: sensory buffer, attention, working memory, facts, meta-cognition,
reconsolidation — on a real group memory."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from societas.memory import GroupMemoryConfig
from societas.memory.architectures.cognitive import CognitiveConfig, CognitiveState
from societas.memory.model.records import SearchRequest


def test_sensory_buffer_never_exceeds_n_and_attention_every_n():
    state = CognitiveState(CognitiveConfig(sensory_buffer_size=3, attention_every=2))
    batches = []
    for i in range(11):
        batch = state.perceive(f"event {i}")
        assert len(state.sensory) <= 3
        if batch is not None:
            batches.append(batch)
    assert list(state.sensory) == ["event 8", "event 9", "event 10"]
    assert batches == [[f"event {i}", f"event {i + 1}"] for i in range(0, 10, 2)]
    assert state.observations == 5


def test_working_memory_capacity_bounds_the_prompt():
    state = CognitiveState(CognitiveConfig(working_memory_capacity=3))
    for i in range(10):
        state.hold(f"thought {i}", priority=i % 4, time=float(i))
        assert len(state.prompt_block()) <= 3
    # highest priority first, then the most recent among equals
    assert state.prompt_block() == [
        "[thought] thought 7",
        "[thought] thought 3",
        "[thought] thought 6",
    ]


def test_semantic_facts_graph_query():
    state = CognitiveState(CognitiveConfig())
    state.learn("Alice", "works_at", "bakery", 1.0)
    state.learn("bakery", "located_in", "harbour", 1.0)
    state.learn("Alice", "works_at", "bakery", 2.0)  # refreshed, not doubled
    assert state.query("Alice") == [("Alice", "works_at", "bakery")]
    assert state.query("Alice", hops=2) == [
        ("Alice", "works_at", "bakery"),
        ("bakery", "located_in", "harbour"),
    ]
    assert state.query("Alice", relation="located_in", hops=2) == [
        ("bakery", "located_in", "harbour")
    ]
    assert state.query("nobody") == []


def test_bad_cognitive_config_names_the_field():
    with pytest.raises(ValidationError, match="working_memory_capacity"):
        GroupMemoryConfig(profile="cognitive", cognitive={"working_memory_capacity": 0})
    with pytest.raises(ValidationError, match="profile"):
        GroupMemoryConfig(profile="telepathic")


@pytest.fixture
async def cognitive(group_factory):
    g = group_factory(
        profile="cognitive",
        cognitive={
            "sensory_buffer_size": 4,
            "attention_every": 2,
            "working_memory_capacity": 2,
            "consolidate_every": 2,
            "metacognition_every": 3,
        },
    )
    await g.add_agents({1: {}, 2: {}})
    yield g
    await g.close()


async def test_perception_becomes_observations_and_facts(cognitive):
    g = cognitive
    assert g.cognition is not None
    summaries = []

    def summarise(batches):
        summaries.append(len(batches))  # one call for all agents' due batches
        return [" / ".join(b) for b in batches]

    def facts(texts):
        return [("harbour", "has_event", t.split(" / ")[0]) for t in texts]

    g.cognition.summarise = summarise
    g.cognition.extract_facts = facts
    ids = []
    for i in range(6):
        ids += await g.cognition.perceive_many([(1, f"gull {i}"), (2, f"boat {i}")])
        assert all(len(g.cognition.state(a).sensory) <= 4 for a in (1, 2))
    assert summaries == [2, 2, 2]  # every 2 raw events, both agents in one batch
    obs = [r for r in await g.get_by_ids(ids) if r.topic == "observation"]
    assert [r.text for r in obs if r.agent_id == 1] == [
        "gull 0 / gull 1",
        "gull 2 / gull 3",
        "gull 4 / gull 5",
    ]
    state = g.cognition.state(1)
    assert state.query("harbour") == [
        ("harbour", "has_event", "gull 0"),
        ("harbour", "has_event", "gull 2"),
    ]
    semantic = await g.agent(1).stream.search("harbour has_event", types=["semantic"], top_k=5)
    assert {h.metadata["object"] for h in semantic} == {"gull 0", "gull 2"}
    assert g.cognition.counters["meta"] == 2  # observation 3 of each agent


async def test_metacognition_adjusts_attention(cognitive):
    g = cognitive
    g.cognition.metacognition = lambda state: 3
    for i in range(6):
        await g.cognition.perceive_many([(1, f"event {i}")])
    assert g.cognition.state(1).attention_every == 3  # after the 3rd observation
    before = g.cognition.state(1).observations
    for i in range(3):
        await g.cognition.perceive_many([(1, f"later {i}")])
    assert g.cognition.state(1).observations == before + 1


async def test_recall_fills_working_memory_within_capacity_and_reconsolidates(cognitive):
    g = cognitive
    s = g.agent(1).stream
    ids = [
        await s.add("event", f"the market sold apples batch {i}", importance=0.4) for i in range(4)
    ]
    hits = (
        await g.cognition.recall_many(
            [SearchRequest(agent_id=1, query="market apples", top_k=4)], "planning"
        )
    )[0]
    assert len(hits) == 4
    prompt = g.cognition.prompt_block(1).splitlines()
    assert len(prompt) == 2  # capacity 2, though 4 memories were recalled
    (rec,) = await s.get_by_ids(hits[0].id)
    assert rec.importance == pytest.approx(0.45) and rec.metadata["recalls"] == ["planning"]
    stored = await g.store.retrieve([hits[0].id])
    assert stored[hits[0].id]["importance"] == pytest.approx(0.45)
    assert set(ids) == {h.id for h in hits}


def test_novelty_metacognition_attends_less_to_repetition_and_more_to_news():
    from societas.memory.architectures.cognitive import (
        CognitiveConfig,
        CognitiveState,
        novelty_metacognition,
    )

    state = CognitiveState(CognitiveConfig(sensory_buffer_size=4, attention_every=2))
    for _ in range(4):
        state.perceive("the kettle boils")
    assert novelty_metacognition(state) == 3  # repetition: attend less often
    state.adjust_attention(8)
    assert novelty_metacognition(state) is None  # at most 4x the configured interval
    for i in range(4):
        state.perceive(f"news {i}")
    assert novelty_metacognition(state) == 7  # all new: attend more often
    state.adjust_attention(1)
    assert novelty_metacognition(state) is None  # never below 1
