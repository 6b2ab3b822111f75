"""Qdrant server/cluster backend through qdrant-client: one collection per run, shared by groups.

Tests run this code path with `location=":memory:"` (qdrant-client local mode). Local mode
filters in Python and ignores payload indexes, so it is for tests and small data only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from qdrant_client import AsyncQdrantClient, models

from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.vectorstores.base import (
    DENSE,
    SECONDS_PER_DAY,
    SPARSE,
    STREAM_INDEXES,
    MemoryPoint,
    PointFilter,
    ScoredPoint,
    VectorQuery,
)
from societas.memory.vectorstores.config import VectorStoreConfig

RELEVANCE = "$score[0]"  # the relevance prefetch's score; absent for recency-only candidates


def _index_schema(kind: str) -> Any:
    if kind == "integer_tenant":
        return models.IntegerIndexParams(
            type=models.IntegerIndexType.INTEGER, lookup=True, range=False, is_principal=True
        )
    if kind == "integer":
        return models.IntegerIndexParams(
            type=models.IntegerIndexType.INTEGER, lookup=True, range=True
        )
    if kind == "float":
        return models.PayloadSchemaType.FLOAT
    if kind == "keyword_tenant":
        return models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
    return models.PayloadSchemaType.KEYWORD


def qdrant_filter(f: PointFilter) -> models.Filter:
    """The qdrant-client filter for one agent's search (same conditions as the edge one)."""
    must: list[Any] = [
        models.FieldCondition(key="agent_id", match=models.MatchValue(value=f.agent_id)),
    ]
    if f.topic is not None:
        must.append(models.FieldCondition(key="topic", match=models.MatchValue(value=f.topic)))
    if f.location is not None:
        must.append(
            models.FieldCondition(key="location", match=models.MatchValue(value=f.location))
        )
    if f.day_range is not None:
        start, end = f.day_range[0] * SECONDS_PER_DAY, (f.day_range[1] + 1) * SECONDS_PER_DAY
        must.append(models.FieldCondition(key="time", range=models.Range(gte=start, lt=end)))
    if f.time_range is not None:
        must.append(
            models.FieldCondition(
                key="t", range=models.Range(gte=f.time_range[0], lte=f.time_range[1])
            )
        )
    if f.keys is not None:
        must.append(models.FieldCondition(key="key", match=models.MatchAny(any=list(f.keys))))
    if f.ids is not None:
        must.append(models.HasIdCondition(has_id=list(f.ids)))
    return models.Filter(must=must)


def _named_vectors(vectors: TextVectors) -> dict[str, Any]:
    named: dict[str, Any] = {}
    if vectors.dense is not None:
        named[DENSE] = list(vectors.dense)
    if vectors.sparse is not None:
        named[SPARSE] = models.SparseVector(
            indices=list(vectors.sparse.indices), values=list(vectors.sparse.values)
        )
    return named


