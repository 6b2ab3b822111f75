"""Qdrant query requests for qdrant-client: the agent filter, the relevance stage and the
Generative Agents formula (the same scoring as the Qdrant Edge backend builds)."""

from __future__ import annotations

from typing import Any

from qdrant_client import models

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
        models.MultExpression(mult=[cfg.importance_weight, _importance(q)]),
    ]
    if has_relevance:
        terms.append(models.MultExpression(mult=[cfg.relevance_weight, _relevance(q)]))
    formula = models.FormulaQuery(
        formula=models.SumExpression(sum=terms), defaults={RELEVANCE: 0.0}
    )
    return models.QueryRequest(limit=q.limit, prefetch=prefetches, query=formula, **common)


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
