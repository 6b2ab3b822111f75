"""Coalesces concurrent per-agent calls into one batched call per event-loop turn."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Req = TypeVar("Req")
Res = TypeVar("Res")


class MicroBatcher(Generic[Req, Res]):
    """Agents awaiting `submit` in one tick share one `run_batch` call; alone, a batch of one."""

    def __init__(
        self, run_batch: Callable[[Sequence[Req]], Awaitable[Sequence[Res]]], yields: int = 1
    ) -> None:
        self._run_batch = run_batch
        self._yields = yields
        self._pending: list[tuple[Req, asyncio.Future[Res]]] = []
        self._drain_task: asyncio.Task[None] | None = None
        self.batches = 0
        self.items = 0

    async def submit(self, request: Req) -> Res:
        return await self.enqueue(request)

    def enqueue(self, request: Req) -> Awaitable[Res]:
        """`submit` without its own coroutine: the future of the joined batch for `request`."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Res] = loop.create_future()
        self._pending.append((request, future))
        if self._drain_task is None:
            self._drain_task = loop.create_task(self._drain())
        return future

    async def _drain(self) -> None:
        for _ in range(self._yields):
            await asyncio.sleep(0)
        batch, self._pending = self._pending, []
        self._drain_task = None
        self.batches += 1
        self.items += len(batch)
        try:
            results = await self._run_batch([request for request, _ in batch])
        except Exception as exc:
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        except BaseException:
            # Cancelled (or exiting): the waiters are cancelled too; the cancellation propagates.
            for _, future in batch:
                future.cancel()
            raise
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)
