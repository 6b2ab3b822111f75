"""The engine's retrieval score equals α·recency + β·importance + γ·relevance computed here.

Relevance is recomputed independently too: fastembed's BM25 document weights times Qdrant's
IDF, ln(1 + (N - n + 0.5) / (n + 0.5)), summed over the query terms the memory contains.
"""

from __future__ import annotations

import itertools
import math

import pytest

from societas.memory import RetrievalConfig
from societas.memory.retrieval.scoring import Numbers, mmr_select, relevance_term, retrieval_score

FIXTURE = [  # (hours since start, importance, text)
    (0.0, 0.9, "the river flooded the lower town"),
    (5.0, 0.1, "a quiet morning with coffee and the river view"),
    (20.0, 0.5, "flood warning: the river is rising fast"),
    (30.0, 0.3, "helped a neighbour carry sandbags against the flood"),
    (31.0, 0.7, "the mayor spoke about flood defences and the budget"),
]

CONFIGS = [
    RetrievalConfig(),
    RetrievalConfig(
        recency_weight=2.0,
        importance_weight=0.5,
        relevance_weight=3.0,
        recency_half_life_hours=6.0,
        relevance_normalization="saturate",
        saturation_k=0.7,
    ),
    RetrievalConfig(recency_weight=0.0, importance_weight=0.0, relevance_weight=1.0),
    RetrievalConfig(recency_weight=1.0, importance_weight=0.0, relevance_weight=0.0),
]


def bm25_relevance(query_terms, doc_vectors, doc_index, total):
    """Independent BM25: document term weights × Qdrant IDF over all `total` points."""
    doc = dict(zip(doc_vectors[doc_index].indices, doc_vectors[doc_index].values, strict=True))
    score = 0.0
    for term in query_terms:
        if term not in doc:
            continue
        n = sum(1 for v in doc_vectors if term in v.indices)
        score += doc[term] * math.log(1 + (total - n + 0.5) / (n + 0.5))
    return score


def exact_relevance(query_terms, doc_vectors, doc_index, total):
    """Independent `exact` relevance: BM25 over that of a text equal to the query (each term
    once, as long as the query), at most 1."""
    counts = [sum(1 for v in doc_vectors if t in v.indices) for t in query_terms]
    idf = sum(math.log(1 + (total - n + 0.5) / (n + 0.5)) for n in counts if n)
    equal = 2.2 / (1 + 1.2 * (0.25 + 0.75 * len(query_terms) / 256)) * idf
    return min(1.0, bm25_relevance(query_terms, doc_vectors, doc_index, total) / equal)


@pytest.mark.parametrize("config_index", range(len(CONFIGS)))
@pytest.mark.parametrize("query", ["river flood", "flood budget", "coffee"])
async def test_engine_score_matches_independent_formula(
    group_factory, bm25_embedder, backend, config_index, query
):
    config = CONFIGS[config_index]
    group = group_factory(backend, retrieval=config.model_dump())
    await group.add_agents({1: {}})  # KV points live apart: they do not change stream IDF
    stream = group.agent(1).stream
    for hours, importance, text in FIXTURE:
        group.clock.set(int(hours // 24), (hours % 24) * 3600)
        await stream.add("event", text, importance=importance)
    group.clock.set(1, 12 * 3600)  # now = 36 h
    now_hours = 36.0

    hits = await stream.search(query, top_k=len(FIXTURE))
    docs = await bm25_embedder.embed_documents([text for _, _, text in FIXTURE])
    doc_vectors = [d.sparse for d in docs]
    assert await group.store.count() == len(FIXTURE)  # IDF's N: the stream points
    all_vectors = doc_vectors
    (q,) = await bm25_embedder.embed_queries([query])
    expected = {}
    for i, (hours, importance, text) in enumerate(FIXTURE):
        raw = bm25_relevance(q.sparse.indices, all_vectors, i, len(all_vectors))
        # Non-matching memories still compete through the recency candidates (relevance 0).
        expected[text] = retrieval_score(
            age_seconds=(now_hours - hours) * 3600,
            importance=importance,
            relevance=relevance_term(Numbers(0.0, 0.0, raw), "saturate", config)
            if config.relevance_normalization == "saturate"
            else exact_relevance(q.sparse.indices, all_vectors, i, len(all_vectors)),
            config=config,
        )
    assert {h.text for h in hits} == set(expected)
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.text], rel=1e-4, abs=1e-5)
    ordered = [expected[h.text] for h in hits]  # the engine ranks as the formula does (ties aside)
    assert all(a >= b - 1e-5 for a, b in itertools.pairwise(ordered))


