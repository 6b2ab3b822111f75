"""Cold memories of agents with FinMem layers: the layer filter holds in the cold tier, and a
search ranked from the cold index scores every row as reading the agent's rows whole does."""

from __future__ import annotations

import numpy as np
import pytest

from societas.memory import GroupMemory
from societas.memory.retrieval.scoring import Numbers, exact_match_score, score_of

TIERS = {"hot_window_hours": 1.0, "warm_max_age_days": 1.0, "migrate_every_ticks": 1}
LAYERS = ("short", "mid", "long")
WORDS = ["river", "flood", "market", "apples", "bank", "rain", "mayor", "coffee", "bridge"]
WHOLE_DAY = (0.0, 86_400.0)  # a time-of-day filter that keeps every row: the rows read whole


async def _remember(group: GroupMemory, day: int, count: int) -> list[int]:
    """`count` memories on `day`, of two topics and every layer, with layer clocks apart."""
    stream, ids = group.agent(1).stream, []
    for i in range(count):
        group.clock.set(day, 600.0 * i)
        text = f"{WORDS[i % 9]} {WORDS[(3 * i + 1) % 9]} note {i}"
        expires = {"expires_at": (day + 2.25) * 86_400.0} if i == 5 else {}  # cold, then gone
        topic = "event" if i % 3 else "chat"
        ids.append(await stream.add(topic, text, importance=(i % 7) / 7, **expires))
    await group.sync_writes()
    for i, memory_id in enumerate(ids):
        layer, since = LAYERS[i % 3], day * 86_400.0 + 3600.0 * (i % 5)
        if layer != "short" or i % 5:
            await group.store.set_payloads([([memory_id], {"layer": layer, "layer_since": since})])
            group.hot.set_layer(memory_id, layer, (i % 7) / 7, since)
    return ids


async def _cold(group: GroupMemory, query: str, **filters) -> list[tuple[int, float, str]]:
    hits = await group.agent(1).stream.search(query, top_k=6, tiers=("cold",), **filters)
    assert all(h.tier == "cold" for h in hits)
    return [(h.id, h.score, h.layer) for h in hits]


@pytest.mark.parametrize("retrieval", [{}, {"candidates": "relevant", "relevance_weight": 3.0}])
async def test_the_cold_index_scores_layered_rows_as_the_rows_read_whole(group_factory, retrieval):
    group = group_factory("edge", profile="finmem", retrieval=retrieval, tiers=TIERS)
    await group.add_agents({1: {}})
    first = await _remember(group, 0, 24)
    group.clock.set(1, 43_200.0)
    await group.end_tick()
    assert group.cold.count() == len(first)
    await _cold(group, "river")  # the cold index is built here; the next rows are added to it
    await _remember(group, 2, 24)
    group.clock.set(4, 0.0)
    await group.end_tick()
    assert group.cold.count() == 48
    group.clock.set(4, 43_200.0)  # both memories 5 have expired
    layered = 0
    for query in ("river flood", "market apples bank", "coffee", "the of"):
        for filters in (
            {},
            {"topic": "event"},
            {"day_range": (2, 2)},
            {"layers": ("mid",)},
            {"layers": ("short", "long")},
        ):
            read = group.cold.rows_read
            indexed = await _cold(group, query, **filters)
            assert group.cold.rows_read - read == len(indexed)  # only the hits were read
            whole = await _cold(group, query, time_range=WHOLE_DAY, **filters)
            assert [i for i, _, _ in indexed] == [i for i, _, _ in whole], (query, filters)
            for (_, got, _), (_, want, _) in zip(indexed, whole, strict=True):
                assert got == pytest.approx(want, rel=1e-9), (query, filters)
            layered += sum(layer != "short" for _, _, layer in indexed)
            if "layers" in filters:
                assert {layer for _, _, layer in indexed} <= set(filters["layers"])
    assert layered > 20  # mid and long rows were compared, by their own layer's decay
    await group.close()


