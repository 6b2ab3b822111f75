"""Warm memories kept in RAM columns (`tiers.warm_in_ram`) answer exactly as written ones do.

Every test runs the same calls on two groups on the embedded Qdrant Edge backend: one whose
memories are written to the engine when they leave hot (`warm_in_ram=False`), one that keeps
their columns in `GroupMemory.warm_rows` until the engine is needed. Searches, records, read
counts, tier counts, checkpoints and moves to cold must not tell them apart.
"""

from __future__ import annotations

import pytest

from societas.memory import GroupMemory
from societas.memory.retrieval.group_search import _hit
from societas.memory.retrieval.hits import pending_warm_hits

from .conftest import writes_failing

TIERS = {"hot_cap_per_agent": 2, "migrate_every_ticks": 1, "warm_max_age_days": None}
TEXTS = [
    "the storm flooded the harbour road",
    "coffee with Maria at the bakery",
    "the mayor promised a new bridge",
    "fresh fish at the harbour market",
    "the river rose after the storm",
]


def _pair(group_factory, **tiers):
    """The same group twice: warm memories written to the engine, and kept in RAM."""
    written = group_factory("edge", sub="written", tiers=TIERS | tiers | {"warm_in_ram": False})
    kept = group_factory("edge", sub="kept", tiers=TIERS | tiers | {"warm_in_ram": True})
    return written, kept


async def _fill(group: GroupMemory) -> list[int]:
    """Two agents, five memories each over five ticks, one link and one read while hot."""
    await group.add_agents({1: {}, 2: {}})
    ids = []
    for tick, text in enumerate(TEXTS):
        group.clock.set(0, tick * 1800.0)
        for agent in (1, 2):
            ids.append(
                await group.agent(agent).stream.add("event", f"{text} ({agent})", 0.2 * tick)
            )
        if tick == 0:  # typed-record fields and a place: carried by the columns as well
            ids.append(
                await group.agent(1).stream.add(
                    "chat",
                    "Bob prefers green tea at the harbour",
                    0.5,
                    location="harbour",
                    type="preference",
                    tags=["tea", "bob"],
                    metadata={"speaker": "Bob", "turns": 3},
                    expires_at=10 * 86_400.0,
                )
            )
        if tick == 1:
            await group.agent(1).stream.add_cognition_to_memory([ids[0]], ids[2])
            await group.agent(1).stream.search("storm harbour", top_k=2)  # a read while hot
        await group.end_tick()
    return ids


def _dump(hits) -> list[dict]:
    return [h.model_dump() for h in hits]


async def test_left_hot_memories_stay_in_ram_and_answer_as_written_ones(group_factory):
    written, kept = _pair(group_factory)
    ids_w, ids_k = await _fill(written), await _fill(kept)
    assert ids_w == ids_k
    assert await kept.store.inner.count() == 0  # nothing reached the engine
    assert await written.store.inner.count() == 7  # all but each agent's newest 2 (cap 2)
    assert len(kept.warm_rows) == 7
    assert all(i in kept.deferred.pending for i in kept.warm_rows.row_of)
    assert await kept.tier_counts() == await written.tier_counts()
    for query, agent in (("storm harbour", 1), ("bakery coffee", 1), ("bridge mayor", 2)):
        got_w = await written.agent(agent).stream.search(query, top_k=3)
        got_k = await kept.agent(agent).stream.search(query, top_k=3)
        assert _dump(got_k) == _dump(got_w)
        assert any(h.tier == "warm" for h in got_k)
    assert _dump(await kept.get_by_ids(ids_k)) == _dump(await written.get_by_ids(ids_w))
    rec = (await kept.get_by_ids([ids_k[0]]))[0]
    assert rec.access_count >= 1 and rec.cognition_ids == (ids_k[2],)  # read while hot, linked


async def test_a_search_that_needs_the_engine_writes_them_first(group_factory):
    written, kept = _pair(group_factory)
    await _fill(written)
    ids = await _fill(kept)
    # a time-of-day filter is not answered from the RAM index: the engine ranks, so it must
    # hold every memory first (one bulk write), and the RAM columns of those left hot go
    kwargs = {"top_k": 3, "time_range": (0.0, 86_400.0)}
    got_w = await written.agent(1).stream.search("storm", **kwargs)
    got_k = await kept.agent(1).stream.search("storm", **kwargs)
    assert _dump(got_k) == _dump(got_w) != []
    assert len(kept.warm_rows) == 0 and len(kept.deferred.pending) == 0
    assert await kept.store.inner.count() == 11
    assert _dump(await kept.get_by_ids(ids)) == _dump(await written.get_by_ids(ids))
    reads = {r.id: r.access_count for r in await kept.get_by_ids(ids)}
    await kept.access.flush(kept.store, kept.hot)  # ledger reads written into the engine
    stored = await kept.store.inner.retrieve(list(reads))
    assert {i: pl.get("access_count", 0) for i, pl in stored.items()} == reads


