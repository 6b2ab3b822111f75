"""Memory profiles per agent type inside one group, and FinMem's access boost kept in RAM
until the tier schedule (no vector-store write per hit)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from societas.memory import GroupMemory, GroupMemoryConfig
from societas.memory.policies.forgetting import finmem_forgetting

DAY = 86_400.0
TYPES = {"trader": {"profile": "finmem"}, "scholar": {"profile": "cognitive"}}


class CountingStore:
    """The group's real vector store, its payload writes counted (calls and ids)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.set_payload_calls: list[list[int]] = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    async def set_payloads(self, updates):
        self.set_payload_calls.extend(list(ids) for ids, _ in updates if ids)
        await self.inner.set_payloads(updates)


def test_unknown_profile_names_fail_with_field_and_value():
    with pytest.raises(ValidationError) as err:
        GroupMemoryConfig(agent_types={"trader": {"profile": "finmen"}})
    assert "agent_types.trader.profile" in str(err.value) and "finmen" in str(err.value)
    with pytest.raises(ValidationError, match="agent_types"):
        GroupMemoryConfig(agent_types={"trader": {"profile": "finmem", "sensory": 3}})
    with pytest.raises(ValidationError, match="only a type with profile 'cognitive'"):
        GroupMemoryConfig(agent_types={"trader": {"profile": "finmem", "cognitive": {}}})


async def test_each_agent_runs_its_types_profile(group_factory):
    g = group_factory(
        agent_types={
            **TYPES,
            "scholar": {"profile": "cognitive", "cognitive": {"working_memory_capacity": 2}},
        }
    )
    await g.add_agents({1: {"type": "trader"}, 2: {"type": "scholar"}, 3: {}, 4: {"type": "x"}})
    assert g.profiles.rows() == [
        (1, "trader", "finmem"),
        (2, "scholar", "cognitive"),
        (3, "citizen", "default"),
        (4, "x", "default"),  # a type without its own profile runs the scenario's
    ]
    assert g.profiles.forgetting(1).per_layer_retrieval
    assert not g.profiles.forgetting(3).enabled
    decay = g.profiles.forgetting(2)  # the cognitive agent's natural decay: no pass, no layers
    assert decay.enabled and not decay.per_layer_retrieval and decay.access_boost == 0.0
    assert g.profiles.layer_decay(2) == dict.fromkeys(("short", "mid", "long", "reflection"), 0.99)
    assert g.cognition is not None and g.cognition.state(2).config.working_memory_capacity == 2
    with pytest.raises(ValueError, match="agent 3 runs memory profile 'default'"):
        g.cognition.state(3)
    # per-layer retrieval for the FinMem agent only: its memories carry layers
    for agent in (1, 3):
        s = g.agent(agent).stream
        await s.add("event", "the harbour fish market opened early", importance=0.4)
        await s.add("reflection", "markets reward patience", importance=0.4)
    finmem_hits = await g.agent(1).stream.search("fish market", top_k=1)
    default_hits = await g.agent(3).stream.search("fish market", top_k=1)
    assert {h.layer for h in finmem_hits} == {"short", "reflection"}  # top 1 of each layer
    assert len(default_hits) == 1


async def test_profiles_follow_agent_types_through_a_checkpoint(group_factory, tmp_path):
    g = group_factory(agent_types=TYPES)
    await g.add_agents({1: {"type": "trader"}, 2: {"type": "scholar"}, 3: {}})
    manifest_dir = tmp_path / "ckpt"
    await g.checkpoint(manifest_dir)
    back = await GroupMemory.restore(manifest_dir, tmp_path / "restored", embedder=g.embedder)
    try:
        assert back.profiles.rows() == g.profiles.rows()
        assert back.cognition is not None and back.cognition.runs(2)
    finally:
        await back.close()


@pytest.fixture
async def counted_finmem(group_factory, backend):
    g = group_factory(
        backend,
        profile="finmem",
        policies={"forgetting": finmem_forgetting().model_dump()},  # daily pass: 48 ticks
        tiers={"warm_max_age_days": None, "migrate_every_ticks": 4},
    )
    if g.deferred is not None:  # write-behind wraps the engine store: count below it
        counting = g.deferred.inner = CountingStore(g.deferred.inner)
    else:
        counting = g.store = CountingStore(g.store)
    await g.add_agents({1: {}})
    yield g, counting
    await g.close()


async def test_access_boosts_write_no_payload_per_hit(counted_finmem):
    g, store = counted_finmem
    s = g.agent(1).stream
    ids = [
        await s.add("event", f"the bond yield curve moved on day {i}", importance=0.3)
        for i in range(5)
    ]
    await g.end_tick()
    g.deferred is not None and await g.deferred.persist(ids)  # in the engine: boosts must write
    store.set_payload_calls.clear()
    for _ in range(12):  # 12 searches × up to 5 hits per layer
        hits = await s.search("bond yield curve", top_k=5)
        assert hits
    assert store.set_payload_calls == []  # no write per hit
    assert len(g.boosts) == 5 and g.counters["accesses"] >= 12 * 5
    (rec,) = await s.get_by_ids(ids[0])
    assert rec.importance > 0.3  # the boost is visible at once (hot columns in RAM)
    for _ in range(4):  # the tier schedule (every 4 ticks) applies them in one pass
        await g.end_tick()
    written = [i for call in store.set_payload_calls for i in call]
    assert sorted(set(written) & set(ids)) == sorted(ids) and len(g.boosts) == 0
    # one write per distinct payload: the same boosts (importance as of the flush, rounded)
    # are one write for all five memories
    assert g.boosts.writes == 1
    stored = await store.inner.retrieve(ids)  # the engine's own payloads
    assert all(p["importance"] > 0.3 for p in stored.values())


