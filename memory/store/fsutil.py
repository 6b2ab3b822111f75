"""Atomic file writes: write beside, fsync, rename — a reader sees the old file or the new one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_parquet_atomic(path: Path, table: pa.Table, row_group_size: int = 64_000) -> None:
    """Write a zstd Parquet file atomically."""
    with parquet_writer_atomic(path, table.schema) as writer:
        writer.write_table(table, row_group_size)


@contextmanager
def parquet_writer_atomic(path: Path, schema: pa.Schema) -> Iterator[pq.ParquetWriter]:
    """A zstd Parquet writer whose file appears at `path` only once complete and synced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    writer = pq.ParquetWriter(tmp, schema, compression="zstd")
    try:
        yield writer
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    writer.close()
    with open(tmp, "rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
