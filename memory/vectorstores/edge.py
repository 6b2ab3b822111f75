"""Qdrant Edge backend: one persisted shard per group, every call chunked on its own thread."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from societas.memory.embedding.base import TextVectors
from societas.memory.store.heap import release_free_memory
from societas.memory.vectorstores.base import (
    DENSE,
    SPARSE,
    STREAM_INDEXES,
    MemoryPoint,
    ScoredPoint,
    VectorQuery,
    stored_points,
    vectors_of,
)
from societas.memory.vectorstores.edge_query import query_request
from societas.memory.vectorstores.edge_seal import seal_in_child, shard_config

CHUNK_POINTS = 256  # points per write: a write holds the GIL, so chunks keep it short
CHUNK_QUERIES = 32  # formula queries per call: a call holds the GIL, so chunks keep it short
log = logging.getLogger(__name__)


def _index_params(kind: str, mmap: bool) -> Any:
    """A payload index; `mmap`: mmapped once its segment is optimized (`Cold`)."""
    cold = qe.Memory.Cold if mmap else None
    if kind == "integer_tenant":
        return qe.IntegerIndexParams(lookup=True, range=False, is_principal=True, memory=cold)
    if kind == "float":
        return qe.FloatIndexParams(memory=cold)
    return qe.KeywordIndexParams(memory=cold)


def _edge_vectors(vectors: TextVectors) -> dict[str, Any]:
    named: dict[str, Any] = {}
    if vectors.dense is not None:
        named[DENSE] = list(vectors.dense)
    if vectors.sparse is not None:
        named[SPARSE] = qe.SparseVector(
            vectors.sparse.indices.tolist(), vectors.sparse.values.tolist()
        )
    return named


class EdgeVectorStore:
    """A Qdrant Edge shard under `path`; created with payload indexes or reopened from disk."""

    def __init__(
        self,
        path: Path,
        dense_size: int | None,
        sparse: bool,
        indexes: Mapping[str, str] = STREAM_INDEXES,
        compact_in_child: bool = False,
    ) -> None:
        self.path = Path(path)
        self.compact_in_child = compact_in_child
        self._spec = {
            "dense": [DENSE, dense_size] if dense_size else None,
            "sparse": SPARSE if sparse else None,
            "mmap": compact_in_child,
        }
        self._config = shard_config(self._spec)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qdrant-edge")
        self.unsealed_points = 0  # points written since the last compaction
        self.unflushed = True  # a write since the last flush (a clean shard is not flushed)
        if self.path.exists() and any(self.path.iterdir()):
            self._shard = qe.EdgeShard.load(str(self.path), self._config)
        else:
            self.path.mkdir(parents=True, exist_ok=True)
            self._shard = qe.EdgeShard.create(str(self.path), self._config)
            for name, kind in indexes.items():
                params = _index_params(kind, compact_in_child)
                self._shard.update(qe.UpdateOperation.create_field_index(name, params))

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` on the worker thread (the event loop stays free meanwhile)."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, partial(fn, *args))

    def _upsert_now(self, points: Sequence[MemoryPoint]) -> None:
        for start in range(0, len(points), CHUNK_POINTS):
            chunk = points[start : start + CHUNK_POINTS]
            edge_points = [qe.Point(p.id, _edge_vectors(p.vectors), p.payload) for p in chunk]
            self._shard.update(qe.UpdateOperation.upsert_points(edge_points))
        self.unsealed_points += len(points)

    async def upsert(self, points: Sequence[MemoryPoint]) -> None:
        if points:
            self.unflushed = True  # set on the loop, before the write is queued (see flush)
            await self._run(self._upsert_now, points)

    def _query_now(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPoint]]:
        out: list[list[ScoredPoint]] = []
        for start in range(0, len(queries), CHUNK_QUERIES):
            chunk = queries[start : start + CHUNK_QUERIES]
            results = self._shard.query_batch(
                qe.QueryBatchRequest([query_request(q) for q in chunk])
            )
            for q, hits in zip(chunk, results, strict=True):
                keep, vec = q.with_payload or q.with_vectors, q.with_vectors
                out.append(
                    [
                        ScoredPoint(
                            int(p.id),
                            float(p.score),
                            p.payload if keep else None,
                            vectors_of(p.vector) if vec else None,
                        )
                        for p in hits
                    ]
                )
        return out

    async def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPoint]]:
        if not queries:
            return []
        return await self._run(self._query_now, queries)

    def _retrieve_now(self, ids: Sequence[int], vectors: bool) -> Any:
        out: list[Any] = []
        for start in range(0, len(ids), CHUNK_POINTS * 4):
            chunk: list[qe.PointId] = list(ids[start : start + CHUNK_POINTS * 4])
            out.extend(self._shard.retrieve(chunk, with_payload=True, with_vector=vectors))
        return out

    async def retrieve(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        return {p.id: p.payload or {} for p in await self.fetch(ids, with_vectors=False)}

    async def fetch(self, ids: Sequence[int], with_vectors: bool = True) -> list[ScoredPoint]:
        if not ids:
            return []
        return stored_points(await self._run(self._retrieve_now, ids, with_vectors))

    def _update_now(self, make: Callable[[list[qe.PointId]], Any], ids: Sequence[int]) -> None:
        for start in range(0, len(ids), CHUNK_POINTS * 4):
            chunk: list[qe.PointId] = list(ids[start : start + CHUNK_POINTS * 4])
            self._shard.update(make(chunk))

    def _set_now(self, updates: Sequence[tuple[Sequence[int], dict[str, Any]]]) -> None:
        for ids, payload in updates:
            self._update_now(partial(qe.UpdateOperation.set_payload, payload=payload), ids)

    async def set_payloads(self, updates: Sequence[tuple[Sequence[int], dict[str, Any]]]) -> None:
        if updates := [(ids, payload) for ids, payload in updates if ids]:
            self.unflushed = True
            await self._run(self._set_now, updates)

    async def delete(self, ids: Sequence[int]) -> None:
        if ids:
            self.unflushed = True
            await self._run(self._update_now, qe.UpdateOperation.delete_points, ids)

    async def count(self, agent_id: int | None = None) -> int:
        request = qe.CountRequest(exact=True, filter=_agent_filter(agent_id, None))
        return int(await self._run(self._shard.count, request))

    async def scroll_oldest(
        self, agent_id: int | None, before_time: float | None, limit: int
    ) -> list[ScoredPoint]:
        request = qe.ScrollRequest(
            limit=limit,
            filter=_agent_filter(agent_id, before_time),
            with_payload=True,
            with_vector=True,
            order_by=qe.OrderBy("time", direction=qe.Direction.Asc),
        )
        records, _ = await self._run(self._shard.scroll, request)
        return stored_points(records)

    async def scroll(
        self, offset: int | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[ScoredPoint], int | None]:
        request = qe.ScrollRequest(
            offset=offset, limit=limit, with_payload=True, with_vector=with_vectors
        )
        records, next_offset = await self._run(self._shard.scroll, request)
        return stored_points(records), int(next_offset) if next_offset is not None else None

    def _seal_now(self) -> None:
        """Flush, close, optimize in a child process (else in process) and reload the shard."""
        self._shard.flush()
        self._shard.close()
        release_free_memory()  # the closed shard's RAM goes back before the child loads it
        failed = None
        try:
            seal_in_child(self.path, self._spec)
        except (OSError, RuntimeError) as err:
            failed = err
        self._shard = qe.EdgeShard.load(str(self.path), self._config)
        if failed is not None:
            log.warning("optimizing in process instead: %s", failed)
            self._shard.optimize()
        self.unsealed_points = 0

    def _optimize_now(self) -> None:
        self._shard.optimize()
        self.unsealed_points = 0

    async def optimize(self) -> None:
        """Merge segments and vacuum deleted points (in a child with `compact_in_child`)."""
        self.unflushed = True
        await self._run(self._seal_now if self.compact_in_child else self._optimize_now)

    async def flush(self) -> None:
        """Persist what was written since the last flush (calls run in order on one worker)."""
        if not self.unflushed:
            return
        self.unflushed = False
        try:
            await self._run(self._shard.flush)
        except BaseException:
            self.unflushed = True
            raise

    async def close(self) -> None:
        await self.flush()
        await self._run(self._shard.close)
        self._worker.shutdown(wait=True)


def _agent_filter(agent_id: int | None, before_time: float | None) -> qe.Filter | None:
    """One agent's points (None: all), older than `before_time` when given."""
    must: list[Any] = []
    if agent_id is not None:
        must.append(qe.FieldCondition("agent_id", match=qe.MatchValue(agent_id)))
    if before_time is not None:
        must.append(qe.FieldCondition("time", range=qe.RangeFloat(lt=before_time)))
    return qe.Filter(must=must) if must else None
