"""Merging a cold day window's Parquet parts into one, a slice of agents at a time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from societas.memory.model.records_meta import conform
from societas.memory.store.fsutil import parquet_writer_atomic

MERGE_ROWS = 10_000  # rows sorted and written at a time (about: slices are agent ranges)
_ORDER = [("agent_id", "ascending"), ("id", "ascending")]


def merge_parts(
    parts: Sequence[tuple[pq.ParquetFile, pq.ParquetFile, list[tuple[int, int]]]],
    out_rows: Path,
    out_vectors: Path,
    row_schema: pa.Schema,
    row_group: int,
    drop_expired_before: float | None = None,
) -> None:
    """Write `parts`' unexpired rows and vectors, sorted by (agent, id), atomically."""
    total = sum(rows.metadata.num_rows for rows, _, _ in parts)
    ranges = [r for _, _, agent_ranges in parts for r in agent_ranges]
    lowest, highest = min(lo for lo, _ in ranges), max(hi for _, hi in ranges)
    slices = max(1, math.ceil(total / MERGE_ROWS))
    step = max(1, math.ceil((highest - lowest + 1) / slices))
    vector_schema = parts[0][1].schema_arrow
    # the vectors file closes first: a part is done once its rows file exists
    with (
        parquet_writer_atomic(out_rows, row_schema) as rows_out,
        parquet_writer_atomic(out_vectors, vector_schema) as vectors_out,
    ):
        for first in range(lowest, highest + 1, step):
            last = first + step - 1
            rows_in, vectors_in = [], []
            for rows_file, vectors_file, agent_ranges in parts:
                groups = [
                    i for i, (lo, hi) in enumerate(agent_ranges) if lo <= last and hi >= first
                ]
                if groups:
                    rows_in.append(
                        conform(rows_file.read_row_groups(groups, use_threads=False), row_schema)
                    )
                    vectors_in.append(vectors_file.read_row_groups(groups, use_threads=False))
            if not rows_in:
                continue
            rows = _agents_between(pa.concat_tables(rows_in), first, last)
            vectors = _agents_between(pa.concat_tables(vectors_in), first, last)
            if drop_expired_before is not None:  # expired memories leave cold at compaction
                expires = pc.fill_null(rows["expires_at"], math.inf)
                rows = rows.filter(pc.greater(expires, drop_expired_before))
                vectors = vectors.filter(pc.is_in(vectors["id"], value_set=rows["id"]))
            if rows.num_rows:
                rows_out.write_table(rows.take(pc.sort_indices(rows, sort_keys=_ORDER)), row_group)
                vectors_out.write_table(
                    vectors.take(pc.sort_indices(vectors, sort_keys=_ORDER)), row_group
                )
            del rows_in, vectors_in, rows, vectors
            pa.default_memory_pool().release_unused()  # the slice's buffers, before the next


def _agents_between(table: pa.Table, first: int, last: int) -> pa.Table:
    """The rows of agents `first`..`last` (a row group read may hold others at its edges)."""
    agent = table["agent_id"]
    return table.filter(pc.and_(pc.greater_equal(agent, first), pc.less_equal(agent, last)))
