"""Adds and status updates return at once; every read still sees the writes made before it."""

from __future__ import annotations

import asyncio

import pytest


class GatedEmbedder:
    """The real BM25 embedder behind a gate: document embedding waits until it opens, so a
    test can cancel a write while it is in flight."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.gate = asyncio.Event()
        self.started = asyncio.Event()
        self.dense_size, self.has_sparse = inner.dense_size, inner.has_sparse

    async def embed_documents(self, texts):
        self.started.set()
        await self.gate.wait()
        return await self.inner.embed_documents(texts)

    async def embed_queries(self, texts):
        return await self.inner.embed_queries(texts)


async def test_reads_see_an_add_made_just_before_without_a_loop_turn(group_factory, backend):
    group = group_factory(backend)
    await group.add_agents({1: {}, 2: {}})
    stream = group.agent(1).stream
    first = await stream.add("event", "the bakery burned down", importance=0.9)
    assert len(group.writes) == 1 and len(group.hot) == 0  # queued, not written yet
    (record,) = await stream.get_by_ids(first)  # no loop turn in between: still found
    assert record.text == "the bakery burned down" and record.importance == 0.9
    second = await stream.add("event", "the bakery reopened", importance=0.95)
    assert [h.id for h in await stream.search("bakery", top_k=2)] == [second, first]
    third = await group.agent(2).stream.add("social", "met the baker")
    assert await group.memory_count() == 3 and await group.memory_count(2) == 1
    assert (await group.tier_counts())["hot"] == 3
    assert first < second < third


async def test_an_add_is_stamped_with_the_clock_of_the_call(group_factory):
    group = group_factory("edge")
    await group.add_agents({1: {}})
    group.clock.set(2, 8 * 3600.0)
    memory_id = await group.agent(1).stream.add("event", "breakfast at the cafe")
    group.clock.set(3, 9 * 3600.0)  # before the queued add is written
    later = await group.agent(1).stream.add("event", "lunch at the cafe")
    (a, b) = await group.agent(1).stream.get_by_ids([memory_id, later])
    assert (a.day, a.t) == (2, 8 * 3600.0) and (b.day, b.t) == (3, 9 * 3600.0)


async def test_status_update_applies_at_once_and_embeds_when_searched(group_factory):
    group = group_factory("edge")
    await group.add_agents({1: {"name": "Ada"}})
    status = group.agent(1).status
    embedded = group.counters["embedded_texts"]
    for n in range(5):
        await status.update("thought", f"worried about the storm, take {n}")
        assert await status.get("thought") == f"worried about the storm, take {n}"
    await status.update("social_network", [3], mode="merge")
    await status.update("social_network", [4], mode="merge")
    assert await status.get("social_network") == [3, 4]
    assert group.counters["embedded_texts"] == embedded  # nothing embedded yet
    (hit,) = await status.search("storm", top_k=1)
    assert (hit.key, hit.value) == ("thought", "worried about the storm, take 4")
    assert group.counters["embedded_texts"] == embedded + 1  # the latest value, once


async def test_cancelled_write_keeps_the_adds_and_propagates(group_factory, bm25_embedder):
    group = group_factory("edge", embedder=GatedEmbedder(bm25_embedder))
    group.embedder.gate.set()
    await group.add_agents({1: {}})
    group.embedder.gate.clear()
    group.embedder.started.clear()
    stream = group.agent(1).stream
    memory_id = await stream.add("event", "a parade in the square")
    await group.embedder.started.wait()  # the drain task is writing: cancel it mid-write
    drain = next(t for t in asyncio.all_tasks() if t.get_coro().__name__ == "_drain_now")
    drain.cancel()
    with pytest.raises(asyncio.CancelledError):
        await drain
    assert group.writes.add_ids == [memory_id] and len(group.hot) == 0
    group.embedder.started.clear()
    reader = asyncio.create_task(stream.get_by_ids(memory_id))
    await group.embedder.started.wait()  # a reader writes the queue itself: cancel it too
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert reader.cancelled() and group.writes.add_ids == [memory_id]
    group.embedder.gate.set()
    assert [h.id for h in await stream.search("parade")] == [memory_id]
    assert len(group.writes) == 0 and len(group.hot) == 1


async def test_direct_add_many_comes_after_queued_adds(group_factory):
    group = group_factory("edge")
    await group.add_agents({1: {}})
    from societas.memory import AddRequest

    queued = await group.agent(1).stream.add("event", "queued first")
    (direct,) = await group.add_many(
        [AddRequest(agent_id=1, topic="event", description="written directly")]
    )
    assert queued < direct and group.hot.memory_ids(1) == [queued, direct]


def test_a_wake_up_left_in_an_ended_loop_does_not_stop_later_drains(group_factory):
    """A loop closed before the write queue's wake-up ran (its add still queued) must not
    leave the queue thinking a wake-up is coming: adds made on the next loop are written a
    turn later, the earlier one with them, as when no loop had ended."""
    group = group_factory("edge")
    first = asyncio.new_event_loop()
    first.run_until_complete(group.add_agents({1: {}}))

    def add_then_stop() -> None:  # the add's wake-up is queued behind the stop: never runs
        adding = group.agent(1).stream.add("event", "queued when the loop ended")
        with pytest.raises(StopIteration):
            adding.send(None)
        first.stop()

    first.call_soon(add_then_stop)
    first.run_forever()
    first.close()
    assert len(group.writes) == 1  # its wake-up never ran

    async def add_on_a_new_loop() -> tuple[int, int]:
        await group.agent(1).stream.add("event", "queued on the new loop")
        for _ in range(3):
            await asyncio.sleep(0)
        return len(group.writes), len(group.hot)

    assert asyncio.run(add_on_a_new_loop()) == (0, 2)


async def test_the_operation_lock_excludes_records_its_owner_and_survives_cancellation():
    """`async with` on the group's lock: taken at once when free (its owner recorded), waited
    for in arrival order when held, and a waiter cancelled while waiting leaves the lock
    usable by the next."""
    from societas.memory.store.write_queue import OwnedLock

    lock, order, inside = OwnedLock(), [], []

    async def hold(name: str, pause: float) -> None:
        async with lock:
            inside.append(name)
            assert lock.owner is asyncio.current_task() and len(inside) == 1
            order.append(name)
            await asyncio.sleep(pause)
            inside.remove(name)

    first = asyncio.create_task(hold("a", 0.02))
    await asyncio.sleep(0)
    assert lock.locked() and lock.owner is first
    doomed = asyncio.create_task(hold("cancelled", 0))
    later = [asyncio.create_task(hold(n, 0)) for n in "bc"]
    await asyncio.sleep(0)
    doomed.cancel()
    await asyncio.gather(first, *later)
    assert doomed.cancelled() and order == ["a", "b", "c"]
    assert not lock.locked() and lock.owner is None
    async with lock:  # free again: the fast path
        assert lock.owner is asyncio.current_task()
