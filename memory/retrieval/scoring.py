"""Retrieval score of Generative Agents: α·recency + β·importance + γ·relevance."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from societas.memory.embedding.base import SparseVector, TextVectors
    from societas.memory.vectorstores.base import VectorQuery

RelevanceNormalization = Literal["auto", "exact", "saturate", "identity", "rrf"]
N = TypeVar("N")
BM25_K1, BM25_B, BM25_AVG_LEN = 1.2, 0.75, 256.0  # the BM25 embedder's parameters


class RetrievalConfig(BaseModel, extra="forbid"):
    """Weights, recency decay and relevance normalisation of the retrieval score."""

    recency_weight: float = Field(1.0, ge=0.0, description="α")
    importance_weight: float = Field(1.0, ge=0.0, description="β")
    relevance_weight: float = Field(2.0, ge=0.0, description="γ")
    recency_decay_per_hour: float = Field(
        0.999,
        gt=0.0,
        lt=1.0,
        description="Recency: this factor to the power of simulated hours since the memory.",
    )
    recency_half_life_hours: float | None = Field(
        None,
        gt=0.0,
        description="Simulated hours after which recency halves (wins over the decay).",
    )
    relevance_normalization: RelevanceNormalization = Field(
        "auto",
        description="exact: BM25 over a query-equal memory's (≤ 1); saturate: s/(s+k); identity: "
        "as is; rrf: scaled to 0..1; auto: sparse→exact, dense→identity, hybrid→rrf.",
    )
    saturation_k: float = Field(2.0, gt=0.0)
    rrf_k: int = Field(60, ge=1)
    candidates: Literal["all", "relevant"] = Field(
        "all", description="all: every memory of the agent competes; relevant: only those matching."
    )
    candidate_limit: int = Field(
        64,
        ge=1,
        le=10_000,
        description="Relevance hits fetched per search; the rest are bounded, else rescored.",
    )
    mmr_lambda: float | None = Field(
        None, ge=0.0, le=1.0, description="Set to diversify results with MMR (1 = no diversity)."
    )

    @property
    def decay_per_hour(self) -> float:
        """Recency factor per simulated hour (from the half-life when one is set)."""
        if self.recency_half_life_hours is not None:
            return 0.5 ** (1.0 / self.recency_half_life_hours)
        return self.recency_decay_per_hour

    @property
    def log_decay_per_second(self) -> float:
        """ln of the recency factor per simulated second."""
        return math.log(self.decay_per_hour) / 3600.0

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
        return "identity" if dense else "exact"


class ScoreAlgebra(Protocol[N]):
    """The operations a score is built from, in one backend's terms (numbers or formulas)."""

    def constant(self, value: float) -> N: ...

    def field(self, name: str) -> N: ...  # a memory's field: importance, layer_since

    def relevance(self) -> N: ...  # the raw relevance of the memory to the query

    def recency(self, now: float, config: RetrievalConfig) -> N: ...  # decay of its time

    def add(self, terms: list[N]) -> N: ...

    def mul(self, terms: list[N]) -> N: ...

    def div(self, left: N, right: N) -> N: ...  # 0 where `right` is 0

    def neg(self, value: N) -> N: ...

    def least(self, terms: list[N]) -> N: ...

    def pow(self, base: float, exponent: N) -> N: ...

    def layer_is(self, layer: str) -> N: ...  # 1 for memories in `layer`, else 0


def _layer_days(alg: ScoreAlgebra[N], now: float) -> N:
    """Simulated days since the memory's layer clock last restarted (added, moved, read)."""
    return alg.div(
        alg.add([alg.constant(now), alg.neg(alg.field("layer_since"))]), alg.constant(86_400.0)
    )


def importance_term(
    alg: ScoreAlgebra[N], now: float, layer_decay: Mapping[str, float] | None = None
) -> N:
    """Stored importance, or with forgetting on: importance × f_layer ** days since set."""
    if not layer_decay:
        return alg.field("importance")
    days = _layer_days(alg, now)
    return alg.add(
        [
            alg.mul([alg.layer_is(layer), alg.field("importance"), alg.pow(factor, days)])
            for layer, factor in layer_decay.items()
        ]
    )


