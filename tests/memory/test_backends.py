"""Both backends agree on the same data; an Edge shard reopened from disk answers the same."""

from __future__ import annotations

import random

from societas.memory.vectorstores import PointFilter, VectorQuery
from societas.memory.vectorstores.edge import EdgeVectorStore

WORDS = [
    "storm",
    "flood",
    "river",
    "market",
    "apples",
    "school",
    "bridge",
    "shelter",
    "radio",
    "neighbour",
    "coffee",
    "election",
    "tax",
    "bus",
    "train",
    "fire",
    "doctor",
    "garden",
    "festival",
    "rumour",
]


async def fill(group, seed=7, agents=4, per_agent=25):
    rng = random.Random(seed)
    await group.add_agents({a: {} for a in range(agents)})
    for i in range(per_agent):
        group.clock.set(i // 6, (i % 6) * 4 * 3600.0)
        for a in range(agents):
            text = " ".join(rng.sample(WORDS, 4))
            await group.agent(a).stream.add(
                rng.choice(["event", "social"]),
                text,
                importance=round(rng.random(), 3),
                location=rng.choice(["home", "park"]),
            )


QUERIES = ["storm flood", "market apples", "train bus doctor", "festival rumour garden"]


async def test_edge_and_qdrant_return_the_same_top_hits(group_factory):
    edge, qdrant = group_factory("edge", sub="e"), group_factory("qdrant", sub="q")
    await fill(edge)
    await fill(qdrant)
    for agent in range(4):
        for query in QUERIES:
            for kwargs in ({}, {"topic": "event"}, {"day_range": (1, 3), "location": "park"}):
                a = await edge.agent(agent).stream.search(query, top_k=5, **kwargs)
                b = await qdrant.agent(agent).stream.search(query, top_k=5, **kwargs)
                assert [h.text for h in a] == [h.text for h in b], (agent, query, kwargs)
                for x, y in zip(a, b, strict=True):
                    assert abs(x.score - y.score) < 1e-4


async def test_edge_shard_reopened_from_disk_answers_the_same(group_factory, bm25_embedder):
    group = group_factory("edge")
    await fill(group)
    await group.sync_writes()  # queued adds written before the store is used directly
    now = group.clock.abs_seconds
    vectors = await bm25_embedder.embed_queries(QUERIES)
    queries = [
        VectorQuery(
            vectors=v,
            filter=PointFilter(a),
            limit=5,
            now=now,
            scoring=group.config.retrieval,
            normalization="saturate",
        )
        for v in vectors
        for a in range(4)
    ]
    before = await group.store.query_batch(queries)
    path = group.store.path
    count = await group.store.count()
    await group.close()

    reopened = EdgeVectorStore(path, dense_size=None, sparse=True)
    assert await reopened.count() == count
    after = await reopened.query_batch(queries)
    assert [[(p.id, round(p.score, 5)) for p in hits] for hits in after] == [
        [(p.id, round(p.score, 5)) for p in hits] for hits in before
    ]
    assert any(hits for hits in after)
    await reopened.close()


async def test_a_groups_edge_shard_indexes_only_agent_and_time(group_factory):
    """Each payload index costs RAM and write time per point; a group's shard is searched
    per agent, so type, tags and expiry are checked point by point (their filters are
    tested on both backends in test_records_meta) and only agent and time are indexed."""
    group = group_factory("edge", tiers={"hot_cap_per_agent": 1, "warm_in_ram": False})
    await fill(group, agents=2, per_agent=4)
    await group.end_tick()  # memories beyond the hot cap reach the engine
    engine = group.store.inner
    assert await engine.count() > 0
    assert set(engine._shard.info().payload_schema) == {"agent_id", "time"}
