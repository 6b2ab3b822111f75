"""Tiers hot → warm → cold: boundaries, conservation, cold search, crash-safe migration."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from societas.memory import GroupMemoryConfig

HOUR = 3600.0


async def run_days(group, days, per_tick=1, ticks_per_day=4, agents=(1, 2)):
    """Each agent writes `per_tick` memories every 6 h; tier migration at every tick end."""
    added = 0
    for day in range(days):
        for tick in range(ticks_per_day):
            group.clock.set(day, tick * 24 / ticks_per_day * HOUR)
            for agent in agents:
                for k in range(per_tick):
                    await group.agent(agent).stream.add(
                        "event",
                        f"day {day} tick {tick} note {k} about the harbour festival",
                        importance=0.5,
                    )
                    added += 1
            await group.end_tick()
            counts = await group.tier_counts()
            assert counts["warm"] + counts["cold"] == added  # nothing lost, nothing twice
    return added


@pytest.fixture
def tiered(group_factory, backend):
    def make(**tiers):
        tiers.setdefault("migrate_every_ticks", 1)  # these timelines have 4 ticks a day
        g = group_factory(backend, tiers=tiers)
        return g

    return make


async def test_hot_window_and_cap(tiered):
    group = tiered(
        hot_window_hours=11, hot_cap_per_agent=3, warm_max_age_days=None, warm_cap_per_agent=None
    )
    await group.add_agents({1: {}, 2: {}})
    await run_days(group, 2)
    # last tick at day 1, 18:00: window 11 h keeps 12:00 and 18:00 → 2 per agent (cap 3)
    assert len(group.hot) == 4
    assert all(
        group.hot.record(i).time >= group.clock.abs_seconds - 12 * HOUR for i in group.hot.row_of
    )
    counts = await group.tier_counts()
    assert counts == {"hot": 4, "warm": 16, "cold": 0}
    group.clock.advance(HOUR)
    hits = await group.agent(1).stream.search("harbour festival", top_k=8)
    assert {h.tier for h in hits} == {"hot", "warm"}
    hot_only = await group.agent(1).stream.search("harbour festival", top_k=8, tiers=("hot",))
    assert len(hot_only) == 2 and {h.tier for h in hot_only} == {"hot"}


async def test_cap_evicts_oldest_hot_first(tiered):
    group = tiered(hot_window_hours=1000, hot_cap_per_agent=2, warm_max_age_days=None)
    await group.add_agents({1: {}, 2: {}})
    await run_days(group, 1)
    kept = sorted(
        group.hot.record(i).t for i in group.hot.row_of if group.hot.record(i).agent_id == 1
    )
    assert kept == [12 * HOUR, 18 * HOUR]


async def test_warm_age_moves_to_cold_and_cold_search_finds_it(tiered):
    group = tiered(
        hot_window_hours=6, warm_max_age_days=1, warm_cap_per_agent=None, cold_day_window=2
    )
    await group.add_agents({1: {}, 2: {}})
    added = await run_days(group, 4)
    counts = await group.tier_counts()
    assert counts["cold"] > 0 and counts["warm"] + counts["cold"] == added
    cutoff = group.clock.abs_seconds - 86_400
    cold_ids = group.cold.all_ids()
    cold = await group.get_by_ids(sorted(cold_ids))  # any tier
    assert all(r.time < cutoff for r in cold)
    # a hot + warm search never returns cold memories; the default (every tier) does
    warm = await group.agent(1).stream.search("day 0 harbour", top_k=50, tiers=("hot", "warm"))
    assert not {h.id for h in warm} & cold_ids
    everything = await group.agent(1).stream.search("day 0 harbour", top_k=50)
    assert {h.tier for h in everything} >= {"cold"}
    assert {h.text for h in everything if h.tier == "cold"} >= {
        f"day 0 tick {t} note 0 about the harbour festival" for t in range(4)
    }
    scores = [h.score for h in everything]
    assert scores == sorted(scores, reverse=True)
    only_cold = await group.agent(2).stream.search(
        "festival", top_k=3, tiers=("cold",), day_range=(0, 0)
    )
    assert len(only_cold) == 3 and all(h.day == 0 and h.agent_id == 2 for h in only_cold)
    # Parquet layout: partitioned by group and day window, rows sorted by agent_id
    import pyarrow.parquet as pq

    parts = group.cold.row_files()
    assert all(p.parent.name.startswith("days=") and "group=0" in str(p) for p in parts)
    for part in parts:
        agents = pq.read_table(part, columns=["agent_id"])["agent_id"].to_pylist()
        assert agents == sorted(agents)
        assert pq.ParquetFile(part).metadata.row_group(0).column(0).compression == "ZSTD"
        assert "text" not in pq.read_schema(str(part).replace(".rows.", ".vectors.")).names


async def test_warm_cap_moves_surplus(tiered):
    group = tiered(warm_max_age_days=None, warm_cap_per_agent=5)
    await group.add_agents({1: {}, 2: {}})
    added = await run_days(group, 2)
    assert await group.store.count(agent_id=1) == 5
    assert await group.store.count(agent_id=2) == 5
    assert group.cold.count() == added - 10


async def interrupted_move(group, monkeypatch) -> None:
    """Day 3's move to cold dies after the Parquet write and its journal, before the delete
    from warm; the store's delete works again afterwards."""
    group.clock.set(3, 0.0)
    real_delete = group.store.delete

    async def crash(ids):
        raise RuntimeError("process died mid-migration")

    monkeypatch.setattr(group.store, "delete", crash)
    with pytest.raises(RuntimeError, match="mid-migration"):
        await group.end_tick()
    assert group.journal.pending() is not None
    monkeypatch.setattr(group.store, "delete", real_delete)


