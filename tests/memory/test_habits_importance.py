"""Procedural habits (cognitive profile), feedback and importance recomputation, and the
consolidation rule (>= 3 similar memories of the last D days into a pattern memory)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from societas.memory import GroupMemoryConfig
from societas.memory.model.records import SearchRequest
from societas.memory.policies.configs import ImportanceRecompute
from societas.memory.policies.importance import BASE_KEY, give_feedback, recomputed

DAY = 86_400.0
HOUR = 3600.0


@pytest.fixture
async def habitual(group_factory, backend):
    g = group_factory(
        backend,
        profile="cognitive",
        cognitive={"attention": {"every": 50}},
        policies={"habits": {"enabled": True, "min_repeats": 3, "strengthen_by": 0.1}},
        tiers={"warm_max_age_days": None, "warm_cap_per_agent": None},
    )
    await g.add_agents({1: {"position": "cafe"}, 2: {"position": "park"}})
    yield g
    await g.close()


async def _perceive_on(group, day, t, events):
    group.clock.set(day, t)
    await group.cognition.perceive_many(events)
    return await group.end_tick()


async def test_repeated_actions_become_one_procedural_memory(habitual):
    g = habitual
    for day in range(2):
        await _perceive_on(g, day, 8 * HOUR + 600, [(1, "Ann is going to get coffee")])
    assert await g.memory_count(1) == 0  # two repeats: no habit yet
    # same action at another hour and by another agent: counted apart
    await _perceive_on(g, 2, 15 * HOUR, [(1, "Ann is going to get coffee")])
    report = await _perceive_on(g, 3, 8 * HOUR + 1200, [(1, "Ann is going to get coffee")])
    await _perceive_on(g, 3, 8 * HOUR, [(2, "Bob is going to get coffee")])
    assert report["habits_new"] == 1
    (hit,) = await g.agent(1).stream.search("coffee", top_k=5)
    assert hit.type == "procedural" and hit.tags == ("habit",) and hit.topic == "habit"
    assert hit.text == "I usually get coffee around 08:00 (at cafe)."
    assert hit.importance == 0.5
    assert await g.memory_count(2) == 0
    # repeated again: the same memory, strengthened in RAM and in the store; once a day
    for day in (4, 4, 5):
        await _perceive_on(g, day, 8 * HOUR + 100, [(1, "Ann is going to get coffee")])
    assert await g.memory_count(1) == 1
    (record,) = await g.get_by_ids([hit.id])
    assert record.importance == pytest.approx(0.7)
    stored = await g.store.retrieve([hit.id])
    assert stored[hit.id]["importance"] == pytest.approx(0.7)


async def test_habits_off_and_bad_config(group_factory):
    g = group_factory(profile="cognitive", cognitive={"attention": {"every": 50}})
    await g.add_agents({1: {}})
    for day in range(4):
        await _perceive_on(g, day, 8 * HOUR, [(1, "Ann is going to get coffee")])
    assert await g.memory_count(1) == 0
    with pytest.raises(ValidationError, match="min_repeats"):
        GroupMemoryConfig(policies={"habits": {"min_repeats": 1}})
    await g.close()


def test_recomputed_importance_follows_each_signal():
    p = ImportanceRecompute(enabled=True)
    fresh = recomputed(p, 0.5, 0.0, 0, None, 0.0, 0.0)
    assert fresh == 0.5
    assert recomputed(p, 0.5, 14 * DAY, 0, None, 0.0, 0.0) < fresh  # older
    assert recomputed(p, 0.5, 0.0, 5, 0.0, 0.0, 0.0) > fresh  # read often, lately
    assert recomputed(p, 0.5, 0.0, 5, 60 * DAY, 0.0, 0.0) < recomputed(p, 0.5, 0.0, 5, 0.0, 0, 0)
    assert (
        recomputed(p, 0.5, 0.0, 0, None, 2.0, 0.0) > fresh > recomputed(p, 0.5, 0, 0, None, -2, 0)
    )
    assert recomputed(p, 0.5, 0.0, 0, None, 0.0, 3.0) > fresh  # well connected
    assert recomputed(p, 1.0, 0.0, 9, 0.0, 9.0, 9.0) == 1.0
    with pytest.raises(ValidationError, match="weight"):
        GroupMemoryConfig(
            policies={
                "importance": {
                    "enabled": True,
                    "age_weight": 0,
                    "access_weight": 0,
                    "feedback_weight": 0,
                    "association_weight": 0,
                }
            }
        )


async def test_importance_pass_agrees_in_hot_warm_and_cold(group_factory, backend):
    policy = {"enabled": True, "run_every_ticks": 1}
    g = group_factory(
        backend,
        policies={"importance": policy},
        tiers={"hot_window_hours": 1, "warm_max_age_days": None, "warm_cap_per_agent": None},
    )
    await g.add_agents({1: {}})
    s = g.agent(1).stream
    old = await s.add("event", "the old mill burned down", importance=0.6)
    g.clock.advance(2 * DAY)
    liked = await s.add("event", "the choir sang at the square", importance=0.5)
    wrong = await s.add("event", "the bus route changed to the hill", importance=0.5)
    read = await s.add("event", "the library opened a reading room", importance=0.5)
    with pytest.raises(KeyError, match="12345"):
        await give_feedback(g, {12345: 1.0})
    with pytest.raises(ValueError, match="finite"):
        await give_feedback(g, {liked: float("nan")})
    assert await give_feedback(g, {liked: 1.0, wrong: -1.0}) == {liked: 1.0, wrong: -1.0}
    assert await give_feedback(g, {liked: 1.0}) == {liked: 2.0}
    for _ in range(3):
        await g.search_many([SearchRequest(agent_id=1, query="library reading room", top_k=1)])
    await g.end_tick()
    p = g.config.policies.importance
    expect = {
        old: recomputed(p, 0.6, 2 * DAY, 0, None, 0.0, 0.0),
        liked: recomputed(p, 0.5, 0.0, 0, None, 2.0, 0.0),
        wrong: recomputed(p, 0.5, 0.0, 0, None, -1.0, 0.0),
        read: recomputed(p, 0.5, 0.0, 3, 0.0, 0.0, 0.0),
    }
    assert old not in g.hot and liked in g.hot  # one warm-only, the rest hot
    stored = await g.store.retrieve(list(expect))
    records = {r.id: r for r in await g.get_by_ids(list(expect))}
    for memory_id, value in expect.items():
        assert stored[memory_id]["importance"] == pytest.approx(value)
        assert records[memory_id].importance == pytest.approx(value)
    assert records[liked].metadata == {"feedback": 2.0, BASE_KEY: 0.5}
    assert records[wrong].importance < records[liked].importance
    assert records[read].importance > 0.5 and records[old].importance < 0.6
    await g.end_tick()  # the base is kept: a second pass does not compound
    again = {r.id: r.importance for r in await g.get_by_ids(list(expect))}
    assert again[liked] == pytest.approx(expect[liked])
    # the writes are batched: one per distinct value (and per distinct metadata), not per memory
    assert g.policy_state.counters["importance_writes"] <= 2 * (4 + 4)
    # leaving warm, a memory's row carries the recomputed importance into the cold tier
    from societas.memory.tiers import tiering

    await tiering.migrate(g, await g.store.fetch([liked]))
    (row,) = g.cold.scan(ids=[liked]).to_pylist()
    assert row["importance"] == pytest.approx(expect[liked])
    with pytest.raises(ValueError, match="cold tier"):
        await give_feedback(g, {liked: 1.0})
    await g.close()


async def test_consolidation_clusters_three_similar_recent_memories_once(group_factory, backend):
    policy = {"enabled": True, "similarity": 0.6, "run_every_ticks": 1, "window_days": 3}
    g = group_factory(
        backend,
        policies={"consolidation": policy},
        tiers={"warm_max_age_days": None, "warm_cap_per_agent": None},
    )
    await g.add_agents({1: {}, 2: {}})
    s = g.agent(1).stream
    ancient = await s.add("activity", "bought fresh bread at the bakery on main street")
    g.clock.advance(5 * DAY)  # ancient is outside the window of 3 days
    recent = [
        await s.add("activity", "bought fresh bread at the bakery on main street"),
        await s.add("activity", "bought fresh bread at the main street bakery"),
    ]
    await g.agent(2).stream.add("activity", "bought fresh bread at the bakery on main street")
    await g.end_tick()
    assert g.counters["consolidated"] == 0  # two in the window (and one elsewhere): too few
    g.clock.advance(2 * DAY)  # the first two now warm only, still in the window
    recent.append(await s.add("activity", "bought fresh bread at the bakery on main street"))
    other = await s.add("activity", "swam in the lake with friends")
    await g.end_tick()
    assert g.counters["consolidated"] == 3
    hits = await s.search("bakery bread", top_k=10, tags=["pattern"])
    (pattern,) = hits
    assert pattern.type == "semantic" and pattern.topic == "activity"
    assert pattern.text.endswith("(and 2 similar memories)")
    assert sorted(pattern.evidence_ids) == sorted(recent)
    edges = {n: t for n, t, _ in g.associations.neighbours(pattern.id)}
    assert edges == {m: "similar" for m in recent}
    records = {r.id: r for r in await g.get_by_ids([*recent, ancient, other])}
    stored = await g.store.retrieve([*recent, ancient, other])
    for m in recent:
        assert "consolidated" in records[m].tags and "consolidated" in stored[m]["tags"]
    assert records[ancient].tags == () and records[other].tags == ()
    assert not g.cold.all_ids()  # sources="mark": originals stay where they are
    # another similar memory later: the marked originals are never consolidated again
    recent.append(await s.add("activity", "bought fresh bread at the bakery on main street"))
    await g.end_tick()
    assert g.counters["consolidated"] == 3
    await g.close()


async def test_habits_and_feedback_survive_a_checkpoint(habitual, tmp_path):
    from societas.memory import GroupMemory

    g = habitual
    for day in range(3):
        await _perceive_on(g, day, 8 * HOUR, [(1, "Ann is going to get coffee")])
    for day in range(2):  # another action twice: one short of a habit at the checkpoint
        await _perceive_on(g, day, 18 * HOUR, [(1, "Ann is going to read")])
    (habit,) = await g.agent(1).stream.search("coffee", top_k=5)
    assert await give_feedback(g, {habit.id: -1.0}) == {habit.id: -1.0}
    await g.checkpoint(tmp_path / "ckpt")
    restored = await GroupMemory.restore(
        tmp_path / "ckpt", tmp_path / "restored", embedder=g.embedder
    )
    try:
        (record,) = await restored.get_by_ids([habit.id])
        assert record.metadata["feedback"] == -1.0 and record.type == "procedural"
        # the restored group goes on counting: the habit is strengthened by each repeat, not
        # written twice, and the action seen twice before becomes a habit at its third time
        for day in range(3, 6):
            await _perceive_on(restored, day, 8 * HOUR, [(1, "Ann is going to get coffee")])
        assert await restored.memory_count(1) == 1
        (record,) = await restored.get_by_ids([habit.id])
        assert record.importance == pytest.approx(0.8)  # three repeats past the third
        report = await _perceive_on(restored, 6, 18 * HOUR, [(1, "Ann is going to read")])
        assert report["habits_new"] == 1 and await restored.memory_count(1) == 2
    finally:
        await restored.close()


async def test_an_event_s_own_place_counts_apart(habitual):
    g = habitual
    for day in range(3):
        events = [(1, "Ann is going to read the news;", "library" if day else "cafe")]
        await _perceive_on(g, day, 8 * HOUR, events)
    assert await g.memory_count(1) == 0  # two at the library, one at the cafe
    await _perceive_on(g, 3, 8 * HOUR, [(1, "Ann is going to read the news", "library")])
    (hit,) = await g.agent(1).stream.search("news", top_k=5)
    assert hit.text == "I usually read the news around 08:00 (at library)."
    assert hit.location == "library"
