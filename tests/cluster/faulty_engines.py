"""Test helper (not shipped): real `GroupEngine`s whose process dies once at a chosen moment.

`DiesMidMigration` arms itself from tick `crash_tick` on: at the group's next warm → cold move
it lets the cold Parquet parts and the migration journal reach the disk, then ends its process
with `os._exit` before the warm copies are deleted, the moment where a careless recovery would
lose or duplicate memories. `DiesInConversation` dies in a conversation round, or in
`finish_tick` after the rounds, of a chosen tick. A marker file makes the crash happen once per
run (the recreated actor builds the same engine and must not die again).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from societas.agents.runtime.engine import GroupEngine
from societas.agents.runtime.protocol import (
    GroupStats,
    Message,
    StepResult,
    TurnReply,
    TurnRequest,
)
from societas.cluster.ray.runtime import EngineFactory


class DiesMidMigration(GroupEngine):
    """A real group engine that kills its own process inside a tier migration, once."""

    def __init__(self, *args: Any, crash_tick: int, marker: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.crash_tick = crash_tick
        self.marker = Path(marker)
        self._tick = -1

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """Arm the crash from `crash_tick` on (unless it already happened), then step."""
        self._tick = tick
        if tick >= self.crash_tick and not self.marker.exists():
            self._arm()
        return await super().step(tick, inbox)

    def _arm(self) -> None:
        assert self.memory is not None
        journal = self.memory.journal
        record = journal.record

        def record_then_die(parts: list[Path], ids: list[int]) -> None:
            record(parts, ids)  # cold parts written and journaled; warm copies still there
            pending = journal.pending()
            self.marker.write_text(json.dumps({"tick": self._tick, "pid": os.getpid(), **pending}))
            os._exit(1)

        journal.record = record_then_die  # type: ignore[method-assign]


class FaultyEngineFactory(EngineFactory):
    """`EngineFactory` whose group `group_id` is a `DiesMidMigration` (picklable)."""

    def __init__(self, *args: Any, group_id: int, crash_tick: int, marker: Path) -> None:
        super().__init__(*args)
        self.crash_group = group_id
        self.crash_tick = crash_tick
        self.marker = Path(marker)

    def __call__(self, group_id: int) -> GroupEngine:  # type: ignore[override]
        """The engine of one group; the chosen one dies mid-migration once."""
        if group_id != self.crash_group:
            return super().__call__(group_id)  # type: ignore[return-value]
        return DiesMidMigration(
            self.scenario,
            group_id,
            self.ids[group_id],
            self.run_dir,
            crash_tick=self.crash_tick,
            marker=self.marker,
        )


class DiesInConversation(GroupEngine):
    """A real group engine that ends its process once at tick `crash_tick`: in its first
    conversation round (`where="round"`) or in `finish_tick`, after the rounds (`"finish"`)."""

    def __init__(self, *args: Any, crash_tick: int, marker: Path, where: str, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.crash_tick, self.marker, self.where = crash_tick, Path(marker), where

    def _die_once(self, tick: int, where: str) -> None:
        if where == self.where and tick == self.crash_tick and not self.marker.exists():
            self.marker.write_text(json.dumps({"tick": tick, "where": where, "pid": os.getpid()}))
            os._exit(1)

    async def converse_round(self, requests: list[TurnRequest]) -> list[TurnReply]:
        """Die here once (at `crash_tick`, when asked), else answer the round."""
        self._die_once(requests[0].tick if requests else -1, "round")
        return await super().converse_round(requests)

    async def finish_tick(self, tick: int) -> GroupStats:
        """Die here once (at `crash_tick`, when asked), else report the tick."""
        self._die_once(tick, "finish")
        return await super().finish_tick(tick)


class DyingEngineFactory(EngineFactory):
    """`EngineFactory` whose group `group_id` is a `DiesInConversation` (picklable)."""

    def __init__(self, *args: Any, group_id: int, crash_tick: int, marker: Path, where: str):
        super().__init__(*args)
        self.crash = (group_id, crash_tick, Path(marker), where)

    def __call__(self, group_id: int) -> GroupEngine:  # type: ignore[override]
        """The engine of one group; the chosen one dies once."""
        crash_group, tick, marker, where = self.crash
        if group_id != crash_group:
            return super().__call__(group_id)  # type: ignore[return-value]
        return DiesInConversation(
            self.scenario,
            group_id,
            self.ids[group_id],
            self.run_dir,
            crash_tick=tick,
            marker=marker,
            where=where,
        )
