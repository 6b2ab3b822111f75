"""Concurrent per-agent calls share one batched embedding + engine call per loop turn."""

from __future__ import annotations

import asyncio

import pytest

from societas.memory.retrieval.batching import MicroBatcher

from .conftest import writes_failing


async def test_concurrent_agents_share_one_batch(group_factory, bm25_embedder):
    group = group_factory("edge")
    await group.add_agents({a: {} for a in range(50)})

    async def step(agent_id):
        memory = group.agent(agent_id)
        memory_id = await memory.stream.add("event", f"agent {agent_id} saw the parade")
        await memory.status.update("thought", f"parade number {agent_id}")
        hits = await memory.stream.search("parade")
        return memory_id, hits

    results = await asyncio.gather(*(step(a) for a in range(50)))
    assert group.writes.drains == 1  # the 50 adds: one write (one embedding call)
    assert group._search_batcher.batches == 1
    for agent_id, (memory_id, hits) in enumerate(results):
        assert [h.id for h in hits] == [memory_id]
        assert hits[0].text == f"agent {agent_id} saw the parade"
    ids = [memory_id for memory_id, _ in results]
    assert ids == sorted(ids)  # submission order: deterministic ids
    assert len(group.writes.kv) == 50  # thoughts set, their embeddings wait for a KV search
    found = await group.agent(7).status.search("parade number 7", top_k=1)
    assert [(h.key, h.value) for h in found] == [("thought", "parade number 7")]
    assert not group.writes.kv


async def test_a_lone_search_is_a_batch_of_one_and_concurrent_ones_share(group_factory):
    """One agent at a time: each search is a batch of one; agents gathered share one batch.
    The answers are the same both ways."""
    lone, together = group_factory("edge", sub="lone"), group_factory("edge", sub="together")
    for group in (lone, together):
        await group.add_agents({a: {} for a in range(20)})

    async def step(group, agent_id):
        memory = group.agent(agent_id)
        await memory.stream.add("event", f"agent {agent_id} saw the parade by the river")
        await memory.stream.add("event", f"agent {agent_id} bought bread")
        return [h.text for h in await memory.stream.search("parade river", top_k=2)]

    lone_answers = [await step(lone, a) for a in range(20)]
    assert lone._search_batcher.batches == lone._search_batcher.items == 20
    assert len(lone.hot) == 40  # each search saw the adds queued before it
    together_answers = await asyncio.gather(*(step(together, a) for a in range(20)))
    assert together._search_batcher.batches == 1 and together._search_batcher.items == 20
    assert [answer[0] for answer in lone_answers] == [
        answer[0] for answer in together_answers
    ]  # each agent's own parade first, however the searches were batched


async def test_queued_adds_without_a_read_are_still_written_a_turn_later(group_factory):
    """Nothing reads after the adds: the write-queue's wake-up starts the drain task."""
    group = group_factory("edge")
    await group.add_agents({1: {}})
    await group.agent(1).stream.add("event", "a quiet morning")
    assert len(group.writes) == 1 and len(group.hot) == 0
    for _ in range(3):
        await asyncio.sleep(0)
    assert len(group.writes) == 0 and group.writes.drains == 1 and len(group.hot) == 1


async def test_rejected_call_writes_nothing_and_a_failed_write_is_not_lost(group_factory):
    group = group_factory("edge", tiers={"ram_index": False})  # written through at add
    await group.add_agents({1: {}})
    memory = group.agent(1)
    with pytest.raises(ValueError, match="description"):
        await memory.stream.add("event", "   ")  # rejected before anything is queued
    with pytest.raises(TypeError, match="thought"):
        await memory.status.update("thought", 42)
    assert len(group.writes) == 0

    with writes_failing(group.store, group.kv_store):
        memory_id = await memory.stream.add("event", "this must not be lost")  # id at once
        await memory.status.update("thought", "nor must this")
        assert await memory.status.get("thought") == "nor must this"  # the value: at once
        for _ in range(3):  # the drain task's write fails: logged, kept queued
            await asyncio.sleep(0)
        assert len(group.hot) == 0 and group.writes.add_ids == [memory_id]
        with pytest.raises(ConnectionError):  # the next read retries the write and raises
            await memory.stream.search("lost")
        with pytest.raises(ConnectionError):
            await memory.status.search("nor must this")
    assert [h.id for h in await memory.stream.search("lost")] == [memory_id]
    assert [h.value for h in await memory.status.search("nor must this", top_k=1)] == [
        "nor must this"
    ]
    assert len(group.writes) == 0


async def test_batch_failure_reaches_every_caller():
    async def explode(batch):
        raise RuntimeError(f"engine down ({len(batch)})")

    batcher = MicroBatcher(explode)
    results = await asyncio.gather(*(batcher.submit(i) for i in range(3)), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) and "engine down (3)" in str(r) for r in results)


async def test_failed_late_write_keeps_the_memories(group_factory):
    """Write-behind: a memory reaches the engine when it leaves hot; if that write fails the
    memory stays hot and pending (nothing lost), and a later write succeeds."""
    group = group_factory("edge", tiers={"hot_cap_per_agent": 1, "warm_in_ram": False})
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    first = await s.add("event", "the first memory leaves hot at tick end")
    await s.add("event", "the second one stays")
    engine = group.store.inner
    with writes_failing(engine), pytest.raises(ConnectionError):
        await group.end_tick()
    assert first in group.hot and first in group.deferred.pending
    assert await engine.retrieve([first]) == {}
    await group.end_tick()
    assert first not in group.hot and first not in group.deferred.pending
    assert (await engine.retrieve([first]))[first]["text"].startswith("the first")
    assert [h.id for h in await s.search("first memory", top_k=1)] == [first]


async def test_cancelling_a_batch_cancels_its_waiters_and_propagates():
    started = asyncio.Event()

    async def never_ending(requests):
        started.set()
        await asyncio.Event().wait()

    batcher: MicroBatcher[int, int] = MicroBatcher(never_ending)
    waiters = [asyncio.create_task(batcher.submit(i)) for i in range(3)]
    await started.wait()
    drain = batcher._drain_task or next(
        t for t in asyncio.all_tasks() if t.get_coro().__name__ == "_drain"
    )
    drain.cancel()
    results = await asyncio.gather(drain, *waiters, return_exceptions=True)
    assert drain.cancelled(), "the drain task must end cancelled, not swallow it"
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    assert all(w.cancelled() for w in waiters)
