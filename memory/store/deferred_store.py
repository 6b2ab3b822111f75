"""Write-behind for the vector engine: memories reach it late, in bulk, as if already there."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.model.records_meta import DEFAULT_TYPE
from societas.memory.store.id_map import IdMap
from societas.memory.vectorstores.base import PAGE, MemoryPoint, ScoredPoint, VectorQuery

if TYPE_CHECKING:
    from collections.abc import Callable

    from societas.memory.model.records_meta import AccessLedger
    from societas.memory.retrieval.sparse_index import SparseIndex
    from societas.memory.store.hot_store import HotStore
    from societas.memory.vectorstores import VectorStore


class DeferredStore:
    """The group's vector store with new memories written late; flush and close keep them."""

    def __init__(
        self,
        inner: VectorStore,
        index: SparseIndex,
        *,
        hot: HotStore,
        warm_rows: HotStore,
        access: AccessLedger,
        counters: dict[str, int],
        layered: Callable[[], bool],
    ) -> None:
        self.inner = inner
        self.index = index  # the RAM index that answers searches of pending memories
        self.hot, self.warm_rows, self.access, self.counters = hot, warm_rows, access, counters
        self.layered = layered  # whether payloads carry forgetting layers (the profiles say)
        self.pending = IdMap()  # memory id → agent id, not yet in the engine
        self.patches: dict[int, dict[str, Any]] = {}  # payload updates of pending memories

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def defer(self, ids: Sequence[int], agent_ids: Sequence[int]) -> None:
        """Memories just added to hot and the index, to be written to the engine later."""
        self.pending.set_many(ids, agent_ids)

    def _written(self, ids: Sequence[int]) -> list[MemoryPoint]:
        """Pending memories `ids` as the points a write makes, patches applied, in one pass."""
        payloads = hot_payloads(self.hot, self.warm_rows, ids, self.patches, self.layered())
        vectors = index_vectors(self.index, ids, self.pending)
        return [MemoryPoint(i, v, pl) for i, pl, v in zip(ids, payloads, vectors, strict=True)]

    async def persist(self, ids: Sequence[int] | None = None) -> int:
        """Write pending memories (all, or those of `ids`) to the engine in one batch."""
        todo = sorted(self.pending) if ids is None else sorted(i for i in ids if i in self.pending)
        if not todo:
            return 0
        points = self._written(todo)
        await self.inner.upsert(points)
        hot = self.hot
        self.access.forget(i for i in todo if i in hot)  # hot reads are in the rows written
        self.warm_rows.evict(todo)  # written: their RAM columns go
        for memory_id in todo:
            del self.pending[memory_id]
            self.patches.pop(memory_id, None)
        self.counters["vector_upserts"] += len(points)
        return len(points)

    def pending_points(self, ids: Sequence[int] | None = None) -> list[ScoredPoint]:
        """Pending memories (all, ids sorted, or those of `ids`) as the engine would return them."""
        written = self._written(sorted(self.pending) if ids is None else ids)
        return [ScoredPoint(p.id, 0.0, p.payload, p.vectors) for p in written]

    async def engine_scroll(
        self, offset: int | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[ScoredPoint], int | None]:
        """A page of the engine's own points, pending memories not written first."""
        return await self.inner.scroll(offset, limit, with_vectors=with_vectors)

    def restore_pending(self, points: Sequence[MemoryPoint]) -> None:
        """Checkpointed pending memories back in the RAM index, still not in the engine."""
        fresh = self._index(points)
        self.defer([p.id for p in fresh], [p.payload["agent_id"] for p in fresh])

    def _index(self, points: Sequence[MemoryPoint]) -> list[MemoryPoint]:
        """Points with a payload and a sparse vector into the RAM index, in id order."""
        fresh = sorted(
            (p for p in points if p.payload and p.vectors and p.vectors.sparse is not None),
            key=lambda p: p.id,
        )
        self.index.add(
            [p.id for p in fresh],
            [p.payload["agent_id"] for p in fresh],
            [p.payload["time"] for p in fresh],
            [p.payload["importance"] for p in fresh],
            [p.payload["topic"] for p in fresh],
            [p.vectors.sparse for p in fresh],
        )
        return fresh

    async def upsert(self, points: Sequence[MemoryPoint]) -> None:
        """Points written by others (a restore): indexed for RAM search, written now."""
        self._index(points)
        for p in points:
            self.pending.pop(p.id, None)
        await self.inner.upsert(points)

    async def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPoint]]:
        if not queries:
            return []
        await self.persist()  # the engine's IDF must count every memory, as the index does
        return await self.inner.query_batch(queries)

    async def retrieve(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        pending = [i for i in ids if i in self.pending]
        payloads = hot_payloads(self.hot, self.warm_rows, pending, self.patches, self.layered())
        mine = dict(zip(pending, payloads, strict=True))
        rest = [i for i in ids if i not in self.pending]
        if rest:
            mine.update(await self.inner.retrieve(rest))
        return mine

    async def fetch(self, ids: Sequence[int]) -> list[ScoredPoint]:
        mine = self.pending_points([i for i in ids if i in self.pending])
        rest = [i for i in ids if i not in self.pending]
        return mine + (await self.inner.fetch(rest) if rest else [])

    async def set_payloads(self, updates: Sequence[tuple[Sequence[int], dict[str, Any]]]) -> None:
        sent: list[tuple[Sequence[int], dict[str, Any]]] = []  # the engine's, in one call
        for ids, payload in updates:  # pending memories: patched, written with them later
            for memory_id in filter(self.pending.__contains__, ids):
                self.patches.setdefault(memory_id, {}).update(payload)
            sent.append(([i for i in ids if i not in self.pending], payload))
        await self.inner.set_payloads(sent)
        stored = [*dict.fromkeys(i for rest, pl in sent if "importance" in pl for i in rest)]
        agent_of: dict[int, int] = {}
        for start in range(0, len(stored), PAGE):  # a page of payloads at a time in RAM
            found = await self.inner.retrieve(stored[start : start + PAGE])
            agent_of.update((memory_id, pl["agent_id"]) for memory_id, pl in found.items())
        for ids, payload in updates:  # the RAM index ranks by importance
            for memory_id in ids if "importance" in payload else ():
                if (agent_id := self.pending.get(memory_id, agent_of.get(memory_id))) is not None:
                    self.index.set_importance(agent_id, memory_id, payload["importance"])

    async def delete(self, ids: Sequence[int]) -> None:
        pairs = [(self.pending[i], i) for i in ids if i in self.pending]
        rest = [i for i in ids if i not in self.pending]
        for _, memory_id in pairs:
            del self.pending[memory_id]
            self.patches.pop(memory_id, None)
        self.warm_rows.evict(i for _, i in pairs)  # gone: their RAM columns with them
        if rest:
            found = await self.inner.retrieve(rest)
            pairs += [(pl["agent_id"], i) for i, pl in found.items()]
            await self.inner.delete(rest)
        self.index.remove(pairs)

    async def count(self, agent_id: int | None = None) -> int:
        engine = await self.inner.count(agent_id=agent_id)
        if agent_id is None:
            return engine + len(self.pending)
        return engine + sum(1 for a in self.pending.values() if a == agent_id)

    async def scroll_oldest(
        self, agent_id: int | None, before_time: float | None, limit: int
    ) -> list[ScoredPoint]:
        """Pending memories that could be among the oldest asked for are written first."""
        if agent_id is not None:
            await self.persist([i for i, a in self.pending.items() if a == agent_id])
        elif before_time is not None:
            await self.persist(self.older_than(before_time).tolist())
        else:
            await self.persist()
        return await self.inner.scroll_oldest(agent_id, before_time, limit)

    def older_than(self, cutoff: float) -> np.ndarray:
        """Pending ids with a time before `cutoff`, oldest first (ties by id)."""
        ids, times = [], []
        for store in (self.hot, self.warm_rows):
            rows = store.row_of.value_array()
            row_times = np.frombuffer(store.times, np.float64)[rows]
            old = row_times < cutoff
            ids.append(np.frombuffer(store.ids, np.int64)[rows[old]])
            times.append(row_times[old])
        all_ids, all_times = np.concatenate(ids), np.concatenate(times)
        pending = self.pending.contains_array(all_ids)  # a hot memory may be written already
        all_ids, all_times = all_ids[pending], all_times[pending]
        return all_ids[np.lexsort((all_ids, all_times))]

    async def scroll(
        self, offset: int | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[ScoredPoint], int | None]:
        await self.persist()
        return await self.inner.scroll(offset, limit, with_vectors=with_vectors)


def hot_payloads(
    hot: HotStore,
    warm: HotStore,
    ids: Sequence[int],
    patches: Mapping[int, dict[str, Any]],
    layered: bool,
) -> list[dict[str, Any]]:
    """Each pending memory's engine payload (its `HotStore.row` minus id and defaults) + patch."""
    if not len(warm):
        return _row_payloads(hot, ids, patches, layered)
    in_hot = hot.row_of
    hot_ids = [i for i in ids if i in in_hot]
    warm_ids = [i for i in ids if i not in in_hot]
    by_id = dict(zip(hot_ids, _row_payloads(hot, hot_ids, patches, layered), strict=True))
    by_id.update(zip(warm_ids, _row_payloads(warm, warm_ids, patches, layered), strict=True))
    return [by_id[i] for i in ids]


def _row_payloads(
    hot: HotStore, ids: Sequence[int], patches: Mapping[int, dict[str, Any]], layered: bool
) -> list[dict[str, Any]]:
    """`hot_payloads` of memories that all have a row in `hot`."""
    row_of, agent_ids, topics, ts, times = hot.row_of, hot.agent_ids, hot.topics, hot.ts, hot.times
    importances, texts, locations = hot.importances, hot.texts, hot.locations
    links, evidence = hot.cognition_links, hot.evidence
    layers, layer_since = hot.layers, hot.layer_since
    types, tags, metadata, expires = hot.types, hot.tags, hot.metadata, hot.expires
    counts, last_read = hot.access_counts, hot.last_accessed
    isinf, isnan = math.isinf, math.isnan
    out = []
    for memory_id in ids:
        r = row_of[memory_id]
        payload: dict[str, Any] = {
            "agent_id": agent_ids[r],
            "topic": topics[r],
            "t": ts[r],
            "time": times[r],
            "importance": importances[r],
            "text": texts[r],
        }
        if locations[r]:
            payload["location"] = locations[r]
        if links.get(memory_id):
            payload["links"] = links[memory_id]
        if evidence.get(memory_id):
            payload["evidence"] = evidence[memory_id]
        if layered:
            payload["layer"], payload["layer_since"] = layers[r], layer_since[r]
        if types[r] != DEFAULT_TYPE:
            payload["type"] = types[r]
        if tags.get(memory_id):
            payload["tags"] = list(tags[memory_id])
        if metadata.get(memory_id):
            payload["metadata"] = json.dumps(metadata[memory_id], sort_keys=True)
        if not isinf(expires[r]):
            payload["expires_at"] = float(expires[r])
        if counts[r]:
            payload["access_count"] = counts[r]
        if not isnan(last_read[r]):
            payload["last_accessed"] = last_read[r]
        if memory_id in patches:
            payload.update(patches[memory_id])
        out.append(payload)
    return out


def index_vectors(
    index: SparseIndex, ids: Sequence[int], agent_of: Mapping[int, int]
) -> list[TextVectors]:
    """The indexed sparse vector of each memory in `ids` (as `SparseIndex.vector` gives it)."""
    by_agent: dict[int, list[int]] = {}
    for position, memory_id in enumerate(ids):
        by_agent.setdefault(agent_of[memory_id], []).append(position)
    out: list[TextVectors] = [TextVectors(sparse=None)] * len(ids)
    for agent_id, positions in by_agent.items():
        p = index.agents.get(agent_id)
        if p is None:
            continue
        wanted = np.fromiter((ids[i] for i in positions), np.int64, len(positions))
        rows = np.searchsorted(np.frombuffer(p.ids, np.int64), wanted).tolist()
        ends, terms, weights, row_ids = p.ends, p.terms, p.weights, p.ids
        for position, row in zip(positions, rows, strict=True):
            if row >= len(row_ids) or row_ids[row] != ids[position]:
                out[position] = TextVectors(sparse=None)  # not indexed: as SparseIndex.vector
                continue
            start = ends[row - 1] if row else 0
            end = ends[row]
            out[position] = TextVectors(sparse=SparseVector(terms[start:end], weights[start:end]))
    return out
