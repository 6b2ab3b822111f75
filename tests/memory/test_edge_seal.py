"""Sealing a Qdrant Edge shard (opt-in `compact_in_child`): optimized in a child process,
reopened mmapped, same answers; the default store compacts in process, after moves only.

Real shards on disk and a real child process. The loop test counts how often a ticker
coroutine runs while a 30,000-point shard is sealed: an in-process optimize holds the GIL for
its whole length (the ticker got 1 turn in 1.2 s when measured), a sealed one leaves it free.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time

import numpy as np
import pytest

from societas.memory import GroupMemory, GroupMemoryConfig
from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.vectorstores import MemoryPoint, PointFilter, VectorQuery, edge_seal
from societas.memory.vectorstores.edge import EdgeVectorStore
from tests.memory.test_backends import QUERIES, WORDS, fill


def _points(n: int, seed: int = 3) -> list[MemoryPoint]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        terms = sorted(rng.sample(range(5_000), 8))
        vector = SparseVector.of(np.array(terms, dtype=np.uint32), np.ones(8, dtype=np.float32))
        payload = {"agent_id": i % 50, "topic": "event", "t": 0.0, "time": float(i)}
        payload.update(importance=0.5, text=" ".join(rng.sample(WORDS, 4)))
        out.append(MemoryPoint(i, TextVectors(sparse=vector), payload))
    return out


def _queries(n_agents: int = 50) -> list[VectorQuery]:
    vector = SparseVector.of(np.array([1, 2, 3, 4], dtype=np.uint32), np.ones(4, dtype=np.float32))
    return [
        VectorQuery(vectors=TextVectors(sparse=vector), filter=PointFilter(a), limit=5)
        for a in range(n_agents)
    ]


def _canon(hits) -> tuple[list[float], set[int]]:
    """Hits as their scores and the ids above the last score (the engine orders exact ties
    by segment, and the ranking fetches a margin beyond top k to order them itself)."""
    scores = [round(p.score, 5) for p in hits]
    return scores, {p.id for p in hits if round(p.score, 5) > scores[-1]} if hits else set()


async def test_a_sealed_shard_answers_as_before_and_the_loop_keeps_running(tmp_path):
    store = EdgeVectorStore(tmp_path / "s", dense_size=None, sparse=True, compact_in_child=True)
    points = _points(30_000)
    await store.upsert(points)
    assert store.unsealed_points == 30_000
    await store.delete(list(range(0, 30_000, 7)))
    count = await store.count()
    # The truth: a shard that only ever held the survivors (the seal vacuums the deleted
    # points, so they stop counting in IDF).
    fresh = EdgeVectorStore(tmp_path / "fresh", dense_size=None, sparse=True)
    await fresh.upsert([p for p in points if p.id % 7])
    expected = await fresh.query_batch(_queries())
    await fresh.close()

    turns = 0
    worst_gap = 0.0

    async def ticker() -> None:
        nonlocal turns, worst_gap
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            worst_gap, last, turns = max(worst_gap, now - last), now, turns + 1

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    turns, worst_gap = 0, 0.0
    start = time.perf_counter()
    await store.optimize()
    sealed_s = time.perf_counter() - start
    task.cancel()

    assert store.unsealed_points == 0
    assert await store.count() == count == 30_000 - len(range(0, 30_000, 7))
    after = await store.query_batch(_queries())
    assert [_canon(h) for h in after] == [_canon(h) for h in expected]
    assert any(after)
    # The loop ran throughout: many turns, none late by anything like the seal's length.
    assert turns >= sealed_s / 0.05, (turns, sealed_s)
    assert worst_gap < max(0.25, sealed_s / 4), (worst_gap, sealed_s)
    await store.upsert(_points(10, seed=9))  # the reopened shard takes writes
    assert await store.count() == count + 2  # ids 0..9 again: 0 and 7 were deleted
    await store.close()


async def test_a_failed_child_falls_back_to_an_in_process_optimize(tmp_path, monkeypatch, caplog):
    store = EdgeVectorStore(tmp_path / "s", dense_size=None, sparse=True, compact_in_child=True)
    await store.upsert(_points(500))
    before = await store.query_batch(_queries())
    monkeypatch.setattr(edge_seal.sys, "executable", "/bin/false")  # the child dies at once
    with caplog.at_level(logging.WARNING):
        await store.optimize()
    assert "optimizing in process instead" in caplog.text
    assert "failed (exit 1)" in caplog.text
    assert await store.count() == 500
    after = await store.query_batch(_queries())
    assert [[p.id for p in h] for h in after] == [[p.id for p in h] for h in before]
    await store.close()


async def test_the_tier_pass_seals_without_moves_and_searches_stay_the_same(
    tmp_path, bm25_embedder
):
    tiers = {
        "hot_window_hours": 4.0,
        "migrate_every_ticks": 1,
        "seal_after_points": 20,
        "warm_in_ram": False,
    }
    groups = []
    for name, in_child in (("sealed", True), ("plain", False)):  # plain: the default store
        cfg = GroupMemoryConfig(vector_store={"compact_in_child": in_child}, tiers=tiers)
        groups.append(GroupMemory(cfg, root=tmp_path / name, embedder=bm25_embedder))
    sealed, plain = groups
    seals = 0
    for group in (sealed, plain):
        await fill(group)
        engine = group.store.inner  # under the write-behind wrapper
        for day in range(5, 8):  # everything leaves hot, nothing is old enough for cold
            group.clock.set(day, 0.0)
            unsealed = engine.unsealed_points
            report = await group.end_tick()
            assert report["moved_to_cold"] == 0
            if group is sealed and unsealed + report["evicted_from_hot"] >= 20:
                assert engine.unsealed_points == 0
                seals += 1
        if group is plain:  # in process, only a move is worth a compaction
            assert engine.unsealed_points == 100  # 4 agents × 25 memories
    assert seals >= 1
    for agent in range(4):
        for query in QUERIES:
            a = await sealed.agent(agent).stream.search(query, top_k=5)
            b = await plain.agent(agent).stream.search(query, top_k=5)
            assert [(h.id, h.tier) for h in a] == [(h.id, h.tier) for h in b], (agent, query)
            assert all(h.tier == "warm" for h in a)
    for group in groups:
        await group.close()


class _CountingShard:
    """The real shard, counting its flushes (the binding's object takes no attributes)."""

    def __init__(self, shard) -> None:
        self.shard, self.flushes = shard, 0

    def __getattr__(self, name):
        return getattr(self.shard, name)

    def flush(self) -> None:
        self.flushes += 1
        self.shard.flush()


async def test_flush_syncs_a_shard_only_after_a_write(tmp_path):
    """A migration flushes both shards of every group: a shard nothing was written to since
    its last flush is not synced again (~4 ms a flush with the GIL held); any write is."""
    store = EdgeVectorStore(tmp_path / "s", dense_size=None, sparse=True)
    shard = store._shard = _CountingShard(store._shard)
    await store.flush()  # a new shard (its field indexes) is flushed once
    await store.flush()
    assert shard.flushes == 1
    writes = [
        lambda: store.upsert(_points(10)),
        lambda: store.set_payloads([([1, 2], {"importance": 0.9})]),
        lambda: store.delete([3]),
        store.optimize,
    ]
    for n, write in enumerate(writes, start=2):
        await write()
        await store.flush()
        await store.flush()
        assert shard.flushes == n
    await store.upsert([])  # an empty write writes nothing
    await store.flush()
    assert shard.flushes == 5
    await store.close()
    reopened = EdgeVectorStore(tmp_path / "s", dense_size=None, sparse=True)
    assert await reopened.count() == 9  # everything written was persisted
    assert (await reopened.retrieve([1]))[1]["importance"] == 0.9
    await reopened.close()


async def test_a_failed_flush_is_retried(tmp_path):
    store = EdgeVectorStore(tmp_path / "s", dense_size=None, sparse=True)
    real = store._shard

    class Failing(_CountingShard):
        def flush(self) -> None:
            raise OSError("disk full")

    store._shard = Failing(real)
    with pytest.raises(OSError, match="disk full"):
        await store.flush()
    shard = store._shard = _CountingShard(real)
    await store.flush()  # still unflushed: synced now
    assert shard.flushes == 1
    await store.close()
