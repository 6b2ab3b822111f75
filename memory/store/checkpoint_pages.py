"""A group checkpoint's large files, written a page (one row group) at a time."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from societas.memory.tiers.cold import ROW_SCHEMA, VECTOR_SCHEMA, rows_table, vectors_table
from societas.memory.vectorstores.base import ScoredPoint

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory
    from societas.memory.store.deferred_store import DeferredStore
    from societas.memory.store.hot_store import HotStore

PAGE = 10_000


class ParquetPages:
    """One zstd Parquet file written a table at a time; fsynced when closed."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = path
        self.rows = 0
        self._writer = pq.ParquetWriter(path, schema, compression="zstd")

    def write(self, table: pa.Table) -> None:
        """Append `table`'s rows (a row group of them; nothing for an empty table)."""
        if table.num_rows:
            self._writer.write_table(table)
            self.rows += table.num_rows

    def close(self) -> None:
        self._writer.close()
        with open(self.path, "rb+") as handle:
            os.fsync(handle.fileno())


def write_pages(path: Path, schema: pa.Schema, tables: Iterator[pa.Table]) -> int:
    """Write every table of `tables` into one file at `path`; returns the rows written."""
    out = ParquetPages(path, schema)
    try:
        for table in tables:
            out.write(table)
    finally:
        out.close()
    return out.rows


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a Parquet file as dicts, one batch of PAGE rows decoded at a time."""
    for batch in pq.ParquetFile(path).iter_batches(batch_size=PAGE):
        yield from batch.to_pylist()


def pages(items: Iterator[Any], size: int | None = None) -> Iterator[list[Any]]:
    """`items` in lists of `size` (default PAGE; the last one shorter)."""
    while chunk := list(islice(items, size or PAGE)):
        yield chunk


def hot_point_pages(hot: HotStore) -> Iterator[list[ScoredPoint]]:
    """Hot rows per agent oldest first, as payload-shaped points, a page at a time."""

    points = (ScoredPoint(id=p.pop("id"), score=0.0, payload=p) for p in hot.rows_in_order())
    return pages(points)


def pending_ids(store: DeferredStore | None) -> np.ndarray:
    """The ids of the memories pending in RAM, ascending (none for a store without any)."""
    if store is None:
        return np.empty(0, np.int64)
    ids = np.fromiter(store.pending, np.int64, len(store.pending))
    ids.sort()
    return ids


def pending_point_pages(store: DeferredStore, ids: np.ndarray) -> Iterator[list[ScoredPoint]]:
    """The pending memories `ids` as points, a page at a time."""
    for start in range(0, len(ids), PAGE):
        yield store.pending_points(ids[start : start + PAGE].tolist())


def kv_row_pages(group: GroupMemory, schema: pa.Schema) -> Iterator[pa.Table]:
    """Every agent's KV values as tables of up to PAGE rows."""
    for chunk in pages(group.kv_row_iter()):
        agent_ids, keys, values = zip(*chunk, strict=True)
        yield pa.table(
            {"agent_id": list(agent_ids), "key": list(keys), "value": list(values)},
            schema=schema,
        )


class PointFiles:
    """Pages of points into a rows file and a vectors file (warm.rows / warm.vectors)."""

    def __init__(self, rows_path: Path, vectors_path: Path) -> None:
        self.rows = ParquetPages(rows_path, ROW_SCHEMA)
        self.vectors = ParquetPages(vectors_path, VECTOR_SCHEMA)

    def write(self, points: Sequence[ScoredPoint]) -> None:
        if points:
            self.rows.write(rows_table(points))
            self.vectors.write(vectors_table(points))

    def close(self) -> None:
        self.rows.close()
        self.vectors.close()