def recency_term(
    alg: ScoreAlgebra[N],
    config: RetrievalConfig,
    now: float,
    layer_recency: Mapping[str, float] | None = None,
) -> N:
    """decay_per_hour ** hours since the memory, or e^(−Δ/Q_layer) with FinMem layers."""
    if not layer_recency:
        return alg.recency(now, config)
    days = _layer_days(alg, now)
    return alg.add(
        [
            alg.mul([alg.layer_is(layer), alg.pow(math.exp(-1.0 / tau), days)])
            for layer, tau in layer_recency.items()
        ]
    )


def exact_match_score(idf_weights: Iterable[float], query_terms: int) -> float:
    """BM25 of a memory equal to the query: the `exact` relevance scale."""
    length = 1.0 - BM25_B + BM25_B * query_terms / BM25_AVG_LEN
    return (BM25_K1 + 1.0) / (1.0 + BM25_K1 * length) * sum(idf_weights)


def relevance_term(
    alg: ScoreAlgebra[N], normalization: str, config: RetrievalConfig, scale: Any = 1.0
) -> N:
    """Relevance on 0..1: BM25 over `scale`, saturated s/(s+k), RRF scaled, or cosine as is."""
    raw = alg.relevance()
    if normalization == "exact":
        return alg.least([alg.div(raw, alg.constant(scale)), alg.constant(1.0)])
    if normalization == "saturate":
        return alg.div(raw, alg.add([raw, alg.constant(config.saturation_k)]))
    if normalization == "rrf":
        return alg.mul([raw, alg.constant((config.rrf_k + 1) / 2)])
    return raw


def base_terms(
    alg: ScoreAlgebra[N],
    config: RetrievalConfig,
    now: float,
    layer_decay: Mapping[str, float] | None = None,
    layer_recency: Mapping[str, float] | None = None,
) -> list[N]:
    """α·recency and β·importance: the score's terms that do not depend on the query."""
    return [
        alg.mul(
            [alg.constant(config.recency_weight), recency_term(alg, config, now, layer_recency)]
        ),
        alg.mul([alg.constant(config.importance_weight), importance_term(alg, now, layer_decay)]),
    ]


def weighted_relevance(
    alg: ScoreAlgebra[N], config: RetrievalConfig, normalization: str, scale: Any = 1.0
) -> N:
    """γ·relevance, the score's query term."""
    relevance = relevance_term(alg, normalization, config, scale)
    return alg.mul([alg.constant(config.relevance_weight), relevance])


def score_of(
    alg: ScoreAlgebra[N],
    config: RetrievalConfig,
    now: float,
    normalization: str,
    relevance: bool = True,
    layer_decay: Mapping[str, float] | None = None,
    layer_recency: Mapping[str, float] | None = None,
    scale: Any = 1.0,
) -> N:
    """α·recency + β·importance + γ·relevance: the one definition every path builds from."""
    terms = base_terms(alg, config, now, layer_decay, layer_recency)
    if relevance:
        terms.append(weighted_relevance(alg, config, normalization, scale))
    return alg.add(terms)


def query_score(alg: ScoreAlgebra[N], q: VectorQuery, relevance: bool) -> N:
    """`score_of` as a vector store's query asks for it (`q.scoring` set)."""
    assert q.scoring is not None
    layers = (q.layer_decay, q.layer_recency, q.relevance_scale)
    return score_of(alg, q.scoring, q.now, q.normalization, relevance, *layers)


@dataclass(slots=True)
class Numbers:
    """The score over numbers: floats or numpy arrays of the memories' fields."""

    time: Any
    importance: Any
    raw_relevance: Any = 0.0
    layer_since: Any = 0.0
    layer: Any = None  # numpy array of layer names, with forgetting on

    def constant(self, value: float) -> Any:
        return value

    def field(self, name: str) -> Any:
        return getattr(self, name)

    def relevance(self) -> Any:
        return self.raw_relevance

    def recency(self, now: float, config: RetrievalConfig) -> Any:
        """decay_per_hour ** hours since the memory, as exp(|age| · ln(decay) / 3600)."""
        age = np.subtract(now, self.time, dtype=np.float64)
        if not isinstance(age, np.ndarray):
            return np.exp(np.abs(age) * config.log_decay_per_second)
        np.abs(age, out=age)  # in place: one array for all the rows, not four
        age *= config.log_decay_per_second
        return np.exp(age, out=age)

    def add(self, terms: list[Any]) -> Any:
        return reduce(operator.add, terms)

    def mul(self, terms: list[Any]) -> Any:
        factors = [t for t in terms if not (isinstance(t, float) and t == 1.0)]  # x·1.0 is x
        return reduce(operator.mul, factors) if factors else 1.0

    def div(self, left: Any, right: Any) -> Any:
        if not isinstance(right, np.ndarray):
            return left / right if right != 0 else left * 0.0
        if right.all():
            return left / right
        return np.divide(left, right, out=np.zeros(np.shape(right)), where=right != 0)

    def neg(self, value: Any) -> Any:
        return -value

    def least(self, terms: list[Any]) -> Any:
        return np.minimum(*terms)

    def pow(self, base: float, exponent: Any) -> Any:
        return base**exponent

    def layer_is(self, layer: str) -> Any:
        return (np.asarray(self.layer) == layer).astype(np.float64)


