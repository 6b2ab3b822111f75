"""Qdrant server/cluster backend through qdrant-client: one collection per run, shared by groups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qdrant_client import AsyncQdrantClient, models

from societas.memory.embedding.base import TextVectors
from societas.memory.embedding.config import key_from_env
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
from societas.memory.vectorstores.config import VectorStoreConfig
from societas.memory.vectorstores.qdrant_query import query_request


def _index_schema(kind: str) -> Any:
    if kind == "integer_tenant":
        return models.IntegerIndexParams(
            type=models.IntegerIndexType.INTEGER, lookup=True, range=False, is_principal=True
        )
    if kind == "float":
        return models.PayloadSchemaType.FLOAT
    return models.PayloadSchemaType.KEYWORD


def _named_vectors(vectors: TextVectors) -> dict[str, Any]:
    named: dict[str, Any] = {}
    if vectors.dense is not None:
        named[DENSE] = list(vectors.dense)
    if vectors.sparse is not None:
        named[SPARSE] = models.SparseVector(
            indices=list(vectors.sparse.indices), values=list(vectors.sparse.values)
        )
    return named


class QdrantVectorStore:
    """A collection on a Qdrant server; groups share it, scoped by `agent_id` (tenant index)."""

    def __init__(
        self,
        config: VectorStoreConfig,
        group_id: int,
        dense_size: int | None,
        sparse: bool,
        indexes: Mapping[str, str] = STREAM_INDEXES,
        collection_suffix: str = "",
    ) -> None:
        api_key = key_from_env("vector_store.api_key_env", config.api_key_env)
        if config.location:
            self._client = AsyncQdrantClient(location=config.location)
        else:
            self._client = AsyncQdrantClient(
                url=config.url, api_key=api_key, timeout=int(config.timeout_s)
            )
        self._config = config
        self._collection = config.collection + collection_suffix
        self._indexes = dict(indexes)
        self._dense_size = dense_size
        self._sparse = sparse
        self._shard_key = f"group-{group_id}" if config.shard_key_per_group else None
        self._ready = False

    async def _ensure_collection(self) -> None:
        if self._ready:
            return
        if not await self._client.collection_exists(self._collection):
            size, cosine = self._dense_size, models.Distance.COSINE
            idf = models.SparseVectorParams(modifier=models.Modifier.IDF)
            await self._client.create_collection(
                self._collection,
                vectors_config={DENSE: models.VectorParams(size=size, distance=cosine)}
                if size
                else {},
                sparse_vectors_config={SPARSE: idf} if self._sparse else None,
                sharding_method=models.ShardingMethod.CUSTOM if self._shard_key else None,
            )
            # Local mode ignores payload indexes (and warns); a server needs them.
            for name, kind in self._indexes.items() if not self._config.location else ():
                await self._client.create_payload_index(
                    self._collection, name, field_schema=_index_schema(kind)
                )
        if self._shard_key:
            try:
                await self._client.create_shard_key(self._collection, self._shard_key)
            except Exception as exc:  # already there: another run or group created it
                if "already exists" not in str(exc):
                    raise
        self._ready = True

    async def upsert(self, points: Sequence[MemoryPoint]) -> None:
        if not points:
            return
        await self._ensure_collection()
        await self._client.upsert(
            self._collection,
            points=[
                models.PointStruct(id=p.id, vector=_named_vectors(p.vectors), payload=p.payload)
                for p in points
            ],
            shard_key_selector=self._shard_key,
        )

    async def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPoint]]:
        if not queries:
            return []
        await self._ensure_collection()
        responses = await self._client.query_batch_points(
            self._collection, requests=[query_request(q, self._shard_key) for q in queries]
        )
        return [
            [
                ScoredPoint(
                    id=int(p.id),
                    score=float(p.score),
                    payload=p.payload,
                    vectors=vectors_of(p.vector) if q.with_vectors else None,
                )
                for p in response.points
            ]
            for q, response in zip(queries, responses, strict=True)
        ]

    async def retrieve(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        return {p.id: p.payload or {} for p in await self.fetch(ids, with_vectors=False)}

    async def fetch(self, ids: Sequence[int], with_vectors: bool = True) -> list[ScoredPoint]:
        if not ids:
            return []
        await self._ensure_collection()
        records = await self._client.retrieve(
            self._collection,
            list(ids),
            with_payload=True,
            with_vectors=with_vectors,
            shard_key_selector=self._shard_key,
        )
        return stored_points(records)

    async def set_payloads(self, updates: Sequence[tuple[Sequence[int], dict[str, Any]]]) -> None:
        """All the updates in order, in one request (not one per update)."""
        operations = [
            models.SetPayloadOperation(
                set_payload=models.SetPayload(
                    payload=payload, points=list(ids), shard_key=self._shard_key
                )
            )
            for ids, payload in updates
            if ids
        ]
        if operations:
            await self._ensure_collection()
            await self._client.batch_update_points(self._collection, operations)

    async def delete(self, ids: Sequence[int]) -> None:
        if ids:
            await self._ensure_collection()
            await self._client.delete(
                self._collection,
                points_selector=models.PointIdsList(points=list(ids)),
                shard_key_selector=self._shard_key,
            )

    async def count(self, agent_id: int | None = None) -> int:
        await self._ensure_collection()
        result = await self._client.count(
            self._collection,
            count_filter=_agent_filter(agent_id, None),
            exact=True,
            shard_key_selector=self._shard_key,
        )
        return int(result.count)

    async def scroll_oldest(
        self, agent_id: int | None, before_time: float | None, limit: int
    ) -> list[ScoredPoint]:
        await self._ensure_collection()
        records, _ = await self._client.scroll(
            self._collection,
            scroll_filter=_agent_filter(agent_id, before_time),
            limit=limit,
            order_by=models.OrderBy(key="time", direction=models.Direction.ASC),
            with_payload=True,
            with_vectors=True,
            shard_key_selector=self._shard_key,
        )
        return stored_points(records)

    async def scroll(
        self, offset: int | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[ScoredPoint], int | None]:
        await self._ensure_collection()
        records, next_offset = await self._client.scroll(
            self._collection,
            limit=limit,
            offset=offset,
            with_payload=True,
            with_vectors=with_vectors,
            shard_key_selector=self._shard_key,
        )
        return stored_points(records), int(next_offset) if next_offset is not None else None

    async def optimize(self) -> None:
        """The server runs its own optimizers."""

    async def flush(self) -> None:
        """Qdrant persists on its own; nothing to do."""

    async def close(self) -> None:
        await self._client.close()


def _agent_filter(agent_id: int | None, before_time: float | None) -> models.Filter | None:
    """One agent's points (None: all), older than `before_time` when given."""
    must: list[Any] = []
    if agent_id is not None:
        must.append(models.FieldCondition(key="agent_id", match=models.MatchValue(value=agent_id)))
    if before_time is not None:
        must.append(models.FieldCondition(key="time", range=models.Range(lt=before_time)))
    return models.Filter(must=must) if must else None
