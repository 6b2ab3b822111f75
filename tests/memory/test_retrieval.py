"""Generative Agents retrieval: every hot and warm memory of the agent can win, exactly.

The ranker scores hot memories from RAM and bounds the rest (memory.retrieval.ranking); these tests
check it against the engine's formula query over all of an agent's memories, and that an
old, important, relevant memory buried under many more relevant recent ones still wins.
"""

from __future__ import annotations

import random

import pytest

from societas.memory import AddRequest, SearchRequest

WORDS = (
    "storm flood river market apples school bridge shelter radio neighbour coffee election "
    "bus train fire doctor garden festival rumour bakery harbour church library hospital"
).split()


async def test_old_important_memory_under_many_relevant_recent_ones_is_found(
    group_factory, backend
):
    group = group_factory(backend, retrieval={"relevance_weight": 1.0})  # importance decides
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    group.clock.set(0, 8 * 3600)
    old = await stream.add("event", "the dam upstream cracked", importance=1.0)
    group.clock.set(2, 8 * 3600)
    for i in range(120):  # more relevant to the query than `old`, but trivial
        await stream.add("chat", f"chatted about the dam and the river walk {i}", importance=0.05)
    for i in range(300):  # recent and irrelevant
        await stream.add("activity", f"walked to the bakery for bread number {i}", importance=0.1)
    await group.end_tick()  # hot keeps 200 per agent: `old` is in warm only now
    assert old not in group.hot
    before = dict(group.counters)
    hits = await stream.search("dam river", top_k=3)
    assert hits[0].id == old
    # the score covered all 421 memories, not a fixed handful
    covered = group.counters["retrieval_candidates"] - before["retrieval_candidates"]
    assert covered == 421


async def test_recency_decays_per_simulated_hour(group_factory):
    group = group_factory(
        "edge",
        retrieval={"importance_weight": 0, "relevance_weight": 0, "recency_decay_per_hour": 0.9},
    )
    await group.add_agents({1: {}})
    group.clock.set(0, 0)
    await group.agent(1).stream.add("event", "breakfast with the neighbour")
    group.clock.set(0, 10 * 3600)
    (hit,) = await group.agent(1).stream.search("breakfast", top_k=1)
    assert hit.score == pytest.approx(0.9**10, rel=1e-6)


def _workload(rng: random.Random, agents: int, ticks: int) -> list[list[AddRequest]]:
    out = []
    for _ in range(ticks):
        out.append(
            [
                AddRequest(
                    agent_id=a,
                    topic=rng.choice(["chat", "event"]),
                    description=" ".join(rng.sample(WORDS, 4)),
                    importance=round(rng.random(), 2),
                    location=rng.choice([None, "market", "harbour"]),
                )
                for a in range(agents)
                for _ in range(rng.randint(0, 3))
            ]
        )
    return out


@pytest.mark.parametrize(
    "retrieval",
    [
        {},
        {"candidate_limit": 3},  # hit lists cut short: bounds and engine rescoring decide
        {"candidates": "relevant", "candidate_limit": 5},
        {"recency_weight": 3.0, "importance_weight": 0.2, "recency_decay_per_hour": 0.8},
        "forgetting",
    ],
    ids=["default", "short-lists", "relevant-only", "recency-heavy", "forgetting"],
)
async def test_ranker_equals_the_engine_formula_over_all_memories(group_factory, retrieval):
    """Hot from RAM + bounds for warm must give what the exhaustive engine query gives."""
    rng = random.Random(7)
    tiers = {"hot_window_hours": 6.0, "hot_cap_per_agent": 12}
    policies = {}
    if retrieval == "forgetting":  # importance decays per layer; searches boost what they find
        retrieval, policies = {}, {"forgetting": {"enabled": True, "run_every_ticks": 8}}
    group = group_factory("edge", retrieval=retrieval, tiers=tiers, policies=policies)
    agents = 12
    await group.add_agents({a: {} for a in range(agents)})
    for tick, adds in enumerate(_workload(rng, agents, 40)):
        group.clock.set(tick // 48, (tick % 48) * 1800.0)
        await group.add_many(adds)
        await group.end_tick()
    requests = [
        SearchRequest(agent_id=a, query=" ".join(rng.sample(WORDS, 2)), top_k=k, **flt)
        for a in range(agents)
        for k, flt in (
            (3, {}),
            (8, {}),
            (4, {"topic": "chat"}),
            (5, {"location": "market"}),
            (3, {"time_range": (0.0, 10 * 3600.0)}),
            (3, {"tiers": ("hot",)}),
        )
    ]
    if policies:  # searching changes importance: rank twin groups instead of one twice
        twin = group_factory(
            "edge", sub="twin", retrieval=retrieval, tiers=tiers, policies=policies
        )
        await twin.add_agents({a: {} for a in range(agents)})
        rng = random.Random(7)
        for tick, adds in enumerate(_workload(rng, agents, 40)):
            twin.clock.set(tick // 48, (tick % 48) * 1800.0)
            await twin.add_many(adds)
            await twin.end_tick()
    else:
        twin = group
    fast = await group.search_many(requests)
    assert group.counters["retrieval_exhaustive"] < len(requests)  # the fast path ran
    twin.ranker.fast_path = lambda: False  # every search: the engine over all memories
    exact = await twin.search_many(requests)
    for request, got, want in zip(requests, fast, exact, strict=True):
        assert [h.id for h in got] == [h.id for h in want], request
        assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-5)


@pytest.mark.parametrize("value", [0.0, 1.0, 1.5, -0.1])
def test_bad_decay_is_rejected_naming_the_field(value):
    from pydantic import ValidationError

    from societas.memory import GroupMemoryConfig

    with pytest.raises(ValidationError, match="recency_decay_per_hour"):
        GroupMemoryConfig(retrieval={"recency_decay_per_hour": value})


async def test_resumed_group_ranks_like_the_one_it_continues(group_factory, tmp_path):
    """The ranker's bounds (newest evicted, largest importance) survive a checkpoint."""
    from societas.memory import GroupMemory

    rng = random.Random(3)
    group = group_factory("edge", tiers={"hot_window_hours": 4.0, "hot_cap_per_agent": 10})
    await group.add_agents({a: {} for a in range(5)})
    for tick, adds in enumerate(_workload(rng, 5, 30)):
        group.clock.set(0, tick * 1800.0)
        await group.add_many(adds)
        await group.end_tick()
    await group.checkpoint(tmp_path / "ckpt")
    restored = await GroupMemory.restore(tmp_path / "ckpt", tmp_path / "resumed")
    assert restored.max_importance == group.max_importance
    assert restored.hot.newest_evicted == group.hot.newest_evicted
    requests = [SearchRequest(agent_id=a, query="storm river market", top_k=4) for a in range(5)]
    before = dict(restored.counters)
    ours, theirs = await group.search_many(requests), await restored.search_many(requests)
    assert [[(h.id, h.score) for h in r] for r in ours] == [
        [(h.id, h.score) for h in r] for r in theirs
    ]
    assert restored.counters["retrieval_scored"] > before["retrieval_scored"]
    await restored.close()