async def test_an_expired_cold_memory_is_left_out_of_cold_hits(group_factory):
    group = group_factory("edge", profile="finmem", tiers=TIERS)
    await group.add_agents({1: {}})
    ids = await _remember(group, 0, 12)
    group.clock.set(1, 43_200.0)
    await group.end_tick()
    assert group.cold.count() == 12
    group.clock.set(3, 0.0)
    expired = ids[5]  # at 06:00 on day 2
    hits = await group.agent(1).stream.search("note", top_k=12, tiers=("cold",))
    assert len(hits) == 11 and expired not in {h.id for h in hits}
    await group.close()


@pytest.mark.parametrize("profile", ["finmem", "default"])
async def test_the_layer_filter_holds_in_the_cold_tier(group_factory, profile):
    group = group_factory("edge", profile=profile, tiers=TIERS)
    await group.add_agents({1: {}})
    ids = await _remember(group, 0, 9)
    group.clock.set(1, 43_200.0)
    await group.end_tick()
    assert group.cold.count() == len(ids)
    group.clock.set(3, 0.0)
    stream = group.agent(1).stream
    for wanted in (("long",), ("short", "mid")):
        for extra in ({}, {"time_range": WHOLE_DAY}):
            hits = await stream.search("note", top_k=9, layers=wanted, **extra)
            held = {ids[i] for i in range(9) if LAYERS[i % 3] in wanted and i != 5}  # 5 expired
            assert {h.id for h in hits} == held, (wanted, extra)
    await group.close()


async def test_finmem_takes_the_top_of_every_layer_from_the_cold_tier_too(group_factory):
    """FinMem's retrieval keeps each layer's top k; a cold row competes only in its own layer."""
    group = group_factory("edge", profile="finmem", tiers=TIERS)
    await group.add_agents({1: {}})
    ids = await _remember(group, 0, 9)  # rows 0, 3, 6 short; 1, 4, 7 mid; 2, 5, 8 long
    group.clock.set(1, 43_200.0)
    await group.end_tick()
    group.clock.set(1, 50_000.0)  # memory 5 has not expired yet
    hits = await group.agent(1).stream.search("note", top_k=1)
    assert len(hits) == 3 and all(h.tier == "cold" for h in hits)
    assert sorted(h.layer for h in hits) == ["long", "mid", "short"]
    assert {h.id for h in hits} <= set(ids)
    await group.close()


async def test_a_finmem_agents_cold_memories_score_as_its_hot_and_warm_ones(group_factory):
    """Over every tier, each hit scores by the one definition with the search's term weights
    and scale (its hot and warm memories' IDF, as the engine counts it) and its own layer."""
    group = group_factory("edge", profile="finmem", tiers=TIERS)
    await group.add_agents({1: {}})
    await _remember(group, 0, 9)
    group.clock.set(1, 43_200.0)
    await group.end_tick()
    await _remember(group, 2, 9)  # hot and warm
    group.clock.set(2, 80_000.0)
    query = "river flood market"
    hits = await group.agent(1).stream.search(query, top_k=9)
    assert {h.tier for h in hits} >= {"cold", "hot"}
    (q,) = await group.embedder.embed_queries([query])
    assert q.sparse is not None and group.sparse_index is not None
    w = dict(group.sparse_index.query_weights(q.sparse))
    scale = exact_match_score(w.values(), len(q.sparse.indices))
    cold = group.cold.vectors(group.cold.all_ids(), 1)
    cfg, now, profiles = group.config.retrieval, group.clock.abs_seconds, group.profiles
    layers = (profiles.layer_decay(1), profiles.layer_recency(1))
    for h in hits:
        vec = cold[h.id].sparse if h.id in cold else group.sparse_index.vector(1, h.id)
        raw = sum(w.get(t, 0.0) * v for t, v in zip(vec.indices, vec.values, strict=True))
        n = Numbers(h.time, h.importance, raw, h.layer_since, np.array([h.layer]))
        want = float(score_of(n, cfg, now, group.normalization, True, *layers, scale)[0])
        assert h.score == pytest.approx(want, rel=1e-6), (h.tier, h.layer)
    await group.close()
