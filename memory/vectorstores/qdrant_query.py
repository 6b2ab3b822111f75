"""Qdrant query requests for qdrant-client: the agent filter, the relevance stage and the
Generative Agents formula (the same scoring as the Qdrant Edge backend builds)."""

from __future__ import annotations

from typing import Any

from qdrant_client import models

from societas.memory.retrieval.scoring import RetrievalConfig, score_of
from societas.memory.vectorstores.base import (
    DENSE,
    SECONDS_PER_DAY,
    SPARSE,
    PointFilter,
    VectorQuery,
    type_condition,
)

RELEVANCE = "$score[0]"  # the relevance prefetch's score; absent for recency-only candidates


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
    must_not: list[Any] = []
    wanted, unwanted = type_condition(f.types)
    if wanted:
        must.append(models.FieldCondition(key="type", match=models.MatchAny(any=wanted)))
    if unwanted:
        must_not.append(models.FieldCondition(key="type", match=models.MatchAny(any=unwanted)))
    if f.tags is not None:
        must.append(models.FieldCondition(key="tags", match=models.MatchAny(any=list(f.tags))))
    if f.layers is not None:
        must.append(models.FieldCondition(key="layer", match=models.MatchAny(any=list(f.layers))))
    if f.alive_at is not None:  # a point without expires_at never expires
        must_not.append(models.FieldCondition(key="expires_at", range=models.Range(lte=f.alive_at)))
    return models.Filter(must=must, must_not=must_not or None)


def relevance_stage(q: VectorQuery, limit: int) -> tuple[dict[str, Any], bool]:
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


def query_request(q: VectorQuery, shard_key: str | None) -> models.QueryRequest:
    common = {
        "with_payload": q.with_payload,
        "with_vector": q.with_vectors,
        "shard_key": shard_key,
    }
    if q.scoring is None:
        stage, _ = relevance_stage(q, q.limit)
        return models.QueryRequest(limit=q.limit, **stage, **common)
    cfg = q.scoring
    candidates = q.candidates or max(cfg.candidate_limit, q.limit)
    stage, has_relevance = relevance_stage(q, candidates)
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
    formula = models.FormulaQuery(
        formula=score_of(
            QdrantAlgebra(),
            cfg,
            q.now,
            q.normalization,
            has_relevance,
            q.layer_decay,
            q.layer_recency,
        ),
        defaults={RELEVANCE: 0.0},
    )
    return models.QueryRequest(limit=q.limit, prefetch=prefetches, query=formula, **common)


class QdrantAlgebra:
    """The retrieval score (memory.retrieval.scoring) as a qdrant-client formula expression."""

    def constant(self, value: float) -> Any:
        return value

    def field(self, name: str) -> Any:
        return name

    def relevance(self) -> Any:
        return RELEVANCE

    def recency(self, now: float, config: RetrievalConfig) -> Any:
        return models.ExpDecayExpression(
            exp_decay=models.DecayParamsExpression(
                x="time", target=now, midpoint=0.5, scale=config.half_life_seconds
            )
        )

    def add(self, terms: list[Any]) -> Any:
        return models.SumExpression(sum=terms)

    def mul(self, terms: list[Any]) -> Any:
        return models.MultExpression(mult=terms)

    def div(self, left: Any, right: Any) -> Any:
        return models.DivExpression(
            div=models.DivParams(left=left, right=right, by_zero_default=0.0)
        )

    def neg(self, value: Any) -> Any:
        return models.NegExpression(neg=value)

    def pow(self, base: float, exponent: Any) -> Any:
        return models.PowExpression(pow=models.PowParams(base=base, exponent=exponent))

    def layer_is(self, layer: str) -> Any:
        return models.FieldCondition(key="layer", match=models.MatchValue(value=layer))
