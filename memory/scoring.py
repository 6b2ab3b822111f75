"""Retrieval score of Generative Agents: α·recency + β·importance + γ·relevance.

The stores compute it inside Qdrant (prefetch + Formula); the functions here are the same
formula in Python, used for MMR re-ranking, cold-tier search and to check the engine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

RelevanceNormalization = Literal["auto", "saturate", "identity", "rrf"]


class RetrievalConfig(BaseModel):
    """Weights, recency decay and relevance normalisation of the retrieval score."""

    model_config = ConfigDict(extra="forbid")

    recency_weight: float = Field(1.0, ge=0.0, description="α")
    importance_weight: float = Field(1.0, ge=0.0, description="β")
    relevance_weight: float = Field(1.0, ge=0.0, description="γ")
    recency_decay_per_hour: float = Field(
        0.99,
        gt=0.0,
        lt=1.0,
        description="Recency is this factor to the power of the simulated hours since the "
        "memory (0.99 as in Generative Agents and AgentSociety).",
    )
    recency_half_life_hours: float | None = Field(
        None,
        gt=0.0,
        description="Alternative to the decay: simulated hours after which recency halves "
        "(when set, it wins over recency_decay_per_hour).",
    )
    relevance_normalization: RelevanceNormalization = Field(
        "auto",
        description="saturate: s/(s+k) for BM25; identity: cosine as is; rrf: RRF score "
        "scaled to 0..1; auto picks by embedder (sparse→saturate, dense→identity, hybrid→rrf).",
    )
    saturation_k: float = Field(2.0, gt=0.0)
    rrf_k: int = Field(60, ge=1)
    candidates: Literal["all", "relevant"] = Field(
        "all",
        description="all: every hot and warm memory of the agent competes (relevance 0 "
        "unless matched), as in Generative Agents; relevant: only memories matching the query.",
    )
    candidate_limit: int = Field(
        64,
        ge=1,
        le=10_000,
        description="Relevance hits fetched per search; the rest are bounded, and a search "
        "whose bound cannot rule them out is rescored over all of the agent's memories.",
    )
    recency_candidates: int | None = Field(
        None,
        ge=0,
        le=10_000,
        description="Deprecated (every memory competes now); 0 means candidates='relevant'.",
    )
    mmr_lambda: float | None = Field(
        None, ge=0.0, le=1.0, description="Set to diversify results with MMR (1 = no diversity)."
    )

    @model_validator(mode="after")
    def _legacy_recency_candidates(self) -> RetrievalConfig:
        if self.recency_candidates == 0:
            self.candidates = "relevant"
        return self

    @property
    def decay_per_hour(self) -> float:
        """Recency factor per simulated hour (from the half-life when one is set)."""
        if self.recency_half_life_hours is not None:
            return 0.5 ** (1.0 / self.recency_half_life_hours)
        return self.recency_decay_per_hour

    @property
    def half_life_seconds(self) -> float:
        """Simulated seconds after which recency halves (the engine's exp_decay scale)."""
        if self.recency_half_life_hours is not None:
            return self.recency_half_life_hours * 3600.0
        return 3600.0 * math.log(0.5) / math.log(self.recency_decay_per_hour)

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