async def test_a_failed_write_keeps_them_in_ram(group_factory):
    _, kept = _pair(group_factory)
    ids = await _fill(kept)
    before = _dump(await kept.get_by_ids(ids))
    engine = kept.store.inner
    with writes_failing(engine), pytest.raises(ConnectionError):
        await kept.deferred.persist()
    assert len(kept.warm_rows) == 7 and await engine.count() == 0
    assert await kept.deferred.persist() == 11
    assert _dump(await kept.get_by_ids(ids)) == before  # the same records, now from the engine


async def test_they_survive_a_checkpoint(group_factory, tmp_path, bm25_embedder):
    written, kept = _pair(group_factory)
    ids = await _fill(written)
    await _fill(kept)
    restored = {}
    for name, group in (("written", written), ("kept", kept)):
        await group.checkpoint(tmp_path / f"ck-{name}")
        restored[name] = await GroupMemory.restore(
            tmp_path / f"ck-{name}", tmp_path / f"r-{name}", embedder=bm25_embedder
        )
    again = restored["kept"]
    assert sorted(again.warm_rows.row_of) == sorted(kept.warm_rows.row_of) != []
    assert sorted(again.deferred.pending) == sorted(kept.deferred.pending)
    records = _dump(await written.get_by_ids(ids))
    hits = _dump(await written.agent(2).stream.search("harbour market fish", top_k=4))
    for group in (kept, again, restored["written"]):  # each one's first search: same reads
        assert _dump(await group.get_by_ids(ids)) == records
        assert _dump(await group.agent(2).stream.search("harbour market fish", top_k=4)) == hits
    for group in restored.values():
        await group.close()


async def test_moving_to_cold_takes_them_once(group_factory):
    written, kept = _pair(group_factory, warm_max_age_days=0.05)  # 72 simulated minutes
    for group in (written, kept):
        ids = await _fill(group)
        group.clock.set(0, 6 * 3600.0)
        await group.end_tick()
    assert kept.counters["vector_upserts"] == 0  # straight from RAM to Parquet, no engine trip
    assert _dump(await kept.get_by_ids(ids)) == _dump(await written.get_by_ids(ids))
    counts = await kept.tier_counts()
    assert counts == await written.tier_counts()
    assert counts["cold"] > 0 and counts["warm"] + counts["cold"] == 11
    assert len(kept.warm_rows) == 0  # moved: written to Parquet, not kept twice
    assert len(kept.warm_rows.ids) == 0  # and their rows' columns compacted away at once
    hits_w = await written.agent(1).stream.search("storm", top_k=5, tiers=("hot", "warm", "cold"))
    hits_k = await kept.agent(1).stream.search("storm", top_k=5, tiers=("hot", "warm", "cold"))
    assert _dump(hits_k) == _dump(hits_w) and {h.tier for h in hits_k} >= {"cold"}


async def test_deleted_ones_leave_ram(group_factory):
    _, kept = _pair(group_factory)
    ids = await _fill(kept)
    gone = [i for i in ids if i in kept.warm_rows][:2]
    await kept.store.delete(gone)
    assert not any(i in kept.warm_rows or i in kept.deferred.pending for i in gone)
    assert await kept.memory_count() == 9


async def test_a_qdrant_server_gets_them_when_they_leave_hot(group_factory):
    """The default follows the backend: a server holds warm points in its own RAM."""
    group = group_factory("qdrant", tiers=TIERS)
    assert not group.warm_in_ram
    assert group_factory("edge", sub="edge", tiers=TIERS).warm_in_ram


async def test_hot_columns_are_rebuilt_once_a_quarter_of_their_rows_left(group_factory):
    """A day's hot tier turns over once a day: rows that left stay in the columns until more
    than a quarter of them are dead, then the columns keep only live rows, which still read
    back as they were written."""
    from societas.memory import AddRequest

    group = group_factory("edge", tiers={"hot_cap_per_agent": 10_000})
    await group.add_agents({a: {} for a in range(8)})
    ids = await group.add_many(
        [
            AddRequest(agent_id=a, topic="event", description=f"walk {n} by agent {a}")
            for n in range(160)
            for a in range(8)
        ]
    )
    hot = group.hot
    assert len(hot.ids) == 1280
    hot.evict(ids[:320])  # exactly a quarter dead: kept as they are
    assert len(hot.ids) == 1280 and len(hot.row_of) == 960
    hot.evict(ids[320:321])  # one more: rebuilt
    assert len(hot.ids) == len(hot.row_of) == 959
    assert hot.record(ids[321]).text == f"walk {321 // 8} by agent {321 % 8}"
    assert hot.record(ids[-1]).text == "walk 159 by agent 7"
    await group.close()


