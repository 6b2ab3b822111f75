"""Qdrant Edge query requests: agent filter, relevance stage, scoring formula."""

from __future__ import annotations

from typing import Any

import qdrant_edge as qe

from societas.memory.retrieval.scoring import RetrievalConfig, query_score
from societas.memory.vectorstores.base import (
    DENSE,
    SPARSE,
    Condition,
    PointFilter,
    VectorQuery,
    filter_conditions,
)

E = qe.Expression
RELEVANCE = "$score[0]"  # the relevance prefetch's score; absent for recency-only candidates


def _condition(c: Condition) -> Any:
    if c.field == "id":
        return qe.HasIdCondition(set(c.values or ()))
    if c.values is not None:
        return qe.FieldCondition(c.field, match=qe.MatchAny(list(c.values)))
    if c.value is not None:
        return qe.FieldCondition(c.field, match=qe.MatchValue(c.value))
    return qe.FieldCondition(c.field, range=qe.RangeFloat(gte=c.gte, lt=c.lt, lte=c.lte))


def edge_filter(f: PointFilter) -> qe.Filter:
    """The Qdrant Edge filter for one agent's search."""
    must, must_not = filter_conditions(f)
    conditions = [_condition(c) for c in must]
    if must_not:
        return qe.Filter(must=conditions, must_not=[_condition(c) for c in must_not])
    return qe.Filter(must=conditions)


def relevance_stage(q: VectorQuery, limit: int) -> tuple[Any, list[Any], bool]:
    """(query, prefetches, has_relevance) of the candidate stage."""
    flt = edge_filter(q.filter)
    stages: list[qe.Prefetch] = []
    if q.vectors.dense is not None:
        stages.append(
            qe.Prefetch(
                limit=limit, query=qe.Query.Nearest(list(q.vectors.dense), using=DENSE), filter=flt
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


def query_request(q: VectorQuery) -> qe.QueryRequest:
    cfg = q.scoring
    candidates = q.limit if cfg is None else q.candidates or max(cfg.candidate_limit, q.limit)
    query, prefetches, has_relevance = relevance_stage(q, candidates)
    stage: dict[str, Any] = {
        "query": query,
        "prefetches": prefetches or None,
        "filter": None if prefetches else edge_filter(q.filter),
    }
    if cfg is None:
        return qe.QueryRequest(
            limit=q.limit, **stage, with_payload=q.with_payload, with_vector=q.with_vectors
        )
    stages = [qe.Prefetch(limit=candidates, **stage)]
    if has_relevance and cfg.candidates == "all":
        # the most recent memories compete too (relevance 0 unless also matched)
        stages.append(
            qe.Prefetch(
                limit=candidates,
                query=qe.OrderBy("time", direction=qe.Direction.Desc),
                filter=edge_filter(q.filter),
            )
        )
    formula = query_score(EdgeAlgebra(), q, has_relevance)
    return qe.QueryRequest(
        limit=q.limit,
        prefetches=stages,
        query=qe.Formula(formula, defaults={RELEVANCE: 0.0}),
        with_payload=q.with_payload,
        with_vector=q.with_vectors,
    )


class EdgeAlgebra:
    """The retrieval score (memory.retrieval.scoring) as a Qdrant Edge formula expression."""

    def constant(self, value: float) -> Any:
        return E.Constant(value)

    def field(self, name: str) -> Any:
        return E.Variable(name)

    def relevance(self) -> Any:
        return E.Variable(RELEVANCE)

    def recency(self, now: float, config: RetrievalConfig) -> Any:
        return E.Decay(
            qe.DecayKind.Exp,
            E.Variable("time"),
            target=E.Constant(now),
            midpoint=0.5,
            scale=config.half_life_seconds,
        )

    def add(self, terms: list[Any]) -> Any:
        return E.Sum(terms)

    def mul(self, terms: list[Any]) -> Any:
        return E.Mult(terms)

    def div(self, left: Any, right: Any) -> Any:
        return E.Div(left, right, by_zero_default=0.0)

    def neg(self, value: Any) -> Any:
        return E.Neg(value)

    def least(self, terms: list[Any]) -> Any:
        return E.Min(terms)

    def pow(self, base: float, exponent: Any) -> Any:
        return E.Pow(E.Constant(base), exponent)

    def layer_is(self, layer: str) -> Any:
        return E.Condition(qe.FieldCondition("layer", match=qe.MatchValue(layer)))
