"""The `cognitive` profile (seed 004): sensory buffer, triggers, working memory, facts at
recall, meta-cognition, natural decay, logs — on a real group memory."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from societas.agents.scenario import ScenarioConfigError, load_scenario
from societas.memory import GroupMemoryConfig
from societas.memory.architectures.cognitive import (
    CognitiveConfig,
    CognitiveState,
    Strategy,
    Trigger,
    rules_metacognition,
)
from societas.memory.model.records import SearchRequest

HOUR = 3600.0


def test_seed_cadences_are_the_defaults():
    cfg = CognitiveConfig()
    assert (cfg.attention.every, cfg.consolidation.every, cfg.metacognition.every) == (10, 50, 100)
    assert cfg.attention.importance_at == 0.8  # important event → observation (seed T3)
    assert cfg.consolidation.every_hours == 24.0  # time interval → consolidation (seed T2)
    assert cfg.metacognition.capacity == 20  # capacity → reflection (seed T4)
    assert cfg.decay_per_day == 0.99


def test_sensory_buffer_never_exceeds_n_and_attention_every_n():
    state = CognitiveState(CognitiveConfig(sensory_buffer_size=3, attention={"every": 2}))
    batches = []
    for i in range(11):
        fired = state.perceive(f"event {i}")
        assert len(state.sensory) <= 3
        if fired is not None:
            batches.append(fired)
    assert list(state.sensory) == ["event 8", "event 9", "event 10"]
    assert batches == [([f"event {i}", f"event {i + 1}"], "count") for i in range(0, 10, 2)]
    assert state.observations == 5


@pytest.mark.parametrize(
    ("trigger", "events", "fires_at", "why"),
    [
        ({"every": 3}, [(0, None)] * 5, 2, "count"),
        ({"capacity": 2}, [(0, None)] * 3, 1, "capacity"),
        ({"every": 9, "importance_at": 0.8}, [(0, 0.3), (0, 0.79), (0, 0.8)], 2, "importance"),
        ({"every": 9, "every_hours": 1}, [(0, None), (0.5, None), (1.0, None)], 2, "interval"),
    ],
)
def test_each_attention_trigger_fires_when_its_condition_holds(trigger, events, fires_at, why):
    state = CognitiveState(CognitiveConfig(attention=trigger))
    fired = [state.perceive(f"e{i}", h * HOUR, imp) for i, (h, imp) in enumerate(events)]
    first = next(i for i, f in enumerate(fired) if f is not None)
    assert first == fires_at and fired[first] == ([f"e{i}" for i in range(first + 1)], why)


def test_consolidation_and_metacognition_triggers_count_raw_events_and_observations():
    cfg = CognitiveConfig(
        attention={"every": 2},
        consolidation={"every": 6, "every_hours": 10},
        metacognition={"every": 100, "capacity": 2},
    )
    state = CognitiveState(cfg)
    for i in range(3):
        state.perceive(f"e{i}", i * HOUR)
    assert state.due("consolidation", 2 * HOUR) is None  # 3 raw events, 1 observation
    assert state.due("consolidation", 10 * HOUR) == "interval"  # 10 h since the first
    for i in range(3, 6):
        state.perceive(f"e{i}", 3 * HOUR)
    assert state.due("consolidation", 3 * HOUR) == "count"  # 6 raw events
    assert state.due("metacognition", 3 * HOUR) == "capacity"  # 3 observations ≥ 2
    state.clocks["metacognition"].ran(3 * HOUR)
    assert state.due("metacognition", 3 * HOUR) is None


@pytest.mark.parametrize(
    ("cognitive", "path", "value"),
    [
        ({"attention": {"every": -3}}, "memory.cognitive.attention.every", "-3"),
        ({"consolidation": {"every_hours": 0}}, "memory.cognitive.consolidation.every_hours", "0"),
        (
            {"metacognition": {"importance_at": 1.5}},
            "memory.cognitive.metacognition.importance_at",
            "1.5",
        ),
        ({"attention_every": 4}, "memory.cognitive.attention_every", "attention_every"),
        ({"attention": {"evry": 4}}, "memory.cognitive.attention.evry", "evry"),
    ],
)
def test_bad_trigger_or_option_is_one_line_naming_field_and_value(cognitive, path, value):
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario({"memory": {"profile": "cognitive", "cognitive": cognitive}})
    assert len(err.value.problems) == 1
    where, message = err.value.problems[0]
    assert where == path and value in message and "\n" not in message


def test_profile_options_on_the_wrong_profile_are_refused():
    with pytest.raises(ScenarioConfigError, match="only a type with profile 'cognitive'"):
        load_scenario(
            {"memory": {"agent_types": {"trader": {"profile": "finmem", "cognitive": {}}}}}
        )
    with pytest.raises(ScenarioConfigError, match="cognitive: only the profile 'cognitive'"):
        load_scenario({"memory": {"profile": "finmem", "cognitive": {"attention": {"every": 3}}}})
    dumped = GroupMemoryConfig(profile="finmem").model_dump(mode="json")  # defaults round-trip
    assert GroupMemoryConfig.model_validate(dumped).profile == "finmem"
    with pytest.raises(ValidationError, match="working_memory_capacity"):
        GroupMemoryConfig(profile="cognitive", cognitive={"working_memory_capacity": 0})
    with pytest.raises(ValidationError, match=r"attention.capacity \(9\) must not exceed"):
        CognitiveConfig(sensory_buffer_size=4, attention={"capacity": 9})
    with pytest.raises(ValidationError, match="profile"):
        GroupMemoryConfig(profile="telepathic")


def test_working_memory_holds_task_thoughts_and_recalled_memories():
    state = CognitiveState(CognitiveConfig(working_memory_capacity=5, active_thoughts=2))
    state.set_task("bake bread for the fair")
    for i in range(3):
        state.think(f"thought {i}")
    for i in range(6):
        state.hold(f"memory {i}", priority=i % 4, time=float(i))
    # the task first, the two newest thoughts, then the strongest memories in what is left
    assert state.prompt_block() == [
        "[task] bake bread for the fair",
        "[thought] thought 2",
        "[thought] thought 1",
        "[memory] memory 3",
        "[memory] memory 2",
    ]
    assert state.evictions == 4  # memories 0, 1, 4, 5 pushed out or not let in
    state.set_task(None)
    state.hold("memory 9", priority=9, time=9.0)
    assert state.prompt_block()[:3] == [
        "[thought] thought 2",
        "[thought] thought 1",
        "[memory] memory 9",
    ]


def test_semantic_facts_graph_query():
    state = CognitiveState(CognitiveConfig())
    state.learn("Alice", "works_at", "bakery", 1.0)
    state.learn("bakery", "located_in", "harbour", 1.0)
    state.learn("Alice", "works_at", "bakery", 2.0)  # refreshed, not doubled
    state.learn("Carol", "visits", "bakery", 0.5)
    assert state.fact_graph.number_of_edges() == 3
    assert state.facts_about("nobody", limit=5) == []
    # entities named in a text: facts with them as subject or object, newest first
    about = state.facts_about("Where is the Bakery?", limit=5)
    assert [f[:3] for f in about] == [
        ("Alice", "works_at", "bakery"),
        ("bakery", "located_in", "harbour"),
        ("Carol", "visits", "bakery"),
    ]
    assert state.facts_about("the bakery", limit=1)[0][:3] == ("Alice", "works_at", "bakery")
    assert state.facts_about("the harbour at dawn", limit=1)[0][:3] == (
        "bakery",
        "located_in",
        "harbour",
    )
    assert state.facts_about("Alicea", limit=5) == []  # whole words only


def report(**over):
    cfg = CognitiveConfig()
    values = dict(
        agent_id=1,
        novelty=0.7,
        events=16,
        observations=[],
        consolidations=0,
        new_facts=0,
        known_facts=0,
        evictions=0,
        attention=cfg.attention,
        consolidation=cfg.consolidation,
        base=cfg,
    )
    values.update(over)
    from societas.memory.architectures.cognitive import MetaReport

    return MetaReport(**values)


def test_rules_metacognition_by_hand():
    # repetitive perception: attend ⌈10 × 1.25⌉ = 13; all new: ⌊10 × 0.8⌋ = 8
    assert rules_metacognition(report(novelty=0.4)).attention_every == 13
    assert rules_metacognition(report(novelty=0.95)).attention_every == 8
    assert rules_metacognition(report(novelty=0.7)).attention_every is None
    # at most 4 × the configured 10, at least ⌈10 / 4⌉ = 3
    assert (
        rules_metacognition(report(novelty=0.1, attention=Trigger(every=40))).attention_every == 40
    )
    assert rules_metacognition(report(novelty=1.0, attention=Trigger(every=3))).attention_every == 3
    # consolidation: 2 passes, no facts → every 100; 4 facts in 2 passes → every 25
    assert rules_metacognition(report(consolidations=2)).consolidation_every == 100
    assert rules_metacognition(report(consolidations=2, new_facts=4)).consolidation_every == 25
    assert rules_metacognition(report(consolidations=2, new_facts=3)).consolidation_every is None
    text = rules_metacognition(report(novelty=0.4, consolidations=2)).reflection
    assert "repetitive (novelty 0.40 over 16 events)" in text and "2 consolidation passes" in text


@pytest.fixture
async def cognitive(group_factory):
    g = group_factory(
        profile="cognitive",
        cognitive={
            "sensory_buffer_size": 4,
            "attention": {"every": 2},
            "working_memory_capacity": 2,
            "consolidation": {"every": 4},  # every 2 observations
            "metacognition": {"every": 6},  # every 3 observations
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
    assert sorted(f[:3] for f in state.facts_about("harbour", limit=9)) == [
        ("harbour", "has_event", "gull 0"),
        ("harbour", "has_event", "gull 2"),
    ]
    semantic = await g.agent(1).stream.search("harbour has_event", types=["semantic"], top_k=5)
    assert {h.metadata["object"] for h in semantic} == {"gull 0", "gull 2"}
    assert g.cognition.counters["meta"] == 2  # after 6 raw events of each agent
    assert state.prompt_block() == ["[thought] gull 4 / gull 5"]  # the newest observation


async def test_an_llm_metacognition_retunes_attention_and_consolidation(cognitive):
    g = cognitive
    seen = []

    async def llm_reflection(report):
        seen.append(report)
        return {"reflection": "I attend too often.", "attention_every": 3, "consolidation_every": 9}

    g.cognition.metacognition = llm_reflection
    for i in range(6):
        await g.cognition.perceive_many([(1, f"event {i}")])
    state = g.cognition.state(1)
    assert len(seen) == 1 and seen[0].observations == [
        "event 0; event 1.",
        "event 2; event 3.",
        "event 4; event 5.",
    ]
    assert (state.triggers["attention"].every, state.triggers["consolidation"].every) == (3, 9)
    before = state.observations
    for i in range(3):
        await g.cognition.perceive_many([(1, f"later {i}")])
    assert state.observations == before + 1  # now every 3 raw events
    log = g.cognition.log_markdown(1)
    assert "I attend too often. Strategy: attention every 2 → 3; consolidation every 4 → 9." in log
    with pytest.raises(ValidationError, match="attention_every"):
        Strategy.model_validate({"attention_every": 0})
    g.cognition.metacognition = lambda report: {"attention_every": -1}  # out of bounds
    strategy = await g.cognition.reflect(1)
    assert strategy.reflection.startswith("What I perceive is")  # the rules decided
    assert g.cognition.counters["meta_fallbacks"] == 1


async def test_recall_fills_working_memory_within_capacity_and_reconsolidates(cognitive):
    g = cognitive
    s = g.agent(1).stream
    ids = [
        await s.add("event", f"the market sold apples batch {i}", importance=0.4) for i in range(4)
    ]
    requests = [SearchRequest(agent_id=1, query="market apples", top_k=4)]
    (hits,) = await g.cognition.absorb(requests, await g.search_many(requests), "planning")
    assert len(hits) == 4
    prompt = g.cognition.prompt_block(1).splitlines()
    assert len(prompt) == 2  # capacity 2, though 4 memories were recalled
    (rec,) = await s.get_by_ids(hits[0].id)
    assert rec.importance == pytest.approx(0.45) and rec.metadata["recalls"] == ["planning"]
    assert await g.boosts.flush() == 1  # written on the tier schedule, not per recall
    stored = await g.store.retrieve([hits[0].id])
    assert stored[hits[0].id]["importance"] == pytest.approx(0.45)
    assert set(ids) == {h.id for h in hits}


async def test_facts_about_the_query_s_entities_join_the_recall(group_factory):
    g = group_factory(profile="cognitive", cognitive={"working_memory_capacity": 4})
    await g.add_agents({1: {}})
    s = g.agent(1).stream
    await s.add("event", "I walked along the quay", importance=0.4)
    learnt = await g.cognition.learn(
        1, [("Alice", "works at", "the bakery"), ("Bob", "owns", "a boat")]
    )
    request = SearchRequest(agent_id=1, query="what does Alice do", topic="event", top_k=1)
    found = await g.search_many([request])
    (hits,) = await g.cognition.absorb([request], found, "recall")  # the graph adds facts
    facts = [h for h in hits if h.topic == "fact"]
    assert [(h.id, h.text, h.type) for h in facts] == [
        (learnt[0], "Alice works at the bakery", "semantic")
    ]
    assert "[fact] Alice works at the bakery" in g.cognition.prompt_block(1)
    assert "Bob" not in g.cognition.prompt_block(1)
    held = await g.cognition.hold_hits(1, [], "Bob and his boat")
    assert "Bob owns a boat" in [h.text for h in held]


async def test_natural_decay_by_hand_and_refreshed_by_recall(group_factory, backend):
    g = group_factory(backend, profile="cognitive", retrieval={"relevance_weight": 0.0})
    await g.add_agents({1: {}})
    s = g.agent(1).stream
    memory_id = await s.add("event", "the ferry was late", importance=0.5)
    await g.sync_writes()
    g.clock.set(g.clock.day + 2, g.clock.t)
    (hit,) = await s.search("ferry", top_k=1)
    # e^(−2/3) + 0.5 × 0.99² = 0.5134 + 0.4901 = 1.0035 (no decay: 0.99^48 + 0.5 = 1.1173)
    assert hit.id == memory_id
    assert hit.score == pytest.approx(math.exp(-2 / 3) + 0.5 * 0.99**2, abs=1e-4)
    g.clock.set(g.clock.day + 1, g.clock.t)  # the read restarted both clocks a day ago
    (again,) = await s.search("ferry", top_k=1)
    assert again.score == pytest.approx(math.exp(-1 / 3) + 0.5 * 0.99**3, abs=1e-3)
    await g.close()


async def test_layer_logs_export_as_markdown_and_survive_a_checkpoint(cognitive, tmp_path):
    g = cognitive
    g.cognition.extract_facts = lambda texts: [("quay", "has", "gulls")]
    for i in range(6):
        await g.cognition.perceive_many([(1, f"gull {i}")])
    md = g.cognition.log_markdown(1)
    for heading in ("## L2 observations", "## L3 consolidation", "## L4 meta-cognition"):
        assert heading in md
    assert "- **day 0 00:00** (count, 2 events) gull 0; gull 1." in md
    assert "(count) 1 facts from 2 observations: quay has gulls" in md
    assert "Strategy:" in md and "## Working memory" in md
    paths = g.cognition.write_logs(tmp_path / "logs")
    assert [p.name for p in paths] == ["agent-1.md"] and paths[0].read_text() == md
    state = g.cognition.get_state()
    g.cognition.set_state(state)
    assert g.cognition.get_state() == state and g.cognition.log_markdown(1) == md