def test_a_compaction_makes_no_second_copy_of_the_columns():
    """Dead rows are squeezed out in place: while a third of 40,000 rows are compacted away,
    Python's traced allocations rise by under a quarter of the texts' bytes (a rebuild into
    new columns, with the kept rows as Python ints, took as much again as the texts)."""
    import tracemalloc

    from societas.memory.store.hot_store import HotStore

    tracemalloc.start()
    try:
        hot, n = HotStore(), 40_000
        ids = list(range(n))
        texts = [f"memory {i} " + "x" * 80 for i in ids]
        hot.append_many(
            ids, [i % 100 for i in ids], ["event"] * n, texts, [None] * n, [0.5] * n, 0, 0.0, 0.0
        )
        text_bytes = hot.texts.nbytes()
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        hot.evict(ids[: n // 3])  # past a quarter dead: compacted
        rise = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert len(hot.ids) == len(hot.row_of) == n - n // 3
    assert rise < text_bytes / 4
    assert [hot.record(i).text for i in ids[n // 3 :: 997]] == texts[n // 3 :: 997]


async def test_pending_memories_older_than_a_time_come_oldest_first(group_factory):
    """`older_than` reads the hot and warm_rows columns at once: the pending memories before
    the cutoff, by time then id, and none already written to the engine."""
    _, kept = _pair(group_factory)
    ids = await _fill(kept)  # 11 memories over ticks 0-4, 7 of them in warm_rows
    hot, warm = kept.hot, kept.warm_rows

    def time_of(i: int) -> float:
        store = hot if i in hot.row_of else warm
        return store.times[store.row_of[i]]

    assert len(warm) == 7 and len(hot) == 4
    for cutoff in (0.0, 1800.0, 2 * 1800.0 + 1, 4 * 1800.0, 5 * 1800.0):
        expected = sorted((time_of(i), i) for i in ids if time_of(i) < cutoff)
        assert kept.deferred.older_than(cutoff).tolist() == [i for _, i in expected]
    newest = ids[-1]  # written to the engine while hot: no longer pending
    await kept.deferred.persist([newest])
    assert newest in hot.row_of
    assert newest not in kept.deferred.older_than(10 * 1800.0).tolist()
    assert len(kept.deferred.older_than(10 * 1800.0)) == len(ids) - 1


@pytest.mark.parametrize("profile", [None, "finmem"])
async def test_hits_read_from_the_columns_equal_the_payload_round_trip(
    group_factory, monkeypatch, profile
):
    """A search's warm hits read straight from `warm_rows` (`pending_warm_hits`) are the hits
    the payload round trip makes (retrieve, record, read-count overlay): every field, with
    layers (FinMem's forgetting) and without, places, tags, links, expiry and reads not yet
    in the columns; the memory with metadata, and those with a pending payload patch, are
    left to the round trip (JSON changes metadata; a patch is applied to the payload)."""
    extra = {} if profile is None else {"profile": profile}
    kept = group_factory("edge", tiers=TIERS | {"warm_in_ram": True}, **extra)
    ids = await _fill(kept)
    for memory_id in kept.warm_rows.row_of:  # reads of warm memories: in the ledger only
        kept.access.record([memory_id], 5_000.0, kept.hot)
    layered = kept.profiles.any_forgetting
    assert layered == (profile == "finmem")
    compared = 0
    for memory_id in ids:
        row = kept.warm_rows.row_of.get(memory_id)
        if row is None or memory_id in kept.deferred.patches:  # patched: the round trip's
            continue
        (fast,) = pending_warm_hits(
            kept.warm_rows, [memory_id], [row], [0.25], layered, kept.access
        )
        (record,) = (await kept.search._records([memory_id])).values()
        slow = _hit(record, 0.25, "warm")
        if memory_id in kept.warm_rows.metadata:
            assert fast is None
            continue
        assert fast.__dict__ == slow.__dict__
        compared += 1
    assert compared >= (2 if layered else 5)  # FinMem: a layer search wrote the rest
    if not layered:  # (FinMem's layered searches need the engine: they write warm first)
        warm = (
            set(kept.warm_rows.row_of) - set(kept.warm_rows.metadata) - set(kept.deferred.patches)
        )
        round_trips = []
        records = kept.search._records
        monkeypatch.setattr(
            kept.search, "_records", lambda ids, *a: round_trips.extend(ids) or records(ids, *a)
        )
        found = {h.id for a in (1, 2) for h in await kept.agent(a).stream.search("harbour storm")}
        assert found & warm and not warm & set(round_trips)  # searches take the column path


async def test_a_memory_already_in_the_engine_leaves_hot_without_a_ram_copy(group_factory):
    """A hot memory a search wrote to the engine (it needed the engine) and read again since
    leaves hot without a copy in `warm_rows` (it is read from the engine), and neither of its
    reads is lost: the later one stays in the ledger, overlaid on the engine's count."""
    group = group_factory("edge", tiers=TIERS | {"hot_cap_per_agent": 1, "warm_in_ram": True})
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    first = await stream.add("event", "the storm flooded the harbour road", 0.5)
    await stream.search("storm harbour", top_k=1)  # read 1: in the hot columns
    await group.deferred.persist()  # written with that read, still hot
    await stream.search("storm harbour", top_k=1)  # read 2: after the write
    await stream.add("event", "coffee at the bakery", 0.5)
    await group.end_tick()  # the first leaves hot (cap 1)
    assert first not in group.hot and first not in group.deferred.pending
    assert first not in group.warm_rows.row_of  # no RAM copy of what the engine holds
    (record,) = await group.get_by_ids([first])
    assert record.access_count == 2
