"""Typed records: type, tags, metadata, access counts and expiry in every tier and checkpoint."""

from __future__ import annotations

import asyncio

import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from societas.memory import GroupMemory
from societas.memory.model.records_meta import META_FIELDS
from societas.memory.tiers.cold import ROW_SCHEMA

from .conftest import roomy_tiers

HOUR = 3600.0
DAY = 86_400.0


async def _typed(group):
    s = group.agent(1).stream
    ids = {
        "pref": await s.add(
            "chat", "Alice prefers green tea at the harbour", type="preference", tags=["tea"]
        ),
        "conv": await s.add(
            "chat",
            "Alice talked about green tea with Bob",
            type="conversation",
            tags=["tea", "bob"],
            metadata={"speaker": "Bob", "turns": 3},
        ),
        "epi": await s.add("event", "Alice drank green tea in the morning"),
    }
    return ids


@pytest.mark.parametrize("hot_cap", [200, 1])  # all hot; or only the newest hot (rest warm-only)
async def test_search_filters_by_types_and_tags(group_factory, backend, hot_cap):
    group = group_factory(backend, tiers=roomy_tiers(hot_cap_per_agent=hot_cap))
    await group.add_agents({1: {}})
    ids = await _typed(group)
    await group.end_tick()
    s = group.agent(1).stream
    by_type = await s.search("green tea", top_k=10, types=["preference", "conversation"])
    assert {h.id for h in by_type} == {ids["pref"], ids["conv"]}
    episodic = await s.search("green tea", top_k=10, types=["episodic"])
    assert [h.id for h in episodic] == [ids["epi"]]
    bob = await s.search("green tea", top_k=10, tags=["bob"])
    assert [h.id for h in bob] == [ids["conv"]]
    tea = await s.search("green tea", top_k=10, tags=["tea"], types=["conversation"])
    assert [h.id for h in tea] == [ids["conv"]]
    (conv,) = await s.get_by_ids(ids["conv"])
    assert conv.type == "conversation" and conv.tags == ("tea", "bob")
    assert conv.metadata == {"speaker": "Bob", "turns": 3}
    await group.close()


async def test_bad_record_fields_name_the_field(group_factory):
    group = group_factory()
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    with pytest.raises(ValidationError, match="metadata"):
        await s.add("chat", "x", metadata={"when": object()})
    with pytest.raises(ValidationError, match="type"):
        await s.add("chat", "x", type="gossip")
    with pytest.raises(ValidationError, match="tags"):
        await s.add("chat", "x", tags=["", "ok"])
    with pytest.raises(ValidationError, match="types"):
        await s.search("x", types=["gossip"])
    await group.close()


async def test_expired_memories_never_returned_in_any_tier(group_factory, backend):
    group = group_factory(
        backend, tiers=roomy_tiers(hot_window_hours=1, warm_max_age_days=1, cold_day_window=1)
    )
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    group.clock.set(0, 0.0)
    cold_one = await s.add("event", "the old lighthouse ferry notice", expires_at=3 * DAY)
    group.clock.set(0, 12 * HOUR)
    keep_old = await s.add("event", "the old lighthouse ferry timetable")
    group.clock.set(1, 6 * HOUR)
    await group.end_tick()  # cold_one → cold (one part)
    group.clock.set(1, 18 * HOUR)
    await group.end_tick()  # keep_old → cold (a second part of the same day window)
    assert {cold_one, keep_old} <= group.cold.all_ids()
    group.clock.set(1, 22 * HOUR)
    warm_one = await s.add(
        "event", "the lighthouse ferry sells tickets", expires_at=2 * DAY + 2 * HOUR
    )
    group.clock.set(2, 0.0)
    await group.end_tick()  # warm_one leaves hot (window 1 h), stays warm
    assert warm_one not in group.hot
    group.clock.set(2, 0.5 * HOUR)
    hot_one = await s.add(
        "event", "the lighthouse ferry is late today", expires_at=2 * DAY + 2 * HOUR
    )
    group.clock.set(2, 1.5 * HOUR)
    everything = ("hot", "warm", "cold")
    before = {h.id for h in await s.search("lighthouse ferry", top_k=10, tiers=everything)}
    assert {cold_one, keep_old, hot_one, warm_one} <= before
    group.clock.set(2, 2.5 * HOUR)  # hot_one and warm_one have expired; no tick end yet
    assert hot_one in group.hot
    after = {h.id for h in await s.search("lighthouse ferry", top_k=10, tiers=everything)}
    assert hot_one not in after and warm_one not in after and cold_one in after
    hot_only = await s.search("lighthouse ferry", top_k=10, tiers=("hot",))
    assert hot_one not in {h.id for h in hot_only}
    with pytest.raises(KeyError):
        await s.get_by_ids(hot_one)
    await group.end_tick()  # the tier schedule deletes them from hot and warm
    assert group.counters["expired"] == 2
    assert hot_one not in group.hot and not await group.store.retrieve([hot_one, warm_one])
    group.clock.set(3, HOUR)  # the cold one has expired too
    after = {h.id for h in await s.search("lighthouse ferry", top_k=10, tiers=everything)}
    assert cold_one not in after and keep_old in after
    with pytest.raises(KeyError):
        await s.get_by_ids(cold_one)
    # compaction of its day window drops it from the Parquet files
    folder = group.cold.row_files()[0].parent
    assert group.cold.compact(folder, group.clock.abs_seconds) is not None
    assert cold_one not in group.cold.all_ids() and keep_old in group.cold.all_ids()
    await group.close()


