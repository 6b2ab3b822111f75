"""Qdrant Edge backend: the real Qdrant engine in-process, one persisted shard per group."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

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

E = qe.Expression
RELEVANCE = "$score[0]"  # the relevance prefetch's score; absent for recency-only candidates


def _index_params(kind: str) -> Any:
    if kind == "integer_tenant":
        return qe.IntegerIndexParams(lookup=True, range=False, is_principal=True)
    if kind == "integer":
        return qe.IntegerIndexParams(lookup=True, range=True)
    if kind == "float":
        return qe.FloatIndexParams()
    return qe.KeywordIndexParams()


def _edge_vectors(vectors: TextVectors) -> dict[str, Any]:
    named: dict[str, Any] = {}
    if vectors.dense is not None:
        named[DENSE] = list(vectors.dense)
    if vectors.sparse is not None:
        named[SPARSE] = qe.SparseVector(list(vectors.sparse.indices), list(vectors.sparse.values))
    return named


def _from_edge_vectors(raw: Any) -> TextVectors | None:
    if not isinstance(raw, dict):
        return None
    dense = raw.get(DENSE)
    sparse = raw.get(SPARSE)
    return TextVectors(
        dense=tuple(dense) if dense is not None else None,
        sparse=SparseVector.of(sparse.indices, sparse.values) if sparse is not None else None,
    )


def edge_filter(f: PointFilter) -> qe.Filter:
    """The Qdrant Edge filter for one agent's search."""
    must: list[Any] = [
        qe.FieldCondition("agent_id", match=qe.MatchValue(f.agent_id)),
    ]
    if f.topic is not None:
        must.append(qe.FieldCondition("topic", match=qe.MatchValue(f.topic)))
    if f.location is not None:
        must.append(qe.FieldCondition("location", match=qe.MatchValue(f.location)))
    if f.day_range is not None:
        start, end = f.day_range[0] * SECONDS_PER_DAY, (f.day_range[1] + 1) * SECONDS_PER_DAY
        must.append(qe.FieldCondition("time", range=qe.RangeFloat(gte=start, lt=end)))
    if f.time_range is not None:
        must.append(
            qe.FieldCondition("t", range=qe.RangeFloat(gte=f.time_range[0], lte=f.time_range[1]))
        )
    if f.keys is not None:
        must.append(qe.FieldCondition("key", match=qe.MatchAny(list(f.keys))))
    if f.ids is not None:
        must.append(qe.HasIdCondition(set(f.ids)))
    return qe.Filter(must=must)


