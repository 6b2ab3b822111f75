"""Checkpoint and restore of one group's memory: Parquet + JSON, renamed into place atomically."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from societas.memory.model.associations import Association
from societas.memory.model.records_meta import restored_payload
from societas.memory.store.deferred_store import DeferredStore
from societas.memory.store.fsutil import fsync_dir, write_bytes_atomic, write_parquet_atomic
from societas.memory.store.heap import release_free_memory
from societas.memory.store.kv_index import KVDeferredStore
from societas.memory.tiers.cold import (
    ROW_SCHEMA,
    VECTOR_SCHEMA,
    ColdStore,
    row_vectors,
    rows_table,
    vectors_table,
)
from societas.memory.vectorstores.base import MemoryPoint, ScoredPoint

if TYPE_CHECKING:
    from societas.memory.embedding import Embedder
    from societas.memory.group import GroupMemory
    from societas.memory.model.config import GroupMemoryConfig, MemoryConfig

FORMAT_VERSION = 1
KV_SCHEMA = pa.schema([("agent_id", pa.int64()), ("key", pa.string()), ("value", pa.string())])
KV_POINT_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("agent_id", pa.int64()),
        ("key", pa.string()),
        ("text", pa.string()),
        ("sparse_indices", pa.list_(pa.uint32())),
        ("sparse_values", pa.list_(pa.float32())),
        ("dense", pa.list_(pa.float32())),
    ]
)
READS_SCHEMA = pa.schema([("id", pa.int64()), ("reads", pa.int64()), ("last", pa.float64())])
PAGE = 10_000  # rows a checkpoint file holds as Python objects at a time


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


def kv_row_pages(group: GroupMemory, schema: pa.Schema) -> Iterator[pa.Table]:
    """Every agent's KV values as tables of up to PAGE rows."""
    for chunk in pages(group.kv_row_iter()):
        agent_ids, keys, values = zip(*chunk, strict=True)
        yield pa.table(
            {"agent_id": list(agent_ids), "key": list(keys), "value": list(values)}, schema=schema
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


async def _scroll_pages(scroll) -> AsyncIterator[list[ScoredPoint]]:
    """Every page of points a store's `scroll` function pages through, PAGE at a time."""
    offset = None
    while True:
        page, offset = await scroll(offset, PAGE)
        yield page
        if offset is None:
            return


async def _all_points(store, scroll=None) -> list[ScoredPoint]:
    """Every point a store's `scroll` (or the given scroll function) pages through."""
    return [p async for page in _scroll_pages(scroll or store.scroll) for p in page]


async def checkpoint(group: GroupMemory, directory: Path) -> dict[str, Any]:
    """Write the group's memory under `directory` (must not exist yet); returns the manifest."""
    from societas.memory.tiers import tiering

    directory = Path(directory)
    if directory.exists():
        raise FileExistsError(f"checkpoint directory {str(directory)!r} already exists")
    await tiering.recover(group)
    reads = group.access.get_state()  # read counts not yet in the store: kept, not written
    await group.store.optimize()  # deleted (cold) points leave IDF: the rebuilt store matches
    await group.flush()
    store = group.store
    deferred = store if isinstance(store, DeferredStore) else None
    state = {
        "format_version": FORMAT_VERSION,
        **group.get_state(),
        "config": group.config.model_dump(mode="json"),
        "cognitive": group.cognition.get_state() if group.cognition is not None else None,
        "boosts": group.boosts.get_state(),  # kept pending: written when the run would have
        "policies": group.policy_state.get_state(),
    }
    tmp = directory.with_name(f".{directory.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    await asyncio.to_thread(tmp.mkdir, parents=True)
    warm = await asyncio.to_thread(
        PointFiles, tmp / "warm.rows.parquet", tmp / "warm.vectors.parquet"
    )
    try:  # the engine's points, a page at a time (pending memories are not written first)
        scroll = deferred.engine_scroll if deferred is not None else store.scroll
        async for page in _scroll_pages(scroll):
            await asyncio.to_thread(warm.write, page)
    except BaseException:
        await asyncio.to_thread(warm.close)
        raise

    kv_store = group.kv_store
    kv_engine_points = (  # KV points the engine holds: scrolled whole (six an agent)
        None if isinstance(kv_store, KVDeferredStore) else await _all_points(kv_store)
    )

    def write() -> dict[str, Any]:
        held = np.empty(0, np.int64)  # ids pending in RAM, ascending
        try:  # then the memories pending in RAM: a restore puts them back as pending
            if deferred is not None:
                held = np.sort(np.fromiter(deferred.pending, np.int64, len(deferred.pending)))
                for start in range(0, len(held), PAGE):
                    warm.write(deferred.pending_points(held[start : start + PAGE].tolist()))
        finally:
            warm.close()
        write_parquet_atomic(tmp / "pending.parquet", pa.table({"id": pa.array(held, pa.int64())}))
        write_pages(tmp / "kv.parquet", KV_SCHEMA, kv_row_pages(group, KV_SCHEMA))
        write_parquet_atomic(tmp / "reads.parquet", pa.table(reads, schema=READS_SCHEMA))
        hot = (ScoredPoint(id=p.pop("id"), score=0.0, payload=p) for p in group.hot.rows_in_order())
        hot_rows = write_pages(tmp / "hot.parquet", ROW_SCHEMA, (rows_table(p) for p in pages(hot)))
        if kv_engine_points is None:
            kv_count, kv_pages = kv_store.index_point_pages(PAGE)  # type: ignore[attr-defined]
        else:
            kv_count, kv_pages = len(kv_engine_points), iter([kv_engine_points])
        write_pages(
            tmp / "kv_points.parquet",
            KV_POINT_SCHEMA,
            (vectors_table(p, KV_POINT_SCHEMA) for p in kv_pages),
        )
        write_parquet_atomic(tmp / "associations.parquet", group.associations.to_table())
        cold_files = []
        for part in group.cold.row_files():
            for path in (part, Path(str(part).replace(".rows.", ".vectors."))):
                rel = path.relative_to(group.cold.dir)
                target = tmp / "cold" / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
                cold_files.append(str(rel))
        write_bytes_atomic(tmp / "state.json", json.dumps(state, indent=1).encode())
        manifest = {
            "format_version": FORMAT_VERSION,
            "group_id": group.config.group_id,
            "warm_points": warm.rows.rows,
            "pending_points": len(held),
            "hot_rows": hot_rows,
            "kv_points": kv_count,
            "cold_files": sorted(cold_files),
            "cold_rows": group.cold.count(),
        }
        write_bytes_atomic(tmp / "manifest.json", json.dumps(manifest, indent=1).encode())
        os.replace(tmp, directory)
        fsync_dir(directory.parent)
        pa.default_memory_pool().release_unused()  # the pages' Arrow buffers, back to the OS
        release_free_memory()  # and the rows' freed heap pages
        return manifest

    return await asyncio.to_thread(write)


async def restore(
    directory: Path,
    root: Path,
    *,
    config: GroupMemoryConfig | None = None,
    memory_config: MemoryConfig | None = None,
    embedder: Embedder | None = None,
) -> GroupMemory:
    """A GroupMemory under `root` (a fresh run dir) holding exactly what was checkpointed."""
    from societas.memory.group import GroupMemory
    from societas.memory.model.citizen import CITIZEN_MEMORY_CONFIG
    from societas.memory.model.config import GroupMemoryConfig

    directory = Path(directory)
    manifest_path = directory / "manifest.json"
    if not manifest_path.exists():
        raise FileNotFoundError(
            f"{str(directory)!r} is not a complete checkpoint (no manifest.json)"
        )
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"checkpoint format_version {manifest.get('format_version')!r} is not {FORMAT_VERSION}"
        )
    state = json.loads((directory / "state.json").read_text())
    config = config or GroupMemoryConfig.model_validate(state["config"])
    if config.group_id != state["group_id"]:
        raise ValueError(
            f"config.group_id {config.group_id} does not match the checkpoint's "
            f"group {state['group_id']}"
        )
    cold_src = directory / "cold"
    if cold_src.exists():  # in place before the group opens its cold store
        cold_dir = ColdStore(Path(root) / "cold", config.group_id).dir
        shutil.copytree(cold_src, cold_dir, dirs_exist_ok=True)
    group = GroupMemory(
        config, memory_config or CITIZEN_MEMORY_CONFIG, root=Path(root), embedder=embedder
    )
    pending_file = directory / "pending.parquet"  # older checkpoints: everything was written
    pending = (
        pq.read_table(pending_file).column("id").to_numpy()
        if pending_file.exists() and isinstance(group.store, DeferredStore)
        else np.empty(0, np.int64)  # no RAM index to hold them: they go to the engine
    )
    layers = group.profiles.any_forgetting
    expiring = group.expiring
    group.hot.set_state(read_rows(directory / "hot.parquet"))
    warm = zip(  # the two files hold the same points in the same order
        read_rows(directory / "warm.rows.parquet"),
        read_rows(directory / "warm.vectors.parquet"),
        strict=True,
    )
    for page in pages(warm):
        points, rows = [], [row for row, _ in page]
        for row, vectors in page:
            if row["id"] != vectors["id"]:
                raise ValueError(f"checkpoint {str(directory)!r}: warm rows and vectors differ")
            points.append(MemoryPoint(row["id"], row_vectors(vectors), _payload_of(row, layers)))
            if row.get("expires_at") is not None:
                expiring[row["id"]] = row["expires_at"]
        ids = np.fromiter((p.id for p in points), np.int64, len(points))
        held = np.isin(ids, pending).tolist()
        written = [p for p, h in zip(points, held, strict=True) if not h]
        if written:
            await group.store.upsert(written)
        if len(written) < len(points):  # only a DeferredStore has pending ids
            assert group.deferred is not None
            group.deferred.restore_pending([p for p, h in zip(points, held, strict=True) if h])
            group.warm_rows.set_state(  # pending memories that had left hot
                row for row, h in zip(rows, held, strict=True) if h and row["id"] not in group.hot
            )
    for page in pages(read_rows(directory / "kv_points.parquet")):
        kv_points = []
        for r in page:  # each (agent, key)'s engine point id (older checkpoints: state.json)
            group.kv_point[(r["agent_id"], r["key"])] = r["id"]
            payload = {"agent_id": r["agent_id"], "key": r["key"], "text": r["text"]}
            kv_points.append(MemoryPoint(r["id"], row_vectors(r), payload))
        await group.kv_store.upsert(kv_points)
    group.set_kv_rows(read_rows(directory / "kv.parquet"))
    group.set_state(state)
    group.profiles.assign_from_kv(group.kv_by_key, group.known_agents)  # follow agent types
    if group.cognition is not None and state.get("cognitive"):  # buffers, working memory
        group.cognition.set_state(state["cognitive"])
    group.boosts.set_state(state.get("boosts", []))
    if "policies" in state:  # older checkpoints: habits counted afresh, read back from the store
        group.policy_state.set_state(state["policies"])
    if (directory / "reads.parquet").exists():  # older checkpoints wrote reads to the store
        group.access.set_state(pq.read_table(directory / "reads.parquet").to_pydict())
    if (directory / "associations.parquet").exists():  # older checkpoints have none
        table = pq.read_table(directory / "associations.parquet")
        group.associations.add_many(Association(**row) for row in table.to_pylist())
    return group


def _payload_of(row: dict[str, Any], with_layers: bool) -> dict[str, Any]:
    payload = {key: row[key] for key in ("agent_id", "topic", "t", "time", "importance", "text")}
    if row["location"] is not None:
        payload["location"] = row["location"]
    if row["links"]:
        payload["links"] = list(row["links"])
    if row["evidence"]:
        payload["evidence"] = list(row["evidence"])
    if with_layers:
        payload["layer"], payload["layer_since"] = row["layer"], row["layer_since"]
    payload.update(restored_payload(row))
    return payload


__all__ = ["ROW_SCHEMA", "VECTOR_SCHEMA", "checkpoint", "restore"]
