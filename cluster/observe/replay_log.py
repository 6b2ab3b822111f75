"""What the driver keeps to replay a lost group: each tick's inbox and conversation rounds
since the group's last checkpoint (from the run's start when checkpoints are off).

A checkpoint drops the ticks before it. A finished tick is kept as gzipped JSON, not as
objects: a tick holds about one message per agent (encounters), and packed messages are a
small fraction of their pydantic objects, so the driver's memory stays small between
checkpoints of a large run. With a spill folder (checkpoints off: nothing would ever drop
them), the packed tick goes to disk (`RUN_DIR/replay/group-G/tick-T.json.gz`) instead, so
the driver holds the current tick only; the files are deleted at the next checkpoint and
when the group closes. JSON, not pickle: a file never runs code when it is read back.
"""

from __future__ import annotations

import asyncio
import gzip
import shutil
from pathlib import Path

from pydantic import BaseModel, Field

from societas.agents.runtime.protocol import Message, TurnRequest


class LoggedTick(BaseModel):
    """One tick as a group saw it: its inbox and the requests of each conversation round."""

    tick: int = Field(ge=0)
    inbox: list[Message] = Field(default_factory=list)
    rounds: list[list[TurnRequest]] = Field(default_factory=list)


class ReplayLog:
    """The ticks a lost group must replay, in RAM or (once finished, when spilling) on disk."""

    def __init__(self) -> None:
        self._ram: dict[int, LoggedTick] = {}  # the tick in progress (and one being redone)
        self._packed: dict[int, bytes] = {}  # finished ticks, gzipped JSON
        self._spilled: set[int] = set()
        self.folder: Path | None = None

    def spill_to(self, folder: Path) -> None:
        """From now on, finished ticks go to `folder` (left over files are removed first)."""
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder

    @property
    def in_ram(self) -> int:
        """Ticks whose inbox the driver holds in RAM (as objects or packed)."""
        return len(self._ram) + len(self._packed)

    @property
    def on_disk(self) -> int:
        """Ticks spilled to the folder."""
        return len(self._spilled)

    def first(self) -> int | None:
        """The earliest tick logged."""
        ticks = [*self._ram, *self._packed, *self._spilled]
        return min(ticks) if ticks else None

    def start(self, tick: int, inbox: list[Message]) -> None:
        """A tick begins with this inbox (a redo of the same tick starts it afresh)."""
        self._drop_file(tick)
        self._packed.pop(tick, None)
        self._ram[tick] = LoggedTick(tick=tick, inbox=list(inbox))

    def add_round(self, tick: int, requests: list[TurnRequest]) -> None:
        """One conversation round of the current tick, done."""
        self._ram[tick].rounds.append(list(requests))

    def rounds_done(self, tick: int) -> int:
        """Conversation rounds of `tick` logged so far (the current tick is in RAM)."""
        entry = self._ram.get(tick)
        return 0 if entry is None else len(entry.rounds)

    async def load(self, tick: int) -> LoggedTick:
        """The logged tick, from RAM (objects or packed) or its file."""
        entry = self._ram.get(tick)
        if entry is not None:
            return entry
        data = self._packed.get(tick)
        if data is None:
            if tick not in self._spilled or self.folder is None:
                raise KeyError(f"tick {tick} is not in the replay log")
            data = await asyncio.to_thread(self._path(tick).read_bytes)
        return await asyncio.to_thread(_unpack, data)

    async def finished(self, tick: int) -> None:
        """The tick is over: packed (off the event loop), kept in RAM or, when spilling,
        written to disk; its objects go."""
        entry = self._ram.get(tick)
        if entry is None:
            return
        data = await asyncio.to_thread(_pack, entry)
        if self.folder is None:
            self._packed[tick] = data
        else:
            await asyncio.to_thread(self._path(tick).write_bytes, data)
            self._spilled.add(tick)
        del self._ram[tick]

    def drop_before(self, tick: int) -> None:
        """A checkpoint before `tick`: the earlier ticks will never be replayed."""
        for t in [t for t in self._ram if t < tick]:
            del self._ram[t]
        for t in [t for t in self._packed if t < tick]:
            del self._packed[t]
        for t in [t for t in self._spilled if t < tick]:
            self._drop_file(t)

    def close(self) -> None:
        """Forget everything and delete the spill folder."""
        self._ram.clear()
        self._packed.clear()
        self._spilled.clear()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            parent = self.folder.parent
            if parent.name == "replay" and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()  # the last group's folder gone: the run's replay/ too

    def _path(self, tick: int) -> Path:
        assert self.folder is not None
        return self.folder / f"tick-{tick:06d}.json.gz"

    def _drop_file(self, tick: int) -> None:
        if tick in self._spilled:
            self._spilled.discard(tick)
            self._path(tick).unlink(missing_ok=True)


def _pack(entry: LoggedTick) -> bytes:
    """A finished tick as gzipped JSON (the spill file's bytes)."""
    return gzip.compress(entry.model_dump_json().encode(), compresslevel=1)


def _unpack(data: bytes) -> LoggedTick:
    return LoggedTick.model_validate_json(gzip.decompress(data))