async def test_crash_between_cold_write_and_warm_delete(tiered, monkeypatch):
    group = tiered(warm_max_age_days=1, warm_cap_per_agent=None)
    await group.add_agents({1: {}, 2: {}})
    await run_days(group, 1)
    await interrupted_move(group, monkeypatch)
    counts = await group.tier_counts()  # recovers the interrupted move first
    assert counts["warm"] + counts["cold"] == 8 and counts["cold"] == 8
    assert group.journal.pending() is None
    assert not set((await group.store.retrieve(sorted(group.cold.all_ids()))).keys())


async def test_the_next_tick_finishes_a_move_an_error_stopped(tiered, monkeypatch):
    """The disk is looked at for a half-done move at a process's first tick and after a
    failed one, not at every tick; the tick after a failure finishes the move."""
    from societas.memory.tiers import tiering

    group = tiered(warm_max_age_days=1, warm_cap_per_agent=None)
    looks = []
    real_look = tiering._pending_after_compaction
    monkeypatch.setattr(
        tiering, "_pending_after_compaction", lambda g: looks.append(1) or real_look(g)
    )
    await group.add_agents({1: {}, 2: {}})
    for tick in range(4):
        group.clock.set(0, tick * 6 * HOUR)
        for agent in (1, 2):
            await group.agent(agent).stream.add("event", f"tick {tick} at the harbour", 0.5)
        await group.end_tick()
    assert len(looks) == 1  # the first tick only
    await interrupted_move(group, monkeypatch)
    await group.end_tick()  # recovers the interrupted move, then ticks
    assert len(looks) == 2 and group.journal.pending() is None
    counts = await group.tier_counts()
    assert counts["warm"] == 0 and counts["cold"] == 8
    assert not set((await group.store.retrieve(sorted(group.cold.all_ids()))).keys())


async def test_crash_while_writing_cold_loses_nothing(tiered, monkeypatch):
    group = tiered(warm_max_age_days=1, warm_cap_per_agent=None)
    await group.add_agents({1: {}, 2: {}})
    await run_days(group, 1)
    group.clock.set(3, 0.0)

    def crash(points):
        raise OSError("disk full")

    monkeypatch.setattr(group.cold, "write", crash)
    with pytest.raises(OSError, match="disk full"):
        await group.end_tick()
    assert await group.tier_counts() == {"hot": 0, "warm": 8, "cold": 0}
    assert group.journal.pending() is None
    monkeypatch.undo()
    await group.end_tick()
    assert await group.tier_counts() == {"hot": 0, "warm": 0, "cold": 8}


async def test_moves_to_cold_wait_for_the_migration_cadence(tiered):
    group = tiered(warm_max_age_days=1, warm_cap_per_agent=None, migrate_every_ticks=8)
    await group.add_agents({1: {}, 2: {}})
    await run_days(group, 2)  # ticks 1..7: nothing moves; tick 8 (day 1, 18:00) moves day 0
    assert group.cold.count() == 6  # day 0 00:00..12:00 are older than 1 day at day 1 18:00
    assert len(group.cold.row_files()) == 1  # one part for the whole move


async def test_bad_tiers_and_tier_config(group):
    with pytest.raises(ValueError, match="tiers"):
        await group.agent(1).stream.search("x", tiers=("lukewarm",))
    with pytest.raises(ValueError, match="tiers"):
        await group.agent(1).stream.search("x", tiers=())
    for bad, field in [
        ({"hot_window_hours": 0}, "hot_window_hours"),
        ({"hot_cap_per_agent": 0}, "hot_cap_per_agent"),
        ({"warm_max_age_days": -1}, "warm_max_age_days"),
        ({"cold_day_window": 0}, "cold_day_window"),
        ({"freezer": True}, "freezer"),
    ]:
        with pytest.raises(ValidationError, match=field):
            GroupMemoryConfig(tiers=bad)


