"""The RAM index and write-behind: same answers as the engine, nothing lost, nothing early."""

from __future__ import annotations

import random
from array import array
from types import SimpleNamespace

import numpy as np
import pytest

from societas.memory import GroupMemory
from societas.memory.model.records import KVSearchRequest, SearchRequest
from societas.memory.retrieval import ram_ranking
from societas.memory.retrieval.ram_ranking import SEGMENTED_AT, _take_tops, _top
from societas.memory.retrieval.sparse_index import AgentPostings
from societas.memory.vectorstores.base import PointFilter, VectorQuery
from societas.memory.vectorstores.edge import EdgeVectorStore

WORDS = (
    "storm river market apples school bridge shelter radio coffee bus train fire doctor "
    "garden festival rumour bakery harbour church library hospital teacher nurse mayor"
).split()


async def _fill(group: GroupMemory, agents: int, ticks: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    await group.add_agents({a: {} for a in range(agents)})
    for tick in range(ticks):
        group.clock.set(tick // 48, (tick % 48) * 1800.0)
        for a in range(agents):
            for _ in range(2):
                text = " ".join(rng.sample(WORDS, 5))
                await group.agent(a).stream.add("event", text, rng.random())
        await group.end_tick()


async def test_relevance_from_ram_equals_the_engines(group_factory, backend):
    """Σ idf·q·d from the index equals Qdrant's sparse score with the IDF modifier."""
    group = group_factory(backend)
    await _fill(group, agents=3, ticks=6)
    index = group.sparse_index
    assert index is not None and index.docs == await group.store.count() == 36
    (query,) = await group.embedder.embed_queries(["market storm coffee"])
    engine_hits = await group.store.query_batch(  # writes the pending memories first
        [VectorQuery(vectors=query, filter=PointFilter(agent_id=1), limit=50, with_payload=False)]
    )
    engine = {p.id: p.score for p in engine_hits[0]}
    postings = index.agents[1]
    found = index.matches(postings, index.query_weights(query.sparse))
    assert found is not None
    raw = np.bincount(*found, minlength=len(postings))
    ram = {i: float(r) for i, r in zip(postings.ids, raw, strict=True) if r > 0}
    assert engine.keys() == ram.keys() and engine
    for memory_id, score in engine.items():
        assert abs(score - ram[memory_id]) < 1e-4 * max(1.0, score)


@pytest.mark.parametrize("words,batched", [(2, True), (5, True), (2, False)])
async def test_ram_search_ranks_like_the_engine(
    group_factory, tmp_path, monkeypatch, words, batched
):
    """Same top-k with the RAM index on and off (off: every search rescored in the engine),
    for short queries and for queries of more terms (summed in another code path); in one
    batch (the top k of all searches taken at once) and one search at a time."""
    on = group_factory("edge", sub="on", tiers={"hot_window_hours": 2.0})
    off = group_factory("edge", sub="off", tiers={"hot_window_hours": 2.0, "ram_index": False})
    for g in (on, off):
        await _fill(g, agents=4, ticks=12)
    rng = random.Random(3)
    asked = [
        SearchRequest(agent_id=a, query=" ".join(rng.sample(WORDS, words)), top_k=k, **extra)
        for a in range(4)
        for extra in ({}, {"topic": "event"}, {"day_range": (0, 0)}, {"tiers": ("hot",)})
        for k in (2, 4)  # searches of one batch asking for different k
    ]
    segmented = []  # batches whose top k were taken at once
    monkeypatch.setattr(ram_ranking, "_take_tops", lambda *a: segmented.append(_take_tops(*a)))
    if batched:
        assert len(asked) >= SEGMENTED_AT
        got_on = await on.search_many(asked)
    else:
        got_on = [(await on.search_many([r]))[0] for r in asked]
    got_off = await off.search_many(asked)
    assert on.counters["vector_queries"] == 0  # answered from RAM, the engine never asked
    assert len(segmented) == (1 if batched else 0)
    assert [[h.text for h in hits] for hits in got_on] == [
        [h.text for h in hits] for hits in got_off
    ]
    assert any(h.tier == "warm" for hits in got_on for h in hits)  # warm memories compete too


async def test_memories_reach_the_engine_when_they_leave_hot(group_factory):
    group = group_factory("edge", tiers={"hot_cap_per_agent": 2, "warm_in_ram": False})
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    ids = [await s.add("event", f"memory number {n} about the market") for n in range(3)]
    engine = group.store.inner
    assert await engine.count() == 0 and await group.store.count() == 3  # counted, not written
    await group.agent(1).stream.add_cognition_to_memory([ids[0]], ids[1])  # a pending patch
    await group.end_tick()  # the oldest leaves hot (cap 2): written now, with its links
    written = await engine.retrieve(ids)
    assert list(written) == [ids[0]] and written[ids[0]]["links"] == [ids[1]]
    assert group.counters["vector_upserts"] == 1
    assert await group.deferred.persist() == 2  # a scroll or formula query does this first
    assert await engine.count() == 3 and group.counters["vector_upserts"] == 3


async def test_close_leaves_pending_memories_out_of_the_engine(group_factory):
    group = group_factory("edge")
    await _fill(group, agents=2, ticks=2)
    path = group.store.inner.path
    assert len(group.deferred.pending) == 8
    await group.close()  # a day of hot memories written here was the run's RAM peak
    reopened = EdgeVectorStore(path, dense_size=None, sparse=True)
    assert await reopened.count() == 0
    await reopened.close()


async def test_pending_memories_survive_a_checkpoint(group_factory, tmp_path):
    group = group_factory("edge")
    await _fill(group, agents=2, ticks=3)
    assert group.deferred is not None and group.deferred.pending  # still hot, not written
    before = await group.search_many([SearchRequest(agent_id=0, query="market storm", top_k=5)])
    pending = dict(group.deferred.pending)
    await group.checkpoint(tmp_path / "ck")
    assert group.deferred.pending == pending  # saved with their vectors, not written
    assert await group.store.inner.count() == 0
    restored = await GroupMemory.restore(tmp_path / "ck", tmp_path / "r", embedder=group.embedder)
    assert restored.deferred.pending == pending  # pending again: the engine holds none of them
    assert await restored.store.inner.count() == 0 and await restored.memory_count() == 12
    after = await restored.search_many([SearchRequest(agent_id=0, query="market storm", top_k=5)])
    assert [h.id for h in before[0]] == [h.id for h in after[0]]
    assert [h.score for h in before[0]] == [h.score for h in after[0]]
    assert restored.sparse_index is not None and restored.sparse_index.docs == 12
    await restored.end_tick()  # a later eviction writes them as the uninterrupted run would
    await restored.close()


async def test_deleted_and_migrated_memories_leave_the_index(group_factory):
    tiers = {"hot_window_hours": 1.0, "warm_max_age_days": 0.05, "migrate_every_ticks": 1}
    group = group_factory("edge", tiers=tiers)
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    old = await s.add("event", "an old memory about the storm")
    group.clock.set(0, 3 * 3600.0)
    await group.end_tick()  # out of hot (written), then past the warm age: moved to cold
    assert group.counters["migrated_to_cold"] == 1
    assert group.sparse_index.docs == 0 and group.sparse_index.df == {}
    assert [h.id for h in await s.search("storm", tiers=("hot", "warm", "cold"))] == [old]


async def test_kv_search_from_ram_equals_the_engines(group_factory):
    on = group_factory("edge", sub="on")
    off = group_factory("edge", sub="off", tiers={"ram_index": False})
    profiles = {
        1: {"name": "Alice Smith", "occupation": "teacher", "thought": "the storm is coming"},
        2: {"name": "Bob Jones", "occupation": "fisherman", "thought": "fish at the harbour"},
    }
    for g in (on, off):
        await g.add_agents(profiles)
        await g.agent(1).status.update("thought", "the market sells bread after the storm")
    asked = [
        KVSearchRequest(agent_id=1, query="storm bread market"),
        KVSearchRequest(agent_id=2, query="harbour fisherman"),
    ]
    await off.kv_store.optimize()  # the engine counts a replaced point in IDF until then
    got_on, got_off = await on.kv_search_many(asked), await off.kv_search_many(asked)

    def ranked(hits):  # the engine orders exact ties at random: compare (score, key)
        return sorted((-round(h.score, 4), h.key, h.text) for h in hits)

    assert [ranked(h) for h in got_on] == [ranked(h) for h in got_off]
    assert all(got_on)
    assert on.kv_store.dirty  # nothing written to the KV engine yet
    assert await on.kv_store.inner.count() == 0
    saved = on.kv_store.index_points()  # what a checkpoint saves, with no engine write
    assert await on.kv_store.inner.count() == 0 and on.kv_store.dirty
    await on.kv_store.persist()  # the engine's own view: the same points
    engine, _ = await on.kv_store.inner.scroll(None, 1000, with_vectors=True)

    def flat(points):
        return [
            (p.id, p.payload, list(p.vectors.sparse.indices), list(p.vectors.sparse.values))
            for p in points
        ]

    assert flat(saved) == flat(sorted(engine, key=lambda p: p.id))
    assert len(saved) == len(engine) > 0 and not on.kv_store.dirty
    await on.agent(2).status.update("thought", "a new thought")  # changed, then closed:
    await on.kv_search_many([KVSearchRequest(agent_id=2, query="thought")])
    assert on.kv_store.dirty
    await on.close()  # not written at close (a checkpoint saves it from the index)
    assert on.kv_store.dirty


async def test_reads_while_hot_are_counted_once_after_the_memory_leaves_hot(group_factory):
    tiers = {"hot_cap_per_agent": 1, "migrate_every_ticks": 1, "warm_in_ram": False}
    group = group_factory("edge", tiers=tiers)
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    read = await s.add("event", "the storm hit the harbour")
    assert [h.id for h in await s.search("storm harbour", top_k=1)] == [read]
    await s.add("event", "coffee at the bakery")
    await group.end_tick()  # `read` leaves hot: written with its count from the hot columns
    assert read not in group.hot and read not in group.deferred.pending
    assert (await s.get_by_ids([read]))[0].access_count == 1
    await group.access.flush(group.store, group.hot)
    assert (await group.store.inner.retrieve([read]))[read]["access_count"] == 1
    await group.close()


async def test_an_unchanged_embedded_value_is_neither_embedded_nor_written_again(group_factory):
    group = group_factory("edge")
    await group.add_agents({1: {}})
    status = group.agent(1).status
    await status.update("thought", "the river is rising")
    await status.search("river")  # embeds and indexes the changed attribute
    await group.kv_store.persist()  # and writes it
    embedded, written = group.counters["embedded_texts"], group.counters["vector_upserts"]
    await status.update("thought", "the river is rising")  # a write-back of the same value
    await status.search("river")  # the queued re-embedding runs: nothing changed
    await group.kv_store.persist()
    assert group.counters["embedded_texts"] == embedded
    assert group.counters["vector_upserts"] == written
    await status.update("thought", "the river has fallen")
    assert [h.value for h in await status.search("fallen")] == ["the river has fallen"]
    await group.kv_store.persist()
    assert group.counters["embedded_texts"] == embedded + 1
    assert group.counters["vector_upserts"] == written + 1
    await group.close()


def test_top_k_takes_the_best_scores_and_the_newest_of_equal_ones():
    """`_top` (k argmax calls) orders as a full sort by (score desc, row desc) does, with
    many exact ties, over all rows or a subset of them."""
    rng = np.random.default_rng(7)
    for trial in range(2000):
        n = int(rng.integers(1, 30))
        postings = AgentPostings()
        postings.ids = array("q", sorted(rng.choice(10**6, n, replace=False).tolist()))
        score = rng.integers(0, 4, n) * 0.25 if trial % 2 else rng.random(n)
        rows = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False))
        rows = rows if trial % 3 == 0 else None
        scored = score if rows is None else score[rows]
        k = min(int(rng.integers(1, 6)), len(scored))
        expected = sorted(range(len(scored)), key=lambda i: (-scored[i], -i))[:k]
        got = _top(postings, scored.copy(), rows, k)
        ids = postings.ids
        assert [(p.id, p.score) for p in got] == [
            (ids[i] if rows is None else ids[int(rows[i])], float(scored[i])) for i in expected
        ]


