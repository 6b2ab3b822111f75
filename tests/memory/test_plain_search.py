"""Plain searches (memory.plain_search) answer exactly as the general path does.

Two groups get the same calls on the embedded Qdrant Edge backend; in one, plain searches
take `search_plain`, in the other the general path (forced by patching `takes_plain`). Hits
field by field, read counts, counters and what reaches the engine must not tell them apart,
with searches alone and gathered, with and without a topic, and hot hits, warm hits still in
RAM columns and warm hits read back from the engine.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from societas.memory import group_search, rank_kernel
from societas.memory.fast_requests import search_request
from societas.memory.plain_search import takes_plain

TIERS = {"hot_cap_per_agent": 3, "migrate_every_ticks": 1, "warm_max_age_days": None}
WORDS = "storm harbour bakery coffee bridge mayor river market school festival".split()
TOPICS = ("event", "social", "economy")


def _dump(hits) -> list[dict]:
    return [h.model_dump() for h in hits]


@pytest.mark.parametrize("gathered", [False, True])
async def test_plain_searches_equal_the_general_path(group_factory, monkeypatch, gathered):
    plain = group_factory("edge", sub="plain", tiers=TIERS)
    general = group_factory("edge", sub="general", tiers=TIERS)
    taken = []

    def spy(group, requests):
        ok = takes_plain(group, requests)
        taken.append(ok)
        return ok

    async def searches(group, asked):
        calls = [group.agent(a).stream.search(q, topic=t, top_k=k) for a, q, t, k in asked]
        if gathered:
            return await asyncio.gather(*calls)
        return [await call for call in calls]

    rng = random.Random(11)
    agents = {a: {} for a in range(1, 7)}
    await plain.add_agents(agents)
    await general.add_agents(agents)
    compared = warm_hits = 0
    for tick in range(12):
        plan = [
            (a, " ".join(rng.sample(WORDS, 4)), rng.choice([None, 0.1, 0.9]), rng.choice(TOPICS))
            for a in agents
        ]
        for group in (plain, general):
            group.clock.set(tick // 6, (tick % 6) * 3600.0)
            for agent, text, importance, topic in plan:
                await group.agent(agent).stream.add(topic, text, importance)
        if rng.random() < 0.3:  # a place filter: the engine path on both, warm rows written
            for group in (plain, general):
                await group.agent(1).stream.search("storm", location="x")
        asked = [
            (a, " ".join(rng.sample(WORDS, 2)), rng.choice([None, *TOPICS]), rng.randint(1, 5))
            for a in agents
        ]
        monkeypatch.setattr(group_search, "takes_plain", spy)
        got = await searches(plain, asked)
        monkeypatch.setattr(group_search, "takes_plain", lambda group, requests: False)
        expected = await searches(general, asked)
        assert [_dump(h) for h in got] == [_dump(h) for h in expected]
        compared += len(asked)
        warm_hits += sum(h.tier == "warm" for hits in got for h in hits)
        for group in (plain, general):
            await group.end_tick()
    assert taken and all(taken)
    assert len(taken) == (12 if gathered else compared)  # a batch a tick, or one a search
    assert warm_hits > 10  # warm hits from RAM columns and from the engine both compared
    assert await plain.store.inner.count() == await general.store.inner.count() > 0
    assert plain.counters == general.counters
    assert plain.access.get_state() == general.access.get_state()
    assert plain.hot.access_counts == general.hot.access_counts
    assert plain.hot.last_accessed.tobytes() == general.hot.last_accessed.tobytes()
    await plain.close()
    await general.close()


async def test_only_plain_searches_with_the_kernels_take_the_plain_path(group_factory, monkeypatch):
    group = group_factory("edge")
    await group.add_agents({1: {}})
    plain = search_request(1, "storm harbour", None, 3)
    assert takes_plain(group, [plain])
    assert takes_plain(group, [search_request(1, "storm", "event", 5), plain])  # a topic
    for changes in (
        {"day_range": (0, 1)},
        {"time_range": (0.0, 3600.0)},
        {"location": "harbour"},
        {"tiers": ("hot", "warm", "cold")},
        {"tiers": ("hot",)},
        {"expand": True},
        {"types": ("episodic",)},
        {"tags": ("a",)},
        {"layers": ("short",)},
    ):
        request = search_request(1, "storm harbour", None, 3, **changes)
        assert not takes_plain(group, [request]), request
        assert not takes_plain(group, [plain, request])  # one in a batch: all go general
    group.expiring[123] = 5.0  # a memory that expires: the batch path's alive mask
    assert not takes_plain(group, [plain])
    group.expiring.clear()
    monkeypatch.setattr(rank_kernel, "KERNEL", None)  # no compiler: numpy on the batch path
    assert not takes_plain(group, [plain])
    await group.close()


@pytest.mark.parametrize("agent_has_memories", [False, True])
async def test_a_plain_search_counts_what_it_scored(group_factory, agent_has_memories):
    group = group_factory("edge")
    await group.add_agents({1: {}, 2: {}})
    await group.agent(2).stream.add("event", "the storm flooded the harbour")
    if agent_has_memories:
        await group.agent(1).stream.add("event", "coffee at the bakery")
        await group.agent(1).stream.add("event", "the storm at the harbour")
    hits = await group.agent(1).stream.search("storm harbour")
    assert [h.text for h in hits] == (
        ["the storm at the harbour", "coffee at the bakery"] if agent_has_memories else []
    )
    assert group.counters["searches"] == 1
    assert group.counters["retrieval_candidates"] == (2 if agent_has_memories else 0)
    await group.close()