async def test_access_counts_batched_and_survive_a_checkpoint(group_factory, backend, tmp_path):
    # warm_in_ram off: `old` is in the engine once it leaves hot (tests/memory/test_warm_rows.py
    # has the same reads with its columns kept in RAM instead)
    group = group_factory(backend, tiers=roomy_tiers(hot_cap_per_agent=1, warm_in_ram=False))
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    old = await s.add("event", "the market sells fresh bread")
    new = await s.add("event", "the market sells fresh fish")
    await group.end_tick()  # `old` is warm-only now (hot cap 1)
    assert old not in group.hot and new in group.hot
    calls = []
    real = group.store.set_payloads

    async def counting(updates):
        calls.extend((list(ids), dict(payload)) for ids, payload in updates if ids)
        await real(updates)

    group.store.set_payloads = counting  # type: ignore[method-assign]
    for _ in range(3):
        hits = await s.search("market fresh", top_k=2)
        assert {h.id for h in hits} == {old, new}
    assert calls == []  # no per-hit write while searching
    (rec_old,) = await s.get_by_ids(old)
    assert rec_old.access_count == 3 and rec_old.last_accessed == group.clock.abs_seconds
    await group.end_tick()
    # the tier schedule writes no read counts: the warm one stays in the ledger (overlaid on
    # every read), the hot one in its RAM column until it leaves hot
    assert calls == []
    engine = getattr(group.store, "inner", group.store)  # what the engine itself holds
    stored = await engine.retrieve([old, new])
    assert stored[old].get("access_count", 0) == 0
    assert "access_count" not in stored.get(new, {})  # hot: not written (or not yet at all)
    (rec_old,) = await s.get_by_ids(old)
    assert rec_old.access_count == 3
    # what a forgetting/importance pass does
    await group.access.flush(group.store, group.hot, unsent=group.unsent)
    # one write per distinct value; a hot memory not yet in the engine (deferred writes) has
    # its reads in its columns only, written with it
    written = [old] if group.deferred is not None else [old, new]
    assert [c[0] for c in calls] == [written, written]
    assert (await group.store.retrieve([new]))[new]["access_count"] == 3
    assert (await engine.retrieve([old]))[old]["access_count"] == 3
    group.store.set_payloads = real  # type: ignore[method-assign]
    await s.search("market bread", top_k=1)  # one more read of `old`, not yet flushed
    await group.checkpoint(tmp_path / "ck")
    restored = await GroupMemory.restore(tmp_path / "ck", tmp_path / "r", embedder=group.embedder)
    got = {r.id: r for r in await restored.get_by_ids([old, new])}
    assert got[old].access_count == 4 and got[new].access_count == 3
    assert new in restored.hot and restored.hot.record(new).access_count == 3
    await group.close()
    await restored.close()


