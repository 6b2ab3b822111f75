"""Group handles that do not need Ray: an in-process group, and `ResilientGroup`, which
recreates a lost group from its last checkpoint and replays the ticks since.

Faults: a group whose actor dies (its node went away, OOM, a crash) is recreated, restored
from the last complete checkpoint and replayed with the inboxes and conversation rounds it
saw since (`ReplayLog`: in RAM, or spilled to disk when checkpoints are off); replayed
outboxes are checked against the originals, so a non-deterministic group is an error and
never a silent divergence. A replayed tick's stats were reported by the original and are
dropped: every tick is counted once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from societas.agents.llm import inflight
from societas.agents.runtime.protocol import (
    GroupHandle,
    GroupStats,
    Message,
    StepResult,
    TurnReply,
    TurnRequest,
)
from societas.cluster import checkpoint as ckpt
from societas.cluster.observe.replay_log import ReplayLog

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


async def finish_tick(group: Any, tick: int, stepped: GroupStats | None) -> GroupStats:
    """The tick's complete stats: the group's `finish_tick` (after the tick's conversation
    rounds), or those a group without one (a test engine) reported with its step."""
    finish = getattr(group, "finish_tick", None)
    if finish is not None:
        stats: GroupStats = await finish(tick)
        return stats
    if stepped is None:
        raise RuntimeError(f"group {group.group_id} reported no stats for tick {tick}")
    return stepped


class InProcessGroup:
    """A `GroupHandle` engine in the driver's process, with atomic checkpoint folders."""

    def __init__(self, engine: GroupHandle) -> None:
        self.engine = engine
        self.group_id = engine.group_id
        self._stepped: GroupStats | None = None  # stats of an engine that reports at step

    async def setup(self) -> None:
        """Set the engine up."""
        await self.engine.setup()

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One tick of the engine."""
        result = await self.engine.step(tick, inbox)
        self._stepped = result.stats
        return result

    async def converse_round(self, requests: list[Any]) -> list[Any]:
        """One sub-round of conversation turns (cross-group conversations)."""
        return await self.engine.converse_round(requests)

    async def finish_tick(self, tick: int) -> GroupStats:
        """The tick's stats, once its conversation rounds are done."""
        stepped, self._stepped = self._stepped, None
        return await finish_tick(self.engine, tick, stepped)

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Write the engine's state into `directory`, atomically."""
        return await ckpt.write_group_atomic(Path(directory), self.engine.checkpoint)

    async def restore(self, directory: str) -> None:
        """Restore the engine from a checkpoint folder."""
        await self.engine.restore(directory)

    def abandon_tick(self) -> None:
        """Forget the tick in progress (a stop cut it short) so closing does not finish it."""
        abandon = getattr(self.engine, "abandon_tick", None)
        if abandon is not None:
            abandon()

    async def in_flight(self) -> dict[str, Any]:
        """The model calls in flight in this group's process: pid, calls, oldest's age (s)."""
        calls, oldest = inflight.local()
        return {"pid": os.getpid(), "calls": calls, "oldest_s": oldest}

    async def close(self) -> None:
        """Close the engine."""
        await self.engine.close()


class ResilientGroup:
    """A `GroupHandle` that survives its process: on `GroupLost` it recreates the group,
    restores the group's last checkpoint and replays the ticks since with the inboxes and
    conversation rounds it logged, checking each replayed outbox against the original, then
    redoes what was lost of the current tick."""

    def __init__(self, inner: GroupHandle, max_restarts: int = 3) -> None:
        self.inner = inner
        self.group_id = inner.group_id
        self.max_restarts = max_restarts
        self.restarts = 0
        self.replay = ReplayLog()
        self._outs: dict[int, str] = {}
        self._last_tick: int | None = None
        self._ckpt: tuple[int, str] | None = None  # (next tick, folder)

    def spill_to(self, folder: Path) -> None:
        """Keep finished ticks of the replay log in `folder`, not in RAM (checkpoints off)."""
        self.replay.spill_to(folder)

    async def setup(self) -> None:
        """Set the group up."""
        await self.inner.setup()

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One tick; a lost group is recreated and caught up before answering."""
        self.replay.start(tick, inbox)
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
        try:
            replies = await self.inner.converse_round(requests)
        except GroupLost:
            await self._recover(tick, rounds=self.replay.rounds_done(tick))
            replies = await self.inner.converse_round(requests)
        self.replay.add_round(tick, requests)
        return replies

    async def finish_tick(self, tick: int) -> GroupStats:
        """The tick's stats after its rounds; a lost group is caught up (all rounds) first."""
        try:
            stats = await self.inner.finish_tick(tick)
        except GroupLost:
            await self._recover(tick, rounds=None)
            stats = await self.inner.finish_tick(tick)
        await self.replay.finished(tick)
        return stats

    async def _recover(self, tick: int, rounds: int | None = 0) -> StepResult:
        """Recreate, restore, replay the ticks before `tick` (stats dropped: reported
        already), step `tick` again and redo its first `rounds` rounds (None: all)."""
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
                first = self.replay.first()
                if self._ckpt is not None:
                    first, folder = self._ckpt
                    await self.inner.restore(folder)
                for t in range(tick if first is None else first, tick):
                    logged = await self.replay.load(t)
                    replay = await self.inner.step(t, logged.inbox)
                    if outbox_digest(replay) != self._outs[t]:
                        raise NonDeterministicReplay(
                            f"group {self.group_id}: replayed tick {t} differs from the original"
                        )
                    for requests in logged.rounds:
                        await self.inner.converse_round(requests)
                    await self.inner.finish_tick(t)  # reported by the original: dropped
                now = await self.replay.load(tick)
                result = await self.inner.step(tick, now.inbox)
                for requests in now.rounds[:rounds]:
                    await self.inner.converse_round(requests)
                return result
            except GroupLost:
                continue

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Checkpoint (atomically, by the inner handle) the state after the last tick."""
        meta = await self.inner.checkpoint(directory)
        nxt = 0 if self._last_tick is None else self._last_tick + 1
        self._ckpt = (nxt, directory)
        self.replay.drop_before(nxt)  # the log restarts at every checkpoint
        self._outs = {t: v for t, v in self._outs.items() if t >= nxt}
        return meta

    async def restore(self, directory: str) -> None:
        """Restore a checkpoint folder `.../tick=K/group-G` (resume)."""
        await self.inner.restore(directory)
        tick = int(Path(directory).parent.name.removeprefix("tick="))
        self._ckpt = (tick, directory)
        self._last_tick = tick - 1

    async def close(self) -> None:
        """Close the inner group (gone groups are ignored) and delete the replay log."""
        try:
            await self.inner.close()
        except GroupLost:
            log.debug("group %s already gone at close", self.group_id)
        finally:
            self.replay.close()

    async def where(self) -> dict[str, Any]:
        """Node and pid of the inner actor."""
        return await self.inner.where()  # type: ignore[attr-defined]

    async def in_flight(self) -> dict[str, Any]:
        """The inner group's calls in flight (none while it is lost or being recreated)."""
        ask = getattr(self.inner, "in_flight", None)
        if ask is None:
            return {}
        try:
            found: dict[str, Any] = await ask()
        except GroupLost:
            return {}
        return found
