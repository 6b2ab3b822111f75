"""One point schema and one interface for every vector backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.retrieval.scoring import RetrievalConfig

DENSE = "dense"
SPARSE = "bm25"
PAGE = 5_000  # points read from a store at once (their payloads held as Python objects)

STREAM_INDEXES = {
    "agent_id": "integer_tenant",
    "time": "float",
    "topic": "keyword",
    "type": "keyword",  # search filters by memory types and tags; expiry by time
    "tags": "keyword",
    "expires_at": "float",
}
# An edge shard indexes only the agent and time (tier moves scroll the oldest first).
EDGE_STREAM_INDEXES = {"agent_id": "integer_tenant", "time": "float"}
KV_INDEXES = {"agent_id": "integer_tenant", "key": "keyword"}
SECONDS_PER_DAY = 86_400


@dataclass(slots=True)
class MemoryPoint:
    """A stream memory or an embedded KV attribute as stored in the vector engine."""

    id: int
    vectors: TextVectors
    payload: dict[str, Any]


@dataclass(slots=True)
class PointFilter:
    """Conditions one search applies; scoped to one agent."""

    agent_id: int
    topic: str | None = None
    day_range: tuple[int, int] | None = None
    time_range: tuple[float, float] | None = None
    location: str | None = None
    keys: Sequence[str] | None = None
    ids: Sequence[int] | None = None  # restrict to these point ids (e.g. the hot tier)
    types: Sequence[str] | None = None  # memory types (records_meta.MEMORY_TYPES)
    tags: Sequence[str] | None = None  # any of these tags
    layers: Sequence[str] | None = None  # FinMem layers (forgetting on)
    alive_at: float | None = None  # leave out memories whose expires_at is at or before this
    every_agent: bool = False  # no agent scope: a probe of the engine's IDF


@dataclass(frozen=True, slots=True)
class Condition:
    """One filter condition for any engine: `field` equals `value`, is in `values`, or in range."""

    field: str
    value: Any = None
    values: Sequence[Any] | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None


def filter_conditions(f: PointFilter) -> tuple[list[Condition], list[Condition]]:
    """(must, must_not): the conditions of one agent's search, for any backend's filter."""
    must = [] if f.every_agent else [Condition("agent_id", f.agent_id)]
    must_not: list[Condition] = []
    for name, value in (("topic", f.topic), ("location", f.location)):
        if value is not None:
            must.append(Condition(name, value))
    if f.day_range is not None:
        start, end = f.day_range[0] * SECONDS_PER_DAY, (f.day_range[1] + 1) * SECONDS_PER_DAY
        must.append(Condition("time", gte=start, lt=end))
    if f.time_range is not None:
        must.append(Condition("t", gte=f.time_range[0], lte=f.time_range[1]))
    for name, values in (("key", f.keys), ("id", f.ids)):
        if values is not None:
            must.append(Condition(name, values=values))
    wanted, unwanted = type_condition(f.types)
    if wanted:
        must.append(Condition("type", values=wanted))
    if unwanted:
        must_not.append(Condition("type", values=unwanted))
    for name, values in (("tags", f.tags), ("layer", f.layers)):
        if values is not None:
            must.append(Condition(name, values=values))
    if f.alive_at is not None:  # a point without expires_at never expires
        must_not.append(Condition("expires_at", lte=f.alive_at))
    return must, must_not


def type_condition(types: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """(types a point must have, must not have): the default type is absent from payloads."""
    from societas.memory.model.records_meta import DEFAULT_TYPE, MEMORY_TYPES

    if types is None:
        return [], []
    if DEFAULT_TYPE in types:
        return [], [t for t in MEMORY_TYPES if t not in types]
    return list(types), []


@dataclass(slots=True)
class VectorQuery:
    """A search: vectors, filter, result count, and how to score (None: raw relevance)."""

    vectors: TextVectors
    filter: PointFilter
    limit: int
    now: float = 0.0
    scoring: RetrievalConfig | None = None
    normalization: str = "saturate"
    with_payload: bool = True
    with_vectors: bool = False
    layer_decay: dict[str, float] | None = None  # forgetting on: importance decays per layer
    layer_recency: dict[str, float] | None = None  # FinMem: recency e^(-days/Q) per layer
    candidates: int | None = None  # memories the formula rescores (default: candidate_limit)
    relevance_scale: float = 1.0  # `exact` normalisation: the query's exact_match_score


@dataclass(slots=True)
class ScoredPoint:
    """A hit: its id, score, and payload/vectors when asked for."""

    id: int
    score: float
    payload: dict[str, Any] | None = None
    vectors: TextVectors | None = None


def vectors_of(raw: Any) -> TextVectors | None:
    """A record's named vectors as either engine returns them (None: not asked for)."""
    if not isinstance(raw, dict):
        return None
    dense, sparse = raw.get(DENSE), raw.get(SPARSE)
    return TextVectors(
        dense=tuple(dense) if dense is not None else None,
        sparse=SparseVector.of(sparse.indices, sparse.values) if sparse is not None else None,
    )


def stored_points(records: Iterable[Any]) -> list[ScoredPoint]:
    """Records read back by id or by scrolling (no score) as points with payload and vectors."""
    return [
        ScoredPoint(int(r.id), 0.0, dict(r.payload or {}), vectors_of(r.vector)) for r in records
    ]


@runtime_checkable
class VectorStore(Protocol):
    """What the group memory needs of a vector engine; all calls are batched."""

    async def upsert(self, points: Sequence[MemoryPoint]) -> None: ...

    async def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPoint]]: ...

    async def retrieve(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]: ...

    async def fetch(self, ids: Sequence[int]) -> list[ScoredPoint]:
        """Points by id with payload and vectors (to move them to cold)."""

    async def set_payloads(self, updates: Sequence[tuple[Sequence[int], dict[str, Any]]]) -> None:
        """Set each update's fields on its points, in order, in one call."""

    async def delete(self, ids: Sequence[int]) -> None: ...

    async def count(self, agent_id: int | None = None) -> int: ...

    async def scroll_oldest(
        self, agent_id: int | None, before_time: float | None, limit: int
    ) -> list[ScoredPoint]:
        """Points (payload + vectors) oldest first, of one agent or all, older than a time."""

    async def scroll(
        self, offset: int | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[ScoredPoint], int | None]:
        """A page of all points with payload (and vectors), and the next page's offset."""

    async def optimize(self) -> None:
        """Compact storage and drop deleted points from statistics (e.g. before a checkpoint)."""

    async def flush(self) -> None: ...

    async def close(self) -> None: ...


async def stored_payloads(
    store: VectorStore, page: int = PAGE
) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    """(id, payload) of every point of `store`, a page at a time, without vectors."""
    offset = None
    while True:
        points, offset = await store.scroll(offset, page, with_vectors=False)
        for p in points:
            yield p.id, p.payload or {}
        if offset is None:
            return