@pytest.mark.parametrize("tiers", [("hot", "warm"), ("cold",)])
async def test_exact_match_counts_as_one(group_factory, tiers):
    """A memory equal to the query has relevance 1, one holding half its terms less, the
    rest 0: with relevance alone the scores are those values, in RAM and in cold."""
    tiering = {"hot_window_hours": 1.0, "warm_max_age_days": 1.0, "migrate_every_ticks": 1}
    only = {"recency_weight": 0.0, "importance_weight": 0.0, "relevance_weight": 1.0}
    group = group_factory("edge", retrieval=only, tiers=tiering if "cold" in tiers else {})
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    texts = ["storm harbour", "storm", "bread market"]
    ids = [await stream.add("event", text) for text in texts]
    group.clock.set(3, 0.0)
    await group.end_tick()
    scores = {h.id: h.score for h in await stream.search("storm harbour", top_k=3, tiers=tiers)}
    idf = [math.log(1 + (3 - n + 0.5) / (n + 0.5)) for n in (2, 1)]  # storm, harbour
    one = 2.2 / (1 + 1.2 * (0.25 + 0.75 * 1 / 256))  # a term's weight in a one-word text
    two = 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 256))
    assert scores[ids[0]] == pytest.approx(1.0, abs=1e-6)
    assert scores[ids[1]] == pytest.approx(one * idf[0] / (two * sum(idf)), rel=1e-5)
    assert 0.0 < scores[ids[1]] < 1.0 and scores.get(ids[2], 0.0) == 0.0


def test_recency_halves_every_half_life():
    config = RetrievalConfig(recency_half_life_hours=1.0)
    assert Numbers(time=0.0, importance=0.0).recency(0.0, config) == 1.0
    assert Numbers(time=0.0, importance=0.0).recency(3600.0, config) == pytest.approx(0.5)
    assert Numbers(time=7200.0, importance=0.0).recency(0.0, config) == pytest.approx(0.25)


def test_mmr_prefers_diverse_results():
    vectors = [(1.0, 0.0), (0.99, 0.14), (0.0, 1.0)]
    scores = [1.0, 0.95, 0.6]
    assert mmr_select(scores, vectors, 2, lambda_=1.0) == [0, 1]
    assert mmr_select(scores, vectors, 2, lambda_=0.3) == [0, 2]


async def test_mmr_option_diversifies_engine_results(group_factory):
    group = group_factory(
        "edge", retrieval={"mmr_lambda": 0.2, "recency_weight": 0.0, "importance_weight": 0.0}
    )
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    for text in [
        "storm storm storm coast",
        "storm storm storm coast again",
        "storm over the farm fields",
    ]:
        await stream.add("event", text, importance=0.5)
    plain = group_factory(
        "edge", sub="plain", retrieval={"recency_weight": 0.0, "importance_weight": 0.0}
    )
    await plain.add_agents({1: {}})
    for text in [
        "storm storm storm coast",
        "storm storm storm coast again",
        "storm over the farm fields",
    ]:
        await plain.agent(1).stream.add("event", text, importance=0.5)
    top_plain = [h.text for h in await plain.agent(1).stream.search("storm coast", top_k=2)]
    top_mmr = [h.text for h in await stream.search("storm coast", top_k=2)]
    assert set(top_plain) == {"storm storm storm coast", "storm storm storm coast again"}
    assert "storm over the farm fields" in top_mmr


def test_text_cosines_equal_text_cosine_bit_for_bit():
    """The policies' batch cosines are `text_cosine` exactly: equal ties, the same thresholds."""
    import random

    from societas.memory.embedding.base import SparseVector, TextVectors
    from societas.memory.retrieval.scoring import TextCosines, text_cosine

    rng = random.Random(7)

    def sparse() -> TextVectors:
        terms = rng.sample(range(40), rng.randint(0, 9))  # few terms: many shared, many ties
        return TextVectors(
            sparse=SparseVector.of(terms, [rng.choice((0.5, 1.1, 1.37)) for _ in terms])
        )

    texts = [sparse() for _ in range(60)] + [
        TextVectors(),
        TextVectors(sparse=SparseVector.of([], [])),
    ]
    cosines = TextCosines(texts)
    for a in [*texts, sparse(), TextVectors(dense=(1.0, 0.0), sparse=texts[0].sparse)]:
        expected = [text_cosine(a, b) for b in texts]
        got = cosines.of(a)
        assert got == expected  # == on floats: bit for bit
        assert all(type(x) is float for x in got)
    assert any(0 < x < 1 for x in cosines.of(texts[0]))
    dense = [TextVectors(dense=(1.0, 2.0)), TextVectors(dense=(2.0, 1.0), sparse=texts[0].sparse)]
    assert TextCosines(dense).of(dense[0]) == [text_cosine(dense[0], b) for b in dense]
