"""Embedded status attributes searched from RAM, written to the vector engine late."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from societas.memory.embedding.base import SparseVector, TextVectors, packed_views
from societas.memory.store.kv_columns import AgentSlots, SlotMap
from societas.memory.vectorstores.base import MemoryPoint, ScoredPoint, VectorQuery


class KVIndex:
    """One sparse vector per (agent, key), packed as bytes, and the group's KV term counts."""

    def __init__(self, slots: AgentSlots | None = None) -> None:
        self.slots = AgentSlots() if slots is None else slots  # shared with the group's KV
        self.packed: SlotMap[bytes] = SlotMap(self.slots)
        self.texts: SlotMap[str] = SlotMap(self.slots)
        self.df: dict[int, int] = {}

    def vector(self, slot: tuple[int, str]) -> SparseVector:
        """The sparse vector of one attribute of one agent (KeyError if none)."""
        return SparseVector.unpacked(self.packed[slot])

    def put(self, slot: tuple[int, str], text: str, vector: SparseVector) -> None:
        """Set (or replace) the vector of one attribute of one agent."""
        df = self.df
        old = self.packed.get(slot)
        if old is not None:
            for term in packed_views(old)[0]:
                left = df[term] - 1
                if left:
                    df[term] = left
                else:
                    del df[term]
        for term in vector.indices:
            df[term] = df.get(term, 0) + 1
        self.packed[slot] = vector.packed()
        self.texts[slot] = text

    def search(
        self, agent_id: int, keys: Sequence[str], query: SparseVector, top_k: int
    ) -> list[tuple[str, str, float]]:
        """(key, text, score) of the agent's attributes sharing a term with the query."""
        n, df = len(self.packed), self.df
        weights = {}
        for term, value in zip(query.indices, query.values, strict=True):
            count = df.get(term)
            if count:
                weights[term] = value * math.log(1.0 + (n - count + 0.5) / (count + 0.5))
        if not weights:
            return []
        found = []
        for key in keys:
            packed = self.packed.get((agent_id, key))
            if packed is None:
                continue
            indices, values = packed_views(packed)
            score = sum(
                weights[t] * v for t, v in zip(indices, values, strict=True) if t in weights
            )
            if score > 0:
                found.append((key, self.texts[(agent_id, key)], score))
        found.sort(key=lambda hit: -hit[2])
        return found[:top_k]


class KVDeferredStore:
    """The group's KV vector store with changed attributes written in batches (not at close)."""

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
        self.dirty: SlotMap[bool] = SlotMap(index.slots)  # changed since the last write (a set)

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
                TextVectors(sparse=self.index.vector(slot)),
                {"agent_id": slot[0], "key": slot[1], "text": self.index.texts[slot]},
            )
            for slot in slots
        ]
        await self.inner.upsert(points)
        self.dirty.clear()
        self.counters["vector_upserts"] += len(points)
        return len(points)

    async def upsert(self, points: Sequence[MemoryPoint]) -> None:
        """Points written by a restore: indexed for RAM search, written with the next batch."""
        rest = []
        for p in points:
            if p.payload and p.vectors is not None and p.vectors.sparse is not None:
                slot = (p.payload["agent_id"], p.payload["key"])
                self.index.put(slot, p.payload["text"], p.vectors.sparse)
                self.dirty[slot] = True
            else:
                rest.append(p)
        if rest:
            await self.inner.upsert(rest)

    def index_points(self) -> list[ScoredPoint]:
        """Every KV point as the engine would hold it, ids ascending, from the index."""
        _, pages = self.index_point_pages(max(1, len(self.index.packed)))
        return [point for page in pages for point in page]

    def index_point_pages(self, size: int) -> tuple[int, Iterator[list[ScoredPoint]]]:
        """How many KV points, and `index_points` in lists of `size` (a checkpoint's pages)."""
        columns = self.index.packed.columns()
        keys = list(columns)
        ids, agents, key_of = array("q"), array("q"), array("q")
        for k, key in enumerate(keys):
            for agent_id in columns[key]:
                ids.append(self.point_id(agent_id, key))
                agents.append(agent_id)
                key_of.append(k)
        order = np.argsort(np.frombuffer(ids, np.int64), kind="stable")

        def point(i: int) -> ScoredPoint:  # as the engine would hold it
            slot = (agents[i], keys[key_of[i]])
            payload = {"agent_id": slot[0], "key": slot[1], "text": self.index.texts[slot]}
            return ScoredPoint(ids[i], 0.0, payload, TextVectors(sparse=self.index.vector(slot)))

        def chunks() -> Iterator[list[ScoredPoint]]:
            for start in range(0, len(order), size):
                yield [point(i) for i in order[start : start + size].tolist()]

        return len(ids), chunks()

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
