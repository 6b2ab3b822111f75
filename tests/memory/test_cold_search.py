"""Every memory competes: a cold memory that can beat the k-th hot or warm hit is found and
read; one that cannot is never read (counted by the cold tier's rows read)."""

from __future__ import annotations

from societas.memory import GroupMemory
from societas.memory.model.records import SearchRequest

TIERS = {"hot_window_hours": 1.0, "warm_max_age_days": 1.0, "migrate_every_ticks": 1}


async def _society(group: GroupMemory, cold: list[tuple[str, float]], hot: list[tuple[str, float]]):
    """Agent 1 with `cold` memories (day 0, moved to Parquet) and `hot` ones (day 3)."""
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    group.clock.set(0, 0.0)
    cold_ids = [await stream.add("event", text, importance=imp) for text, imp in cold]
    group.clock.set(3, 0.0)
    await group.end_tick()
    for text, importance in hot:
        await stream.add("event", text, importance=importance)
    assert group.cold.count() == len(cold)
    return cold_ids


async def test_a_cold_memory_that_can_win_is_found_and_only_it_is_read(group_factory):
    group = group_factory("edge", tiers=TIERS)
    cold = [("the river flooded the lower town", 1.0)] + [("bought apples", 0.0)] * 20
    hot = [("coffee in the morning", 0.0)] * 4 + [("a walk along the river bank", 0.0)]
    flood, *_ = await _society(group, cold, hot)
    hits = await group.agent(1).stream.search("river", top_k=5)  # default: every tier
    assert hits[0].id == flood and hits[0].tier == "cold"
    assert group.cold.rows_read == 1  # the apples could not beat the 5th hit: never read
    await group.close()


async def test_a_cold_memory_that_cannot_win_is_never_read(group_factory):
    group = group_factory("edge", tiers=TIERS)
    cold = [("the river flooded the lower town", 0.0)] * 3
    hot = [("the river flooded the lower town again", 1.0)] * 5
    cold_ids = await _society(group, cold, hot)
    hits = await group.agent(1).stream.search("river flooded", top_k=5)
    assert not {h.id for h in hits} & set(cold_ids)
    assert group.cold.rows_read == 0
    hot_warm = SearchRequest(agent_id=1, query="river flooded", top_k=5, tiers=("hot", "warm"))
    assert [h.id for h in hits] == [h.id for h in (await group.search_many([hot_warm]))[0]]
    await group.close()


async def test_search_cold_off_leaves_cold_out_by_default(group_factory):
    group = group_factory("edge", tiers={**TIERS, "search_cold": False})
    (flood,) = await _society(group, [("the river flooded the lower town", 1.0)], [("river", 0.0)])
    assert flood not in [h.id for h in await group.agent(1).stream.search("river flooded")]
    everywhere = await group.agent(1).stream.search("river flooded", tiers=("hot", "warm", "cold"))
    assert everywhere[0].id == flood
    await group.close()


async def test_only_agents_with_cold_rows_search_the_cold_tier(group_factory, monkeypatch):
    group = group_factory("edge", tiers=TIERS)
    assert not group.cold.may_hold(1)  # nothing written yet
    (flood,) = await _society(group, [("the river flooded the lower town", 1.0)], [("river", 0.0)])
    await group.add_agents({2: {}})
    await group.agent(2).stream.add("event", "a river walk")
    asked: list[int] = []
    search_one = group.search._cold_search
    monkeypatch.setattr(
        group.search, "_cold_search", lambda r, *a: asked.append(r.agent_id) or search_one(r, *a)
    )
    hits = await group.agent(1).stream.search("river flooded")
    assert hits[0].id == flood and asked == [1]
    assert group.cold.may_hold(1) and not group.cold.may_hold(2)  # the index is loaded now
    await group.agent(2).stream.search("river")
    assert asked == [1]  # agent 2 holds no cold row: its search never reached the cold tier
    await group.close()