class EdgeVectorStore:
    """A Qdrant Edge shard under `path`; created with payload indexes or reopened from disk."""

    def __init__(
        self,
        path: Path,
        dense_size: int | None,
        sparse: bool,
        indexes: Mapping[str, str] = STREAM_INDEXES,
    ) -> None:
        self.path = Path(path)
        vectors = (
            {DENSE: qe.EdgeVectorParams(size=dense_size, distance=qe.Distance.Cosine)}
            if dense_size
            else None
        )
        sparse_vectors = (
            {SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)} if sparse else None
        )
        # Vacuum any segment with deleted points when optimize() runs (checkpoints): until
        # then Qdrant's IDF still counts points moved to cold.
        optimizers = qe.EdgeOptimizersConfig(deleted_threshold=0.0, vacuum_min_vector_number=1)
        config = qe.EdgeConfig(
            vectors=vectors, sparse_vectors=sparse_vectors, optimizers=optimizers
        )
        if self.path.exists() and any(self.path.iterdir()):
            self._shard = qe.EdgeShard.load(str(self.path), config)
        else:
            self.path.mkdir(parents=True, exist_ok=True)
            self._shard = qe.EdgeShard.create(str(self.path), config)
            for name, kind in indexes.items():
                self._shard.update(qe.UpdateOperation.create_field_index(name, _index_params(kind)))

    async def upsert(self, points: Sequence[MemoryPoint]) -> None:
        if not points:
            return
        edge_points = [qe.Point(p.id, _edge_vectors(p.vectors), p.payload) for p in points]
        self._shard.update(qe.UpdateOperation.upsert_points(edge_points))

    def _relevance_stage(self, q: VectorQuery, limit: int) -> tuple[Any, list[Any], bool]:
        """(query, prefetches, has_relevance) of the candidate stage."""
        flt = edge_filter(q.filter)
        stages: list[qe.Prefetch] = []
        if q.vectors.dense is not None:
            stages.append(
                qe.Prefetch(
                    limit=limit,
                    query=qe.Query.Nearest(list(q.vectors.dense), using=DENSE),
                    filter=flt,
                )
            )
        if q.vectors.sparse is not None and not q.vectors.sparse.is_empty():
            vec = qe.SparseVector(list(q.vectors.sparse.indices), list(q.vectors.sparse.values))
            stages.append(
                qe.Prefetch(limit=limit, query=qe.Query.Nearest(vec, using=SPARSE), filter=flt)
            )
        if len(stages) == 2:
            k = q.scoring.rrf_k if q.scoring else 60
            return qe.Fusion.Rrf(k=k), stages, True
        if len(stages) == 1:
            return stages[0].query, [], True
        # No term of the query is known: rank by recency alone.
        return qe.OrderBy("time", direction=qe.Direction.Desc), [], False

    def _request(self, q: VectorQuery) -> qe.QueryRequest:
        with_payload = q.with_payload
        if q.scoring is None:
            query, prefetches, _ = self._relevance_stage(q, q.limit)
            return qe.QueryRequest(
                limit=q.limit,
                query=query,
                prefetches=prefetches or None,
                filter=None if prefetches else edge_filter(q.filter),
                with_payload=with_payload,
                with_vector=q.with_vectors,
            )
        cfg = q.scoring
        candidates = q.candidates or max(cfg.candidate_limit, q.limit)
        query, prefetches, has_relevance = self._relevance_stage(q, candidates)
        stages = [
            qe.Prefetch(
                limit=candidates,
                query=query,
                prefetches=prefetches or None,
                filter=None if prefetches else edge_filter(q.filter),
            )
        ]
        if has_relevance and cfg.candidates == "all":
            # The most recent memories compete too (relevance 0 unless also matched), as in
            # Generative Agents where every memory is a candidate.
            stages.append(
                qe.Prefetch(
                    limit=candidates,
                    query=qe.OrderBy("time", direction=qe.Direction.Desc),
                    filter=edge_filter(q.filter),
                )
            )
        terms = [
            E.Mult(
                [
                    E.Constant(cfg.recency_weight),
                    E.Decay(
                        qe.DecayKind.Exp,
                        E.Variable("time"),
                        target=E.Constant(q.now),
                        midpoint=0.5,
                        scale=cfg.half_life_seconds,
                    ),
                ]
            ),
            E.Mult([E.Constant(cfg.importance_weight), self._importance(q)]),
        ]
        if has_relevance:
            terms.append(E.Mult([E.Constant(cfg.relevance_weight), self._relevance(q)]))
        return qe.QueryRequest(
            limit=q.limit,
            prefetches=stages,
            query=qe.Formula(E.Sum(terms), defaults={RELEVANCE: 0.0}),
            with_payload=with_payload,
            with_vector=q.with_vectors,
        )

    @staticmethod
    def _importance(q: VectorQuery) -> Any:
        """Stored importance, or with forgetting on: importance × f_layer ** days since set."""
        if not q.layer_decay:
            return E.Variable("importance")
        days = E.Div(
            E.Sum([E.Constant(q.now), E.Neg(E.Variable("layer_since"))]),
            E.Constant(86_400.0),
            by_zero_default=0.0,
        )
        return E.Sum(
            [
                E.Mult(
                    [
                        E.Condition(qe.FieldCondition("layer", match=qe.MatchValue(layer))),
                        E.Variable("importance"),
                        E.Pow(E.Constant(factor), days),
                    ]
                )
                for layer, factor in q.layer_decay.items()
            ]
        )

    @staticmethod
    def _relevance(q: VectorQuery) -> Any:
        assert q.scoring is not None
        score = E.Variable(RELEVANCE)
        if q.normalization == "saturate":
            return E.Div(
                score, E.Sum([score, E.Constant(q.scoring.saturation_k)]), by_zero_default=0.0
            )
        if q.normalization == "rrf":
            return E.Mult([score, E.Constant((q.scoring.rrf_k + 1) / 2)])
        return score

    async def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPoint]]:
        if not queries:
            return []
        results = self._shard.query_batch(qe.QueryBatchRequest([self._request(q) for q in queries]))
        return [
            [
                ScoredPoint(
                    id=int(p.id),
                    score=float(p.score),
                    payload=p.payload,
                    vectors=_from_edge_vectors(p.vector) if q.with_vectors else None,
                )
                for p in hits
            ]
            for q, hits in zip(queries, results, strict=True)
        ]

    async def retrieve(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        if not ids:
            return {}
        records = self._shard.retrieve(list(ids), with_payload=True, with_vector=False)
        return {int(r.id): dict(r.payload or {}) for r in records}

    async def fetch(self, ids: Sequence[int]) -> list[ScoredPoint]:
        if not ids:
            return []
        return self._scored(self._shard.retrieve(list(ids), with_payload=True, with_vector=True))

    async def set_payload(self, ids: Sequence[int], payload: dict[str, Any]) -> None:
        if ids:
            self._shard.update(qe.UpdateOperation.set_payload(list(ids), payload))

    async def delete(self, ids: Sequence[int]) -> None:
        if ids:
            self._shard.update(qe.UpdateOperation.delete_points(list(ids)))

    async def count(self, agent_id: int | None = None) -> int:
        must: list[Any] = []
        if agent_id is not None:
            must.append(qe.FieldCondition("agent_id", match=qe.MatchValue(agent_id)))
        return int(
            self._shard.count(
                qe.CountRequest(exact=True, filter=qe.Filter(must=must) if must else None)
            )
        )

    @staticmethod
    def _scored(records: Any) -> list[ScoredPoint]:
        return [
            ScoredPoint(
                id=int(r.id),
                score=0.0,
                payload=dict(r.payload or {}),
                vectors=_from_edge_vectors(r.vector),
            )
            for r in records
        ]

    async def scroll_oldest(
        self, agent_id: int | None, before_time: float | None, limit: int
    ) -> list[ScoredPoint]:
        must: list[Any] = []
        if agent_id is not None:
            must.append(qe.FieldCondition("agent_id", match=qe.MatchValue(agent_id)))
        if before_time is not None:
            must.append(qe.FieldCondition("time", range=qe.RangeFloat(lt=before_time)))
        records, _ = self._shard.scroll(
            qe.ScrollRequest(
                limit=limit,
                filter=qe.Filter(must=must) if must else None,
                with_payload=True,
                with_vector=True,
                order_by=qe.OrderBy("time", direction=qe.Direction.Asc),
            )
        )
        return self._scored(records)

    async def scroll(
        self, offset: int | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[ScoredPoint], int | None]:
        request = qe.ScrollRequest(
            offset=offset, limit=limit, with_payload=True, with_vector=with_vectors
        )
        records, next_offset = self._shard.scroll(request)
        return self._scored(records), int(next_offset) if next_offset is not None else None

    async def optimize(self) -> None:
        """Merge segments and vacuum deleted points (blocking work, off the event loop)."""
        await asyncio.to_thread(self._shard.optimize)

    async def flush(self) -> None:
        self._shard.flush()

    async def close(self) -> None:
        self._shard.flush()
        self._shard.close()
