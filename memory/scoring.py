"""Retrieval score of Generative Agents: α·recency + β·importance + γ·relevance.

The stores compute it inside Qdrant (prefetch + Formula); the functions here are the same
formula in Python, used for MMR re-ranking, cold-tier search and to check the engine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RelevanceNormalization = Literal["auto", "saturate", "identity", "rrf"]


class RetrievalConfig(BaseModel):
    """Weights, recency decay and relevance normalisation of the retrieval score."""

    model_config = ConfigDict(extra="forbid")

    recency_weight: float = Field(1.0, ge=0.0, description="α")
    importance_weight: float = Field(1.0, ge=0.0, description="β")
    relevance_weight: float = Field(1.0, ge=0.0, description="γ")
    recency_half_life_hours: float = Field(
        24.0, gt=0.0, description="Simulated hours after which recency halves."
    )
    relevance_normalization: RelevanceNormalization = Field(
        "auto",
        description="saturate: s/(s+k) for BM25; identity: cosine as is; rrf: RRF score "
        "scaled to 0..1; auto picks by embedder (sparse→saturate, dense→identity, hybrid→rrf).",
    )
    saturation_k: float = Field(2.0, gt=0.0)
    rrf_k: int = Field(60, ge=1)
    candidate_limit: int = Field(
        64, ge=1, le=10_000, description="Relevance candidates prefetched before rescoring."
    )
    recency_candidates: int = Field(
        8,
        ge=0,
        le=10_000,
        description="Most recent memories that compete beside the relevance candidates "
        "(relevance 0 unless matched); 0 = only memories relevant to the query.",
    )
    mmr_lambda: float | None = Field(
        None, ge=0.0, le=1.0, description="Set to diversify results with MMR (1 = no diversity)."
    )

    @property
    def half_life_seconds(self) -> float:
        return self.recency_half_life_hours * 3600.0

    def resolved_normalization(self, dense: bool, sparse: bool) -> str:
        """The normalisation actually used for an embedder with these vector kinds."""
        if self.relevance_normalization != "auto":
            return self.relevance_normalization
        if dense and sparse:
            return "rrf"
        return "identity" if dense else "saturate"


def recency(age_seconds: float, half_life_seconds: float) -> float:
    """0.5 ** (|age| / half_life): Qdrant's exp_decay with midpoint 0.5 and scale half_life."""
    return 0.5 ** (abs(age_seconds) / half_life_seconds)


def normalized_relevance(raw: float, mode: str, config: RetrievalConfig, sources: int = 2) -> float:
    """Map a raw engine score onto roughly 0..1 the way the Qdrant formula does."""
    if mode == "saturate":
        return raw / (raw + config.saturation_k) if raw + config.saturation_k != 0 else 0.0
    if mode == "rrf":
        return raw * (config.rrf_k + 1) / sources
    return raw


def retrieval_score(
    *, age_seconds: float, importance: float, relevance: float, config: RetrievalConfig
) -> float:
    """α·recency + β·importance + γ·relevance with already-normalised relevance."""
    return (
        config.recency_weight * recency(age_seconds, config.half_life_seconds)
        + config.importance_weight * importance
        + config.relevance_weight * relevance
    )


def cosine(a: object, b: object) -> float:
    """Cosine of two sparse vectors or two dense sequences (0 when either is empty)."""
    from societas.memory.embedding.base import SparseVector

    if isinstance(a, SparseVector) and isinstance(b, SparseVector):
        bd = dict(zip(b.indices, b.values, strict=True))
        dot = sum(v * bd.get(i, 0.0) for i, v in zip(a.indices, a.values, strict=True))
        na = math.sqrt(sum(v * v for v in a.values))
        nb = math.sqrt(sum(v * v for v in b.values))
    else:
        av, bv = list(a), list(b)  # type: ignore[call-overload]
        dot = sum(x * y for x, y in zip(av, bv, strict=True))
        na = math.sqrt(sum(x * x for x in av))
        nb = math.sqrt(sum(y * y for y in bv))
    return dot / (na * nb) if na and nb else 0.0


def text_cosine(a: object, b: object) -> float:
    """Cosine of two embedded texts: dense when both have it, else sparse, else 0."""
    if a.dense is not None and b.dense is not None:  # type: ignore[attr-defined]
        return cosine(a.dense, b.dense)  # type: ignore[attr-defined]
    if a.sparse is None or b.sparse is None:  # type: ignore[attr-defined]
        return 0.0
    return cosine(a.sparse, b.sparse)  # type: ignore[attr-defined]


def mmr_select(
    scores: Sequence[float], vectors: Sequence[object], top_k: int, lambda_: float
) -> list[int]:
    """Greedy Maximal Marginal Relevance: indexes of `top_k` items, diverse and well scored."""
    remaining = list(range(len(scores)))
    chosen: list[int] = []
    while remaining and len(chosen) < top_k:

        def gain(i: int) -> float:
            redundancy = max((cosine(vectors[i], vectors[j]) for j in chosen), default=0.0)
            return lambda_ * scores[i] - (1.0 - lambda_) * redundancy

        best = max(remaining, key=gain)
        chosen.append(best)
        remaining.remove(best)
    return chosen
