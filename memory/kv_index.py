"""Embedded status attributes searched from RAM, written to the vector engine late.

With sparse (BM25) embeddings an agent's embedded KV attributes (a handful: name, thought,
emotion…) are scored here exactly as the engine would (Σ idf · q · d, IDF over every KV
point of the group) from one sparse vector per (agent, key). Re-embedding `thought` every
tick then costs no engine write (~85 µs a point): `KVDeferredStore` writes the changed points
in one batch when the engine's own view is needed (a checkpoint's scroll, a query, close).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.vectorstores.base import MemoryPoint, ScoredPoint, VectorQuery


class KVIndex:
    """One sparse vector per (agent, key) and the group's KV term counts."""

    def __init__(self) -> None:
        self.vectors: dict[tuple[int, str], SparseVector] = {}
        self.texts: dict[tuple[int, str], str] = {}
        self.df: dict[int, int] = {}

    def put(self, slot: tuple[int, str], text: str, vector: SparseVector) -> None:
        """Set (or replace) the vector of one attribute of one agent."""
        df = self.df
        old = self.vectors.get(slot)
        if old is not None:
            for term in old.indices:
                left = df[term] - 1
                if left:
                    df[term] = left
                else:
                    del df[term]
        for term in vector.indices:
            df[term] = df.get(term, 0) + 1
        self.vectors[slot] = vector
        self.texts[slot] = text

    def search(
        self, agent_id: int, keys: Sequence[str], query: SparseVector, top_k: int
    ) -> list[tuple[str, str, float]]:
        """(key, text, score) of the agent's attributes sharing a term with the query."""
        n, df = len(self.vectors), self.df
        weights = {}
        for term, value in zip(query.indices, query.values, strict=True):
            count = df.get(term)
            if count:
                weights[term] = value * math.log(1.0 + (n - count + 0.5) / (count + 0.5))
        if not weights:
            return []
        found = []
        for key in keys:
            vector = self.vectors.get((agent_id, key))
            if vector is None:
                continue
            score = sum(
                weights[t] * v
                for t, v in zip(vector.indices, vector.values, strict=True)
                if t in weights
            )
            if score > 0:
                found.append((key, self.texts[(agent_id, key)], score))
        found.sort(key=lambda hit: -hit[2])
        return found[:top_k]


class KVDeferredStore:
    """The group's KV vector store with changed attributes written in batches."""

    def __init__(
        self,
        inner: Any,
        index: KVIndex,
        point_id: Callable[[int, str], int],
        counters: dict[str, int],
    ) -> None:
        self.inner = inner
        self.index = index
        self.point_id = point_id
        self.counters = counters  # the group's: vector_upserts counts what reaches the engine
        self.dirty: set[tuple[int, str]] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def persist(self) -> int:
        """Write every changed attribute's point to the engine in one batch."""
        if not self.dirty:
            return 0
        slots = sorted(self.dirty)
        points = [
            MemoryPoint(
                self.point_id(*slot),
                TextVectors(sparse=self.index.vectors[slot]),
                {"agent_id": slot[0], "key": slot[1], "text": self.index.texts[slot]},
            )
            for slot in slots
        ]
        await self.inner.upsert(points)
        self.dirty.clear()
        self.counters["vector_upserts"] += len(points)
        return len(points)

    async def upsert(self, points: Sequence[MemoryPoint]) -> None:
        """Points written by others (a restore): indexed for RAM search, written now."""
        for p in points:
            if p.payload and p.vectors is not None and p.vectors.sparse is not None:
                slot = (p.payload["agent_id"], p.payload["key"])
                self.index.put(slot, p.payload["text"], p.vectors.sparse)
                self.dirty.discard(slot)
        await self.inner.upsert(points)

    async def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPoint]]:
        await self.persist()
        return await self.inner.query_batch(queries)

    async def scroll(self, *args: Any, **kwargs: Any) -> Any:
        await self.persist()
        return await self.inner.scroll(*args, **kwargs)

    async def retrieve(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        await self.persist()
        return await self.inner.retrieve(ids)

    async def count(self, agent_id: int | None = None) -> int:
        await self.persist()
        return await self.inner.count(agent_id=agent_id)

    async def close(self) -> None:
        await self.persist()
        await self.inner.close()