async def test_promotion_still_follows_the_configured_accesses(group_factory, backend):
    forgetting = finmem_forgetting().model_copy(update={"run_every_ticks": 3})
    g = group_factory(
        backend,
        agent_types={"trader": {"profile": "finmem", "forgetting": forgetting.model_dump()}},
        tiers={"warm_max_age_days": None, "migrate_every_ticks": 100},
    )
    await g.add_agents({1: {"type": "trader"}, 2: {}})
    s = g.agent(1).stream
    target = await s.add("event", "the bond yield curve inverted sharply", importance=0.3)
    await g.agent(2).stream.add("event", "the bond yield curve inverted sharply", importance=0.3)
    for _ in range(3):  # 3 reads: FinMem's short-layer access counter
        assert target in {h.id for h in await s.search("bond yield curve", top_k=1)}
    assert len(g.boosts) == 1  # boosts pending in RAM (tier schedule far away)
    for _ in range(3):
        await g.end_tick()  # the pass (every 3 ticks) flushes boosts and counts first
    (rec,) = await s.get_by_ids(target)
    assert rec.layer == "mid" and rec.access_count == 3 and g.counters["promoted"] == 1
    assert not g.boosts


async def test_reconsolidation_writes_on_the_tier_schedule_not_per_recall(group_factory):
    g = group_factory(
        profile="cognitive",
        cognitive={"working_memory_capacity": 3},
        tiers={"warm_max_age_days": None, "migrate_every_ticks": 2},
    )
    if g.deferred is not None:
        counting = g.deferred.inner = CountingStore(g.deferred.inner)
    else:
        counting = g.store = CountingStore(g.store)
    await g.add_agents({1: {}})
    s = g.agent(1).stream
    ids = [
        await s.add("event", f"the market sold apples batch {i}", importance=0.4) for i in range(3)
    ]
    await g.sync_writes()  # queued adds written (the store is used directly below)
    if g.deferred is not None:
        await g.deferred.persist(ids)  # in the engine: reconsolidation must reach it
    counting.set_payload_calls.clear()
    mem = g.agent(1)
    for n in range(5):
        held = await mem.cognition.hold_hits(1, await s.search("market apples", top_k=3), f"q{n}")
        assert len(held) == 3
    assert counting.set_payload_calls == []  # five recalls, no store write
    (rec,) = await s.get_by_ids(ids[0])
    assert rec.importance == pytest.approx(0.4 + 5 * 0.05)  # hot columns: at once
    await g.end_tick()
    await g.end_tick()  # the tier schedule (every 2 ticks) writes them
    stored = await counting.inner.retrieve(ids)
    assert all(p["importance"] == pytest.approx(0.65) for p in stored.values())
    assert all('"q4"' in p["metadata"] for p in stored.values())
    assert 0 < len(counting.set_payload_calls) <= len(ids)


async def test_pending_boosts_survive_a_checkpoint_unwritten(group_factory, tmp_path):
    forgetting = finmem_forgetting().model_dump()
    g = group_factory(profile="finmem", policies={"forgetting": forgetting})
    await g.add_agents({1: {}})
    s = g.agent(1).stream
    ids = [
        await s.add("event", f"the bond yield curve moved {i}", importance=0.3) for i in range(3)
    ]
    await g.end_tick()
    for _ in range(2):
        await s.search("bond yield curve", top_k=3)
    pending = g.boosts.get_state()
    assert len(pending) == 3
    await g.checkpoint(tmp_path / "ckpt")
    assert g.boosts.get_state() == pending  # the checkpoint did not write them
    back = await GroupMemory.restore(tmp_path / "ckpt", tmp_path / "back", embedder=g.embedder)
    try:
        assert back.boosts.get_state() == pending
        ranked = [
            [(h.id, h.score) for h in await m.agent(1).stream.search("bond", top_k=3)]
            for m in (g, back)
        ]
        assert ranked[0] == ranked[1]  # the restored group ranks as the original
        assert await back.boosts.flush() >= 0 and not back.boosts
        assert {r.id for r in await back.agent(1).stream.get_by_ids(ids)} == set(ids)
    finally:
        await back.close()


async def test_survey_searches_do_not_count_as_finmem_reads(group_factory):
    from societas.agents.experiments.schema import Question
    from societas.agents.experiments.survey import _memories

    g = group_factory(agent_types={"trader": {"profile": "finmem"}})
    await g.add_agents({1: {"type": "trader"}})
    await g.agent(1).stream.add("event", "the bond yield curve inverted", importance=0.3)
    question = Question(id="q", text="bond yield curve", kind="open")
    texts = await _memories(g, [(1, question)], top_k=3)
    assert texts == [["the bond yield curve inverted"]]
    assert not g.boosts and g.counters["accesses"] == 0  # quiet: no boost, no layer split
    assert g.profiles.forgetting(1).enabled  # the group's own profiles are back
    await g.agent(1).stream.search("bond yield curve", top_k=3)
    assert len(g.boosts) == 1


async def test_survey_memories_of_a_cognitive_agent_fit_its_working_memory(group_factory):
    from societas.agents.experiments.schema import Question
    from societas.agents.experiments.survey import _memories

    scholar = {"profile": "cognitive", "cognitive": {"working_memory_capacity": 2}}
    g = group_factory(agent_types={"scholar": scholar})
    await g.add_agents({1: {"type": "scholar"}, 2: {}})
    for agent in (1, 2):
        for i in range(4):
            await g.agent(agent).stream.add("event", f"the harbour market day {i}")
    question = Question(id="q", text="harbour market", kind="open")
    texts = await _memories(g, [(1, question), (2, question)], top_k=4)
    assert [len(t) for t in texts] == [2, 4]
