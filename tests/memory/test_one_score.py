"""Every retrieval path ranks the same memories with the same scores: the RAM index, the
Qdrant Edge formula, qdrant-client's formula (local mode) and the cold Parquet tier."""

from __future__ import annotations

import pytest

from societas.memory import GroupMemory, RetrievalConfig
from societas.memory.model.records import SearchRequest
from societas.memory.retrieval.ranking import RankJob
from societas.memory.retrieval.scoring import Numbers, exact_match_score, score_of
from societas.memory.vectorstores.base import PointFilter, VectorQuery

FIXTURE = [  # (hours since start, importance, text)
    (0.0, 0.9, "the river flooded the lower town"),
    (3.0, 0.1, "a quiet morning with coffee and the river view"),
    (9.0, 0.5, "flood warning: the river is rising fast"),
    (14.0, 0.3, "helped a neighbour carry sandbags against the flood"),
    (20.0, 0.7, "the mayor spoke about flood defences and the budget"),
    (22.0, 0.2, "bought apples at the market before the rain"),
]
CONFIGS = [
    {},
    {"recency_weight": 2.0, "importance_weight": 0.5, "relevance_weight": 3.0},
    {"recency_half_life_hours": 6.0, "saturation_k": 0.7, "candidates": "relevant"},
]
NOW_DAY = 3  # every memory has left hot: the cold group moved them all to Parquet


async def _remember(group: GroupMemory, now_day: float = NOW_DAY) -> None:
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    for hours, importance, text in FIXTURE:
        group.clock.set(int(hours // 24), (hours % 24) * 3600)
        await stream.add("event", text, importance=importance)
    group.clock.set(int(now_day), (now_day % 1) * 86_400)
    await group.end_tick()


async def _engine(group: GroupMemory, query: str) -> list[tuple[int, float]]:
    """The vector store's own formula query over all of the agent's memories."""
    (vectors,) = await group.embedder.embed_queries([query])
    job = RankJob(SearchRequest(agent_id=1, query=query), vectors, PointFilter(agent_id=1), 1)
    await group.ranker.scale([job])  # the query's `exact` scale, as the ranker sets it
    (found,) = await group.store.query_batch(
        [
            VectorQuery(
                vectors=vectors,
                filter=PointFilter(agent_id=1),
                limit=len(FIXTURE),
                now=group.clock.abs_seconds,
                scoring=group.config.retrieval,
                normalization=group.normalization,
                with_payload=False,
                candidates=len(FIXTURE),
                relevance_scale=job.scale,
            )
        ]
    )
    return [(p.id, p.score) for p in sorted(found, key=lambda p: (-p.score, -p.id))]


async def _search(group: GroupMemory, query: str, tiers: tuple[str, ...]) -> list:
    request = SearchRequest(agent_id=1, query=query, top_k=len(FIXTURE), tiers=tiers)
    (hits,) = await group.search_many([request])
    return [(h.id, h.score) for h in hits]


@pytest.mark.parametrize("weights", CONFIGS)
@pytest.mark.parametrize(
    "query", ["river flood", "coffee market", "budget", "flood warning: the river is rising fast"]
)
async def test_every_retrieval_path_ranks_alike(group_factory, weights, query):
    retrieval = RetrievalConfig(**weights).model_dump()
    ram = group_factory("edge", sub="ram", retrieval=retrieval)
    edge = group_factory("edge", sub="edge", retrieval=retrieval)
    local = group_factory("qdrant", sub="qdrant", retrieval=retrieval)
    cold = group_factory(
        "edge",
        sub="cold",
        retrieval=retrieval,
        tiers={"hot_window_hours": 1.0, "warm_max_age_days": 1.0, "migrate_every_ticks": 1},
    )
    for group in (ram, edge, local, cold):
        await _remember(group)
    assert cold.cold.count() == len(FIXTURE)
    paths = {
        "ram": await _search(ram, query, ("hot", "warm")),
        "edge": await _engine(edge, query),
        "qdrant": await _engine(local, query),
        "cold": await _search(cold, query, ("cold",)),
    }
    assert ram.counters["vector_queries"] == 0  # ranked from RAM, the engine never asked
    expected = paths["ram"]
    assert expected
    for name, got in paths.items():
        assert [i for i, _ in got] == [i for i, _ in expected], name
        for (_, score), (_, want) in zip(got, expected, strict=True):
            assert score == pytest.approx(want, rel=1e-4, abs=1e-5), name
    for group in (ram, edge, local, cold):
        await group.close()


@pytest.mark.parametrize("weights", CONFIGS)
@pytest.mark.parametrize("query", ["river flood", "coffee market", "flood warning: the river"])
async def test_cold_memories_compete_by_the_one_score(group_factory, weights, query):
    """Over every tier, a cold memory scores as the one definition scores it with the
    search's term weights and scale (its hot and warm memories' IDF): by hand for each."""
    tiers = {"hot_window_hours": 1.0, "warm_max_age_days": 0.5, "migrate_every_ticks": 1}
    group = group_factory("edge", retrieval=RetrievalConfig(**weights).model_dump(), tiers=tiers)
    await _remember(group, now_day=1.0)  # the first three are over 12 hours old: cold
    assert group.cold.count() == 3
    (q,) = await group.embedder.embed_queries([query])
    assert q.sparse is not None and group.sparse_index is not None
    w = dict(group.sparse_index.query_weights(q.sparse))
    cold = group.cold.vectors(group.cold.all_ids(), 1)
    expected = []
    everything = await group.agent(1).stream.search("the and of", top_k=10)
    assert len(everything) == len(FIXTURE)
    cfg, now = group.config.retrieval, group.clock.abs_seconds
    scale = exact_match_score(w.values(), len(q.sparse.indices))
    for m in everything:
        vec = cold[m.id].sparse if m.id in cold else group.sparse_index.vector(1, m.id)
        raw = sum(w.get(t, 0.0) * v for t, v in zip(vec.indices, vec.values, strict=True))
        numbers = Numbers(time=m.time, importance=m.importance, raw_relevance=raw)
        score = float(score_of(numbers, cfg, now, group.normalization, True, None, None, scale))
        if raw > 0 or cfg.candidates == "all":
            expected.append((m.id, score))
    expected.sort(key=lambda p: (-p[1], -p[0]))
    got = await _search(group, query, ("hot", "warm", "cold"))
    assert cfg.candidates == "relevant" or set(cold) & {i for i, _ in got}
    assert [i for i, _ in got] == [i for i, _ in expected]
    for (_, score), (_, want) in zip(got, expected, strict=True):
        assert score == pytest.approx(want, rel=1e-4, abs=1e-5)
    await group.close()
