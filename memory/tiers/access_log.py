"""A group's access log: memory reads, writes and deletes, flushed as Parquet parts in order."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from societas.memory.store.fsutil import write_parquet_atomic

OPS = ("read", "write", "update", "delete", "expire", "move_cold")
SCHEMA = pa.schema(
    [
        ("time", pa.float64()),
        ("agent_id", pa.int64()),
        ("memory_id", pa.int64()),
        ("op", pa.dictionary(pa.int8(), pa.string())),
        ("context", pa.string()),
    ]
)
_PART = re.compile(r"part-(\d+)\.parquet$")


class AccessLog:
    """Buffered access records of one group, flushed as Parquet parts."""

    def __init__(self, root: Path, group_id: int) -> None:
        self.dir = Path(root) / "access_log" / f"group={group_id}"
        self._cols: dict[str, list] = {name: [] for name in SCHEMA.names}
        found = [int(m.group(1)) for f in self.files() if (m := _PART.search(f.name))]
        self._next = 1 + max(found, default=0)

    def __len__(self) -> int:
        return len(self._cols["time"])

    def files(self) -> list[Path]:
        return sorted(self.dir.glob("part-*.parquet")) if self.dir.exists() else []

    def log(
        self, time: float, op: str, entries: Iterable[tuple[int, int]], context: str | None = None
    ) -> None:
        """Record `op` at `time` on (agent_id, memory_id) pairs, with one context string."""
        if op not in OPS:
            raise ValueError(f"access log op must be one of {OPS}, got {op!r}")
        cols = self._cols
        for agent_id, memory_id in entries:
            cols["time"].append(time)
            cols["agent_id"].append(agent_id)
            cols["memory_id"].append(memory_id)
            cols["op"].append(op)
            cols["context"].append(context)

    def flush(self) -> Path | None:
        """Write the buffered records as one part (disk I/O: call it off the event loop)."""
        if not len(self):
            return None
        cols, self._cols = self._cols, {name: [] for name in SCHEMA.names}
        path = self.dir / f"part-{self._next:06d}.parquet"
        self._next += 1
        write_parquet_atomic(path, pa.table(cols, schema=SCHEMA), 65_536)
        return path
