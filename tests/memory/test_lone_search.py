"""A lone agent's plain search (memory.lone_search) answers exactly as the batch path does.

Two groups get the same calls on the embedded Qdrant Edge backend; in one, searches alone
take `search_alone`, in the other the batch path (forced by patching `takes_alone`). Hits
field by field, read counts, counters and what reaches the engine must not tell them apart,
with hot hits, warm hits still in RAM columns and warm hits read back from the engine.
"""

from __future__ import annotations

import random

import pytest

from societas.memory import group_search, rank_kernel
from societas.memory.fast_requests import search_request
from societas.memory.lone_search import takes_alone

TIERS = {"hot_cap_per_agent": 3, "migrate_every_ticks": 1, "warm_max_age_days": None}
WORDS = "storm harbour bakery coffee bridge mayor river market school festival".split()


def _dump(hits) -> list[dict]:
    return [h.model_dump() for h in hits]


async def test_lone_searches_equal_the_batch_path(group_factory, monkeypatch):
    alone = group_factory("edge", sub="alone", tiers=TIERS)
    batch = group_factory("edge", sub="batch", tiers=TIERS)
    taken = []

    def spy(group, request):
        ok = takes_alone(group, request)
        taken.append(ok)
        return ok

    rng = random.Random(11)
    agents = {a: {} for a in range(1, 6)}
    await alone.add_agents(agents)
    await batch.add_agents(agents)
    compared = warm_hits = 0
    for tick in range(12):
        plan = [
            (a, " ".join(rng.sample(WORDS, 4)), rng.choice([None, 0.1, 0.9]), rng.random())
            for a in agents
        ]
        for group in (alone, batch):
            group.clock.set(tick // 6, (tick % 6) * 3600.0)
            for agent, text, importance, _ in plan:
                await group.agent(agent).stream.add("event", text, importance)
        for agent, _, _, draw in plan:
            query, top_k = " ".join(rng.sample(WORDS, 2)), rng.choice([1, 3, 5])
            if draw < 0.15:  # a place filter: the engine path on both, warm rows written
                for group in (alone, batch):
                    await group.agent(agent).stream.search(query, location="x")
                continue
            monkeypatch.setattr(group_search, "takes_alone", spy)
            got = await alone.agent(agent).stream.search(query, top_k=top_k)
            monkeypatch.setattr(group_search, "takes_alone", lambda group, request: False)
            expected = await batch.agent(agent).stream.search(query, top_k=top_k)
            assert _dump(got) == _dump(expected)
            compared += 1
            warm_hits += sum(h.tier == "warm" for h in got)
        for group in (alone, batch):
            await group.end_tick()
    assert compared > 40 and all(taken) and len(taken) == compared
    assert warm_hits > 10  # warm hits from RAM columns and from the engine both compared
    assert await alone.store.inner.count() == await batch.store.inner.count() > 0
    assert alone.counters == batch.counters
    assert alone.access.get_state() == batch.access.get_state()
    assert alone.hot.access_counts == batch.hot.access_counts
    assert alone.hot.last_accessed.tobytes() == batch.hot.last_accessed.tobytes()
    await alone.close()
    await batch.close()


async def test_only_plain_searches_with_the_kernels_take_the_lone_path(group_factory, monkeypatch):
    group = group_factory("edge")
    await group.add_agents({1: {}})
    plain = search_request(1, "storm harbour", None, 3)
    assert takes_alone(group, plain)
    for changes in (
        {"topic": "event"},
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
        request = search_request(1, "storm harbour", changes.pop("topic", None), 3, **changes)
        assert not takes_alone(group, request), request
    group.expiring[123] = 5.0  # a memory that expires: the batch path's alive mask
    assert not takes_alone(group, plain)
    group.expiring.clear()
    monkeypatch.setattr(rank_kernel, "KERNEL", None)  # no compiler: numpy on the batch path
    assert not takes_alone(group, plain)
    await group.close()


@pytest.mark.parametrize("agent_has_memories", [False, True])
async def test_a_lone_search_counts_what_it_scored(group_factory, agent_has_memories):
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