def recency(age_seconds: float, half_life_seconds: float) -> float:
    """The score's recency term of a memory this old, with recency halving every half-life."""
    config = RetrievalConfig(recency_half_life_hours=half_life_seconds / 3600.0)
    return float(Numbers(time=-age_seconds, importance=0.0).recency(0.0, config))


def retrieval_score(
    *, age_seconds: float, importance: float, relevance: float, config: RetrievalConfig
) -> float:
    """α·recency + β·importance + γ·relevance of one memory, relevance already normalised."""
    numbers = Numbers(time=-age_seconds, importance=importance, raw_relevance=relevance)
    return float(score_of(numbers, config, 0.0, "identity"))


def cosine(a: SparseVector | Sequence[float], b: SparseVector | Sequence[float]) -> float:
    """Cosine of two sparse vectors or two dense sequences (0 when either is empty)."""
    from societas.memory.embedding.base import SparseVector

    if isinstance(a, SparseVector) and isinstance(b, SparseVector):
        bd = dict(zip(b.indices, b.values, strict=True))
        dot = sum(v * bd.get(i, 0.0) for i, v in zip(a.indices, a.values, strict=True))
        na = math.sqrt(sum(v * v for v in a.values))
        nb = math.sqrt(sum(v * v for v in b.values))
    elif isinstance(a, SparseVector) or isinstance(b, SparseVector):
        raise TypeError("cosine of a sparse and a dense vector")
    else:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        na = math.sqrt(sum(x * x for x in a))
        nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def text_cosine(a: TextVectors, b: TextVectors) -> float:
    """Cosine of two embedded texts: dense when both have it, else sparse, else 0."""
    if a.dense is not None and b.dense is not None:
        return cosine(a.dense, b.dense)
    if a.sparse is None or b.sparse is None:
        return 0.0
    return cosine(a.sparse, b.sparse)


class TextCosines:
    """`text_cosine` of texts against these ones at once, bit for bit (terms distinct per text)."""

    def __init__(self, texts: Sequence[TextVectors]) -> None:
        self.texts = texts
        self.sparse = all(t.dense is None for t in texts)  # else text by text, in Python
        got = [(r, v) for r, t in enumerate(texts) if (v := t.sparse) is not None and self.sparse]
        rows = np.repeat(np.array([r for r, _ in got], np.intp), [len(v.indices) for _, v in got])
        terms = np.array([i for _, v in got for i in v.indices], np.int64)
        values = np.array([x for _, v in got for x in v.values], np.float64)
        order = np.argsort(terms, kind="stable")  # by term, then row
        self.terms, self.rows, self.values = terms[order], rows[order], values[order]
        self.norms = np.zeros(len(texts))
        for r, v in got:
            self.norms[r] = math.sqrt(sum(x * x for x in v.values))

    def of(self, a: TextVectors) -> list[float]:
        """`text_cosine(a, b)` for each of these texts b, in order."""
        if not self.sparse or a.sparse is None:
            return [text_cosine(a, b) for b in self.texts]
        dot, terms = np.zeros(len(self.texts)), self.terms
        for term, v in zip(a.sparse.indices, a.sparse.values, strict=True):  # as `cosine` adds
            at = slice(terms.searchsorted(term), terms.searchsorted(term, "right"))
            dot[self.rows[at]] += v * self.values[at]
        denominator = math.sqrt(sum(v * v for v in a.sparse.values)) * self.norms
        return np.divide(dot, denominator, np.zeros_like(dot), where=denominator != 0).tolist()


def mmr_select(
    scores: Sequence[float],
    vectors: Sequence[SparseVector | Sequence[float]],
    top_k: int,
    lambda_: float,
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