def _from_named(raw: Any) -> TextVectors | None:
    if not isinstance(raw, dict):
        return None
    dense = raw.get(DENSE)
    sparse = raw.get(SPARSE)
    return TextVectors(
        dense=tuple(dense) if dense is not None else None,
        sparse=SparseVector.of(sparse.indices, sparse.values) if sparse is not None else None,
    )


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
        api_key = None
        if config.api_key_env:
            api_key = os.environ.get(config.api_key_env)
            if not api_key:
                raise ValueError(
                    f"vector_store.api_key_env names {config.api_key_env!r}, "
                    "which is not set in the environment"
                )
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
            await self._client.create_collection(
                self._collection,
                vectors_config={
                    DENSE: models.VectorParams(
                        size=self._dense_size, distance=models.Distance.COSINE
                    )
                }
                if self._dense_size
                else {},
                sparse_vectors_config={
                    SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)
                }
                if self._sparse
                else None,
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

    def _relevance_stage(self, q: VectorQuery, limit: int) -> tuple[dict[str, Any], bool]:
        flt = qdrant_filter(q.filter)
        stages: list[models.Prefetch] = []
        if q.vectors.dense is not None:
            stages.append(
                models.Prefetch(query=list(q.vectors.dense), using=DENSE, filter=flt, limit=limit)
            )
        if q.vectors.sparse is not None and not q.vectors.sparse.is_empty():
            vec = models.SparseVector(
                indices=list(q.vectors.sparse.indices), values=list(q.vectors.sparse.values)
            )
            stages.append(models.Prefetch(query=vec, using=SPARSE, filter=flt, limit=limit))
        if len(stages) == 2:
            k = q.scoring.rrf_k if q.scoring else 60
            return {"query": models.RrfQuery(rrf=models.Rrf(k=k)), "prefetch": stages}, True
        if len(stages) == 1:
            s = stages[0]
            return {"query": s.query, "using": s.using, "filter": flt}, True
        order = models.OrderBy(key="time", direction=models.Direction.DESC)
        return {"query": models.OrderByQuery(order_by=order), "filter": flt}, False

    def _request(self, q: VectorQuery) -> models.QueryRequest:
        common = {
            "with_payload": q.with_payload,
            "with_vector": q.with_vectors,
            "shard_key": self._shard_key,
        }
        if q.scoring is None:
            stage, _ = self._relevance_stage(q, q.limit)
            return models.QueryRequest(limit=q.limit, **stage, **common)
        cfg = q.scoring
        candidates = q.candidates or max(cfg.candidate_limit, q.limit)
        stage, has_relevance = self._relevance_stage(q, candidates)
        prefetches = [models.Prefetch(limit=candidates, **stage)]
        if has_relevance and cfg.candidates == "all":
            # The most recent memories compete too (relevance 0 unless also matched).
            order = models.OrderBy(key="time", direction=models.Direction.DESC)
            prefetches.append(
                models.Prefetch(
                    query=models.OrderByQuery(order_by=order),
                    filter=qdrant_filter(q.filter),
                    limit=candidates,
                )
            )
        terms: list[Any] = [
            models.MultExpression(
                mult=[
                    cfg.recency_weight,
                    models.ExpDecayExpression(
                        exp_decay=models.DecayParamsExpression(
                            x="time", target=q.now, midpoint=0.5, scale=cfg.half_life_seconds
                        )
                    ),
                ]
            ),
            models.MultExpression(mult=[cfg.importance_weight, self._importance(q)]),
        ]
        if has_relevance:
            terms.append(models.MultExpression(mult=[cfg.relevance_weight, self._relevance(q)]))
        formula = models.FormulaQuery(
            formula=models.SumExpression(sum=terms), defaults={RELEVANCE: 0.0}
        )
        return models.QueryRequest(limit=q.limit, prefetch=prefetches, query=formula, **common)

    @staticmethod
    def _importance(q: VectorQuery) -> Any:
        """Stored importance, or with forgetting on: importance × f_layer ** days since set."""
        if not q.layer_decay:
            return "importance"
        days = models.DivExpression(
            div=models.DivParams(
                left=models.SumExpression(sum=[q.now, models.NegExpression(neg="layer_since")]),
                right=86_400.0,
            )
        )
        return models.SumExpression(
            sum=[
                models.MultExpression(
                    mult=[
                        models.FieldCondition(key="layer", match=models.MatchValue(value=layer)),
                        "importance",
                        models.PowExpression(pow=models.PowParams(base=factor, exponent=days)),
                    ]
                )
                for layer, factor in q.layer_decay.items()
            ]
        )

    @staticmethod
    def _relevance(q: VectorQuery) -> Any:
        assert q.scoring is not None
        if q.normalization == "saturate":
            return models.DivExpression(
                div=models.DivParams(
                    left=RELEVANCE,
                    right=models.SumExpression(sum=[RELEVANCE, q.scoring.saturation_k]),
                    by_zero_default=0.0,
                )
            )
        if q.normalization == "rrf":
            return models.MultExpression(mult=[RELEVANCE, (q.scoring.rrf_k + 1) / 2])
        return RELEVANCE

    async def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPoint]]:
        if not queries:
            return []
        await self._ensure_collection()
        responses = await self._client.query_batch_points(
            self._collection, requests=[self._request(q) for q in queries]
        )
        return [
            [
                ScoredPoint(
                    id=int(p.id),
                    score=float(p.score),
                    payload=p.payload,
                    vectors=_from_named(p.vector) if q.with_vectors else None,
                )
                for p in response.points
            ]
            for q, response in zip(queries, responses, strict=True)
        ]

    async def retrieve(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        if not ids:
            return {}
        await self._ensure_collection()
        records = await self._client.retrieve(
            self._collection, list(ids), with_payload=True, shard_key_selector=self._shard_key
        )
        return {int(r.id): dict(r.payload or {}) for r in records}

    async def fetch(self, ids: Sequence[int]) -> list[ScoredPoint]:
        if not ids:
            return []
        await self._ensure_collection()
        records = await self._client.retrieve(
            self._collection,
            list(ids),
            with_payload=True,
            with_vectors=True,
            shard_key_selector=self._shard_key,
        )
        return self._scored(records)

    async def set_payload(self, ids: Sequence[int], payload: dict[str, Any]) -> None:
        if ids:
            await self._ensure_collection()
            await self._client.set_payload(
                self._collection,
                payload=payload,
                points=list(ids),
                shard_key_selector=self._shard_key,
            )

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
        must: list[Any] = []
        if agent_id is not None:
            must.append(
                models.FieldCondition(key="agent_id", match=models.MatchValue(value=agent_id))
            )
        result = await self._client.count(
            self._collection,
            count_filter=models.Filter(must=must) if must else None,
            exact=True,
            shard_key_selector=self._shard_key,
        )
        return int(result.count)

    def _scored(self, records: Any) -> list[ScoredPoint]:
        return [
            ScoredPoint(
                id=int(r.id),
                score=0.0,
                payload=dict(r.payload or {}),
                vectors=_from_named(r.vector),
            )
            for r in records
        ]

    async def scroll_oldest(
        self, agent_id: int | None, before_time: float | None, limit: int
    ) -> list[ScoredPoint]:
        await self._ensure_collection()
        must: list[Any] = []
        if agent_id is not None:
            must.append(
                models.FieldCondition(key="agent_id", match=models.MatchValue(value=agent_id))
            )
        if before_time is not None:
            must.append(models.FieldCondition(key="time", range=models.Range(lt=before_time)))
        records, _ = await self._client.scroll(
            self._collection,
            scroll_filter=models.Filter(must=must) if must else None,
            limit=limit,
            order_by=models.OrderBy(key="time", direction=models.Direction.ASC),
            with_payload=True,
            with_vectors=True,
            shard_key_selector=self._shard_key,
        )
        return self._scored(records)

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
        return self._scored(records), int(next_offset) if next_offset is not None else None

    async def optimize(self) -> None:
        """The server runs its own optimizers."""

    async def flush(self) -> None:
        """Qdrant persists on its own; nothing to do."""

    async def close(self) -> None:
        await self._client.close()
