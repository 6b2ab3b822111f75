"""Qdrant query requests for qdrant-client: agent filter, relevance stage, scoring formula."""

from __future__ import annotations

from typing import Any

from qdrant_client import models

from societas.memory.retrieval.scoring import RetrievalConfig, query_score
from societas.memory.vectorstores.base import (
    DENSE,
    SPARSE,
    Condition,
    PointFilter,
    VectorQuery,
    filter_conditions,
)

RELEVANCE = "$score[0]"  # the relevance prefetch's score; absent for recency-only candidates


def _condition(c: Condition) -> Any:
    if c.field == "id":
        return models.HasIdCondition(has_id=list(c.values or ()))
    if c.values is not None:
        return models.FieldCondition(key=c.field, match=models.MatchAny(any=list(c.values)))
    if c.value is not None:
        return models.FieldCondition(key=c.field, match=models.MatchValue(value=c.value))
    return models.FieldCondition(key=c.field, range=models.Range(gte=c.gte, lt=c.lt, lte=c.lte))


def qdrant_filter(f: PointFilter) -> models.Filter:
    """The qdrant-client filter for one agent's search (the conditions the edge one has)."""
    must, must_not = filter_conditions(f)
    return models.Filter(
        must=[_condition(c) for c in must], must_not=[_condition(c) for c in must_not] or None
    )


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
    common = {"with_payload": q.with_payload, "with_vector": q.with_vectors, "shard_key": shard_key}
    if q.scoring is None:
        stage, _ = relevance_stage(q, q.limit)
        return models.QueryRequest(limit=q.limit, **stage, **common)
    cfg = q.scoring
    candidates = q.candidates or max(cfg.candidate_limit, q.limit)
    stage, has_relevance = relevance_stage(q, candidates)
    prefetches = [models.Prefetch(limit=candidates, **stage)]
    if has_relevance and cfg.candidates == "all":
        order = models.OrderBy(key="time", direction=models.Direction.DESC)
        prefetches.append(
            models.Prefetch(
                query=models.OrderByQuery(order_by=order),
                filter=qdrant_filter(q.filter),
                limit=candidates,
            )
        )
    formula = models.FormulaQuery(
        formula=query_score(QdrantAlgebra(), q, has_relevance), defaults={RELEVANCE: 0.0}
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

    def least(self, terms: list[Any]) -> Any:
        return models.MinExpression(min=terms)

    def pow(self, base: float, exponent: Any) -> Any:
        return models.PowExpression(pow=models.PowParams(base=base, exponent=exponent))

    def layer_is(self, layer: str) -> Any:
        return models.FieldCondition(key="layer", match=models.MatchValue(value=layer))