def test_top_k_of_a_whole_batch_equals_each_searchs_own():
    """`_take_tops` (segmented passes over a batch) gives every search the top k that a full
    sort by (score desc, row desc) of its own candidates gives; left-out rows score -inf."""
    rng = np.random.default_rng(11)
    for _trial in range(300):
        jobs = int(rng.integers(1, 40))
        picks, scores, expected = [], [], []
        for _ in range(jobs):
            n = int(rng.integers(1, 30))
            postings = AgentPostings()
            postings.ids = array("q", sorted(rng.choice(10**6, n, replace=False).tolist()))
            score = rng.integers(0, 4, n) * 0.25 if rng.random() < 0.5 else rng.random(n)
            keep = rng.random(n) < 0.7
            score[~keep] = -np.inf
            k = min(int(rng.integers(1, 6)), int(keep.sum()))
            ranked = sorted(np.flatnonzero(keep).tolist(), key=lambda i: (-score[i], -i))[:k]
            expected.append([(postings.ids[i], float(score[i])) for i in ranked])
            job = SimpleNamespace(hits=[])
            picks.append((job, postings, k))
            scores.append(score)
        _take_tops(np.concatenate(scores), picks)
        assert [[(p.id, p.score) for p in job.hits] for job, _, _ in picks] == expected


@pytest.mark.parametrize("weights", [{}, {"recency_weight": 0.7, "importance_weight": 1.3}])
async def test_a_lone_search_scores_bit_for_bit_as_in_a_batch(group_factory, monkeypatch, weights):
    """A search alone and in batches of any size gives the same hits and scores to the last
    bit, α and β at 1 or not."""
    group = group_factory("edge", tiers={"hot_window_hours": 2.0}, retrieval=weights)
    await _fill(group, agents=5, ticks=9)
    rng = random.Random(11)
    asked = [
        SearchRequest(agent_id=a, query=" ".join(rng.sample(WORDS, 3)), top_k=4, **extra)
        for a in range(5)
        for extra in ({}, {"topic": "event"}, {"day_range": (0, 0)})
    ]
    lone = [(await group.search_many([r]))[0] for r in asked]
    batched = await group.search_many(asked)
    smaller = await group.search_many(asked[4:11])  # the batch buffer reused, in part

    def scored(results):
        return [[(h.id, h.score.hex()) for h in hits] for hits in results]

    assert scored(lone) == scored(batched)
    assert scored(smaller) == scored(batched[4:11])
    assert all(lone) and len({h.score for hits in lone for h in hits}) > 20
