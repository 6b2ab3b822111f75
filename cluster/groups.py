"""Group handles that do not need Ray: an in-process group, and `ResilientGroup`, which
recreates a lost group from its last checkpoint and replays the ticks since.

Faults: a group whose actor dies (its node went away, OOM, a crash) is recreated, restored
from the last complete checkpoint and replayed with the inboxes it saw since; replayed
outboxes are checked against the originals, so a non-deterministic group is an error and
never a silent divergence.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from societas.agents.runtime.protocol import (
    GroupHandle,
    Message,
    StepResult,
    TurnReply,
    TurnRequest,
)
from societas.cluster import checkpoint as ckpt

log = logging.getLogger(__name__)


class GroupLost(RuntimeError):
    """A group's process is gone (actor died, node removed); it can be recreated."""

    def __init__(self, group_id: int, cause: BaseException | None = None) -> None:
        super().__init__(f"group {group_id} lost: {cause!r}")
        self.group_id = group_id


class NonDeterministicReplay(RuntimeError):
    """A replayed tick produced a different outbox than the original run."""


def outbox_digest(result: StepResult) -> str:
    """A hash of one group's outbox and positions (what a replay must reproduce)."""
    h = hashlib.sha256()
    for m in result.outbox:
        h.update(m.model_dump_json().encode())
    h.update(json.dumps(sorted(result.positions.items())).encode())
    return h.hexdigest()


def inbox_digest(inbox: dict[int, list[Message]]) -> str:
    """A hash of everything routed for the next tick, group by group."""
    h = hashlib.sha256()
    for g in sorted(inbox):
        h.update(f"group {g}\n".encode())
        for m in inbox[g]:
            h.update(m.model_dump_json().encode())
            h.update(b"\n")
    return h.hexdigest()


class InProcessGroup:
    """A `GroupHandle` engine in the driver's process, with atomic checkpoint folders."""

    def __init__(self, engine: GroupHandle) -> None:
        self.engine = engine
        self.group_id = engine.group_id

    async def setup(self) -> None:
        """Set the engine up."""
        await self.engine.setup()

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One tick of the engine."""
        return await self.engine.step(tick, inbox)

    async def converse_round(self, requests: list[Any]) -> list[Any]:
        """One sub-round of conversation turns (cross-group conversations)."""
        return await self.engine.converse_round(requests)  # type: ignore[attr-defined]

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Write the engine's state into `directory`, atomically."""
        return await ckpt.write_group_atomic(Path(directory), self.engine.checkpoint)

    async def restore(self, directory: str) -> None:
        """Restore the engine from a checkpoint folder."""
        await self.engine.restore(directory)

    async def close(self) -> None:
        """Close the engine."""
        await self.engine.close()


class ResilientGroup:
    """A `GroupHandle` that survives its process: on `GroupLost` it recreates the group,
    restores the group's last checkpoint and replays the ticks since with the inboxes it
    logged, checking each replayed outbox against the original, then redoes the tick."""

    def __init__(self, inner: GroupHandle, max_restarts: int = 3) -> None:
        self.inner = inner
        self.group_id = inner.group_id
        self.max_restarts = max_restarts
        self.restarts = 0
        self._log: dict[int, list[Message]] = {}
        self._rounds: dict[int, list[list[TurnRequest]]] = {}  # conversation rounds per tick
        self._outs: dict[int, str] = {}
        self._last_tick: int | None = None
        self._ckpt: tuple[int, str] | None = None  # (next tick, folder)

    async def setup(self) -> None:
        """Set the group up."""
        await self.inner.setup()

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One tick; a lost group is recreated and caught up before answering."""
        self._log[tick] = inbox
        self._rounds[tick] = []
        try:
            result = await self.inner.step(tick, inbox)
        except GroupLost:
            result = await self._recover(tick)
        self._outs[tick] = outbox_digest(result)
        self._last_tick = tick
        return result

    async def converse_round(self, requests: list[TurnRequest]) -> list[TurnReply]:
        """A conversation sub-round (logged for replay); a lost group is caught up first."""
        tick = self._last_tick if self._last_tick is not None else 0
        done = self._rounds.setdefault(tick, [])
        try:
            replies = await self.inner.converse_round(requests)
        except GroupLost:
            await self._recover(tick, rounds=len(done))
            replies = await self.inner.converse_round(requests)
        done.append(requests)
        return replies

    async def _recover(self, tick: int, rounds: int = 0) -> StepResult:
        while True:
            self.restarts += 1
            if self.restarts > self.max_restarts:
                raise RuntimeError(
                    f"group {self.group_id} lost more than {self.max_restarts} times"
                )
            log.warning(
                "group %s lost at tick %s; recreating (%s)", self.group_id, tick, self.restarts
            )
            respawn = getattr(self.inner, "respawn", None)
            if respawn is None:
                raise GroupLost(self.group_id)
            self.inner = respawn()
            try:
                await self.inner.setup()
                first = min(self._log)
                if self._ckpt is not None:
                    first, folder = self._ckpt
                    await self.inner.restore(folder)
                for t in range(first, tick):
                    replay = await self.inner.step(t, self._log[t])
                    if outbox_digest(replay) != self._outs[t]:
                        raise NonDeterministicReplay(
                            f"group {self.group_id}: replayed tick {t} differs from the original"
                        )
                    for requests in self._rounds.get(t, []):
                        await self.inner.converse_round(requests)
                result = await self.inner.step(tick, self._log[tick])
                for requests in self._rounds.get(tick, [])[:rounds]:
                    await self.inner.converse_round(requests)
                return result
            except GroupLost:
                continue

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Checkpoint (atomically, by the inner handle) the state after the last tick."""
        meta = await self.inner.checkpoint(directory)
        nxt = 0 if self._last_tick is None else self._last_tick + 1
        self._ckpt = (nxt, directory)
        self._log = {t: v for t, v in self._log.items() if t >= nxt}
        self._outs = {t: v for t, v in self._outs.items() if t >= nxt}
        self._rounds = {t: v for t, v in self._rounds.items() if t >= nxt}
        return meta

    async def restore(self, directory: str) -> None:
        """Restore a checkpoint folder `.../tick=K/group-G` (resume)."""
        await self.inner.restore(directory)
        tick = int(Path(directory).parent.name.removeprefix("tick="))
        self._ckpt = (tick, directory)
        self._last_tick = tick - 1

    async def close(self) -> None:
        """Close the inner group (gone groups are ignored)."""
        try:
            await self.inner.close()
        except GroupLost:
            log.debug("group %s already gone at close", self.group_id)

    async def where(self) -> dict[str, Any]:
        """Node and pid of the inner actor."""
        return await self.inner.where()  # type: ignore[attr-defined]