async def test_reads_after_a_count_flush_reach_the_engine_with_the_memory(group_factory):
    """A hot memory not yet in the engine, read before and after a count flush (what a
    forgetting or importance pass does), reaches the engine with every read: no count
    written at the flush stands in for its columns' later one."""
    group = group_factory("edge", tiers=roomy_tiers(hot_cap_per_agent=1, warm_in_ram=False))
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    memory_id = await s.add("event", "the ferry leaves at dawn")
    for _ in range(3):
        await s.search("ferry dawn", top_k=1)
    await group.access.flush(group.store, group.hot, unsent=group.unsent)  # as a pass does
    assert memory_id not in group.access.pending
    for _ in range(2):
        await s.search("ferry dawn", top_k=1)
    assert group.hot.access_count(memory_id) == 5
    await s.add("event", "a gull on the pier")  # hot cap 1: the ferry leaves hot, written
    await group.end_tick()
    assert memory_id not in group.hot and memory_id not in group.deferred.pending
    engine = group.store.inner
    assert (await engine.retrieve([memory_id]))[memory_id]["access_count"] == 5
    (record,) = await s.get_by_ids(memory_id)
    assert record.access_count == 5
    await group.close()


async def test_a_batch_of_reads_leaves_hot_unsent_memories_out_of_the_ledger(group_factory):
    """A gathered tick's searches (a batch of hits): reads of hot memories not yet in the
    engine count in their columns only; reads of a memory the engine holds, in the ledger."""
    group = group_factory("edge", tiers=roomy_tiers(hot_cap_per_agent=2, warm_in_ram=False))
    agents = list(range(1, 11))
    await group.add_agents({a: {} for a in agents})
    for a in agents:
        await group.agent(a).stream.add("event", f"agent {a} saw the old lighthouse")
        await group.agent(a).stream.add("event", f"agent {a} bought lamp oil")
        await group.agent(a).stream.add("event", f"agent {a} mended a lamp")
    await group.end_tick()  # each agent's oldest left hot: in the engine now
    hits = await asyncio.gather(
        *(group.agent(a).stream.search("lighthouse lamp oil", top_k=3) for a in agents)
    )
    read = [h.id for found in hits for h in found]
    assert len(read) == 30  # one batch: the searches were gathered
    in_engine = [i for i in read if i not in group.hot]
    assert len(in_engine) == 10 and all(i not in group.unsent for i in in_engine)
    assert sorted(group.access.pending) == sorted(in_engine)  # the hot ones: columns only
    for i in read:
        if i in group.hot:
            assert group.hot.access_count(i) == 1
    await group.close()


async def test_cold_parts_without_the_new_columns_load_with_defaults(group_factory):
    group = group_factory(tiers=roomy_tiers(warm_max_age_days=1))
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    memory_id = await s.add("event", "an old harbour storm", tags=["storm"], type="semantic")
    group.clock.set(2, 0.0)
    await group.end_tick()
    (part,) = group.cold.row_files()
    old_names = [n for n in ROW_SCHEMA.names if n not in dict(META_FIELDS)]
    table = pq.read_table(part).select(old_names)
    pq.write_table(table, part, compression="zstd")  # as written before typed records
    group.cold._open = group.cold._datasets = None
    assert pq.read_schema(part).names == old_names
    (record,) = await s.get_by_ids(memory_id)
    assert record.type == "episodic" and record.tags == () and record.access_count == 0
    hits = await s.search("harbour storm", tiers=("cold",), types=["episodic"])
    assert [h.id for h in hits] == [memory_id]
    assert await s.search("harbour storm", tiers=("cold",), tags=["storm"]) == []
    await group.close()


async def test_access_counts_reach_cold_parquet(group_factory, backend):
    group = group_factory(backend, tiers=roomy_tiers(warm_max_age_days=1))  # stays hot till moved
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    memory_id = await s.add("event", "the tram line closed for repairs")
    for _ in range(2):
        await s.search("tram repairs", top_k=1)
    group.clock.set(2, 0.0)
    calls = []
    real = group.store.set_payloads

    async def counting(updates):
        calls.extend(list(ids) for ids, _ in updates if ids)
        await real(updates)

    group.store.set_payloads = counting  # type: ignore[method-assign]
    await group.end_tick()  # hot → cold by age: its reads go into the Parquet row directly
    assert memory_id in group.cold.all_ids()
    row = group.cold.scan(ids=[memory_id]).to_pylist()[0]
    assert row["access_count"] == 2 and row["last_accessed"] == 0.0
    assert calls == []  # no vector-store write for them
    await group.close()
