"""Per-agent writes that return at once: queued stream adds and lazy KV re-embeddings."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from societas.memory.model.records import AddRequest

Write = Callable[[Sequence["AddRequest"], Sequence[int], tuple[int, float]], Awaitable[None]]
EmbedStale = Callable[[list[tuple[int, str]]], Awaitable[None]]

log = logging.getLogger(__name__)


class OwnedLock:
    """The group's operation lock, knowing which task holds it (so it is not retaken inside)."""

    __slots__ = ("_lock", "owner")

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self.owner: asyncio.Task | None = None

    def locked(self) -> bool:
        return self._lock.locked()

    async def acquire(self) -> bool:
        await self._lock.acquire()  # returns at once, without suspending, when free
        self.owner = asyncio.current_task()
        return True

    def release(self) -> None:
        self.owner = None
        self._lock.release()

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


class WriteQueue:
    """A group's queued adds (ids already taken) and KV slots whose embedding is stale."""

    def __init__(self, write: Write, embed_stale: EmbedStale, lock: OwnedLock, yields: int) -> None:
        self.write = write  # stores memories under ids taken, at a clock stamp (lock held)
        self.embed_stale = embed_stale  # embeds the current values of (agent, key) slots
        self.lock = lock  # the group's operation lock, taken by the drain task
        self.yields = yields
        self.adds: list[AddRequest] = []
        self.add_ids: list[int] = []
        self.stamps: list[tuple[int, float]] = []  # the clock (day, t) when each was added
        self.kv: dict[tuple[int, str], None] = {}  # (agent, key), in first-changed order
        self.drains = 0  # batches written by the drain task (tests, stats)
        self._drain: asyncio.Task[None] | None = None
        self._wake_loop: asyncio.AbstractEventLoop | None = None  # holding the wake-up

    def __len__(self) -> int:
        return len(self.adds) + len(self.kv)

    def _draining_on(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether a drain task of `loop` is still to run (one of an ended loop is not)."""
        drain = self._drain
        return drain is not None and not drain.done() and drain.get_loop() is loop

    def add(self, request: AddRequest, memory_id: int, stamp: tuple[int, float]) -> None:
        """Queue one validated memory under its id, stamped with the clock of the call."""
        self.adds.append(request)
        self.add_ids.append(memory_id)
        self.stamps.append(stamp)
        loop = asyncio.get_running_loop()
        if self._wake_loop is loop or self._draining_on(loop):
            return  # a wake-up or a drain to come writes this one too
        if self.yields:
            self._wake_loop = loop
            loop.call_soon(self._wake, loop, self.yields)
        else:
            self._drain = loop.create_task(self._drain_now())

    def touch_kv(self, slot: tuple[int, str]) -> None:
        """An embedded attribute changed: embed its value when something reads embeddings."""
        self.kv[slot] = None

    async def apply(self, kv: bool = True) -> None:
        """Write the queued adds (and, with `kv`, stale KV embeddings); caller holds the lock."""
        while self.adds:  # one batch per clock value, in the order they were added
            stamp = self.stamps[0]
            n = _run(self.stamps)
            requests, ids = self.adds[:n], self.add_ids[:n]
            del self.adds[:n], self.add_ids[:n], self.stamps[:n]
            try:
                await self.write(requests, ids, stamp)
            except BaseException:
                self.adds[:0], self.add_ids[:0], self.stamps[:0] = requests, ids, [stamp] * n
                raise
        if kv and self.kv:
            slots, self.kv = list(self.kv), {}
            try:
                await self.embed_stale(slots)
            except BaseException:
                self.kv = {**dict.fromkeys(slots), **self.kv}
                raise

    def _wake(self, loop: asyncio.AbstractEventLoop, turns: int) -> None:
        """A loop turn after an add: start the drain task if adds are still queued."""
        if turns > 1 and self.adds:
            loop.call_soon(self._wake, loop, turns - 1)
            return
        self._wake_loop = None
        if self.adds and not self._draining_on(loop):
            self._drain = loop.create_task(self._drain_now())

    async def _drain_now(self) -> None:
        self._drain = None
        if not self.adds:
            return
        self.drains += 1
        try:
            async with self.lock:
                await self.apply(kv=False)
        except Exception as exc:  # kept queued: the next read retries and raises
            log.warning("queued memories not written yet (%d): %r", len(self.adds), exc)


def _run(stamps: list[tuple[int, float]]) -> int:
    """How many leading entries share the first stamp."""
    first = stamps[0]
    if stamps.count(first) == len(stamps):  # the usual case: one tick's adds
        return len(stamps)
    return next(i for i, stamp in enumerate(stamps) if stamp != first)