async def test_cold_parts_of_a_window_are_compacted(tiered):
    group = tiered(warm_max_age_days=0.25, warm_cap_per_agent=None, cold_max_parts_per_window=1)
    await group.add_agents({1: {}, 2: {}})
    added = await run_days(group, 3)
    assert all(len(list(f.glob("part-*.rows.parquet"))) == 1 for f in group.cold.dir.glob("days=*"))
    counts = await group.tier_counts()
    assert counts["warm"] + counts["cold"] == added and counts["cold"] > 10
    hits = await group.agent(1).stream.search(
        "day 0 festival", top_k=4, tiers=("cold",), day_range=(0, 0)
    )
    assert {h.text for h in hits} == {
        f"day 0 tick {t} note 0 about the harbour festival" for t in range(4)
    }


async def test_crash_during_compaction_counts_each_memory_once(tiered, monkeypatch):
    group = tiered(warm_max_age_days=0.25, warm_cap_per_agent=None, cold_max_parts_per_window=100)
    await group.add_agents({1: {}, 2: {}})
    added = await run_days(group, 2)
    folder = next(group.cold.dir.glob("days=*"))
    assert len(list(folder.glob("part-*.rows.parquet"))) > 1

    def crash(_folder):
        raise OSError("killed after the merged part and its journal were written")

    monkeypatch.setattr(group.cold, "_finish_compaction", crash)
    with pytest.raises(OSError, match="killed"):
        group.cold.compact(folder)
    assert (folder / "_compaction.json").exists()
    monkeypatch.undo()
    counts = await group.tier_counts()  # recovery removes the replaced parts
    assert counts["warm"] + counts["cold"] == added
    assert len(list(folder.glob("part-*.rows.parquet"))) == 1
    assert not (folder / "_compaction.json").exists()


async def test_free_pages_go_back_after_enough_evictions_or_a_move(tiered, monkeypatch):
    """A trim of the heap walks all of it, so it runs once `TRIM_AFTER_EVICTIONS` hot rows
    have left since the last one, or after a move to cold; not at every tick that evicts."""
    from societas.memory.tiers import tiering

    trims: list[int] = []
    monkeypatch.setattr(tiering, "release_free_memory", lambda: trims.append(1) or True)
    monkeypatch.setattr(tiering, "TRIM_AFTER_EVICTIONS", 5)
    group = tiered(
        hot_window_hours=5, warm_max_age_days=None, warm_cap_per_agent=None,
        migrate_every_ticks=1000,
    )  # fmt: skip
    await group.add_agents({1: {}, 2: {}})
    await run_days(group, 3)  # 2 rows leave hot a tick from the second tick on
    since, expected = 0, 0
    for _ in range(11):  # 2 evicted a tick; a trim once 5 have left since the last one
        since += 2
        if since >= 5:
            since, expected = 0, expected + 1
    assert len(trims) == expected == 3 and group.evicted_since_trim == since == 4
    moving = tiered(hot_window_hours=5, warm_max_age_days=0.3)  # a move each tick: a trim
    await moving.add_agents({1: {}, 2: {}})
    trims.clear()
    await run_days(moving, 2)
    assert len(trims) >= 4


async def test_linking_cold_evidence_is_refused_or_skipped_when_asked(tiered):
    """Cold rows are read-only: linking cold evidence is an error, and with `skip_cold` (a
    memory recalled before it went cold) only the hot and warm evidence is linked."""
    group = tiered(
        hot_window_hours=6, warm_max_age_days=1, warm_cap_per_agent=None, cold_day_window=2
    )
    await group.add_agents({1: {}, 2: {}})
    await run_days(group, 4)
    cold_id = min(
        r.id for r in await group.get_by_ids(sorted(group.cold.all_ids())) if r.agent_id == 1
    )
    hot_id = group.hot.memory_ids(1)[-1]
    cognition = await group.agent(1).stream.add("reflection", "I keep going to the harbour")
    with pytest.raises(ValueError, match="cold tier"):
        await group.link_cognitions([(1, [cold_id, hot_id], cognition)])
    await group.link_cognitions([(1, [cold_id, hot_id], cognition)], skip_cold=True)
    hot, thought = await group.get_by_ids([hot_id, cognition])
    assert cognition in hot.cognition_ids and list(thought.evidence_ids) == [hot_id]
    (cold,) = await group.get_by_ids([cold_id])
    assert cognition not in cold.cognition_ids


async def test_evidence_expired_since_it_was_read_is_skipped_when_asked(tiered):
    """A reflection stored after one of its evidence memories expired links the others; without
    `skip_cold` the expired one is an unknown id."""
    group = tiered(hot_window_hours=6, warm_max_age_days=1)
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    group.clock.set(0, 0.0)
    brief = await stream.add("social", "a chat at the door", expires_at=600.0)
    kept = await stream.add("social", "the harbour at dawn")
    group.clock.set(0, 3600.0)
    cognition = await stream.add("reflection", "I keep going to the harbour")
    with pytest.raises(KeyError, match=str(brief)):
        await group.link_cognitions([(1, [brief, kept], cognition)])
    await group.link_cognitions([(1, [brief, kept], cognition)], skip_cold=True)
    (thought,) = await group.get_by_ids([cognition])
    assert list(thought.evidence_ids) == [kept]
