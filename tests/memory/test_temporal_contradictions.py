"""Temporal links of one episode and the contradiction check, on a real group memory."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from societas.memory import GroupMemoryConfig
from societas.memory.policies.contradictions import rule_contradicts

RELEVANCE_ONLY = {"candidates": "relevant", "recency_weight": 0, "importance_weight": 0}


def _edges(group, memory_id):
    return {n: (t, s) for n, t, s in group.associations.neighbours(memory_id)}


async def test_one_episode_is_linked_in_order_with_decaying_strength(group_factory, backend):
    temporal = {"enabled": True, "strength": 0.8, "span": 2, "decay": 0.5}
    group = group_factory(backend, retrieval=RELEVANCE_ONLY, policies={"temporal": temporal})
    await group.add_agents({1: {}, 2: {}})
    s = group.agent(1).stream
    ids = [
        await s.add("dialogue", text)
        for text in (
            "Bob said the harbour froze over",
            "Bob said the ferry is cancelled",
            "I talked with Bob about the frozen harbour",
        )
    ]
    other = await s.add("dialogue", "Carol said the market moved indoors")
    episodes = group.policy_state.episodes
    for memory_id in ids:
        episodes.note(1, "conv-1", memory_id)
    episodes.note(1, "conv-2", other)  # another conversation: its own chain
    assert _edges(group, ids[1]) == {ids[0]: ("temporal", 0.8), ids[2]: ("temporal", 0.8)}
    assert _edges(group, ids[2]) == {ids[1]: ("temporal", 0.8), ids[0]: ("temporal", 0.4)}
    assert _edges(group, other) == {}
    assert episodes.linked == 3
    # spreading activation uses the temporal weight (0.6) × the strength
    hits = {h.id: h.score for h in await s.search("ferry cancelled", top_k=4, expand=True)}
    top = hits[ids[1]]
    assert hits[ids[0]] == pytest.approx(top * 0.5 * 0.6 * 0.8)
    assert hits[ids[2]] == pytest.approx(top * 0.5 * 0.6 * 0.8)
    assert other not in hits
    # another agent's episode with the same key does not join agent 1's chain
    theirs = await group.agent(2).stream.add("dialogue", "Ann said the harbour froze")
    episodes.note(2, "conv-1", theirs)
    assert _edges(group, theirs) == {}
    await group.close()


async def test_temporal_off_links_nothing_and_sequences_are_checked(group_factory):
    group = group_factory()
    await group.add_agents({1: {}, 2: {}})
    a = await group.agent(1).stream.add("dialogue", "first line")
    b = await group.agent(1).stream.add("dialogue", "second line")
    assert group.policy_state.episodes.note(1, "c", a) == []
    assert group.policy_state.episodes.note(1, "c", b) == []
    assert len(group.associations) == 0
    on = group_factory(sub="on", policies={"temporal": {"enabled": True}})
    await on.add_agents({1: {}, 2: {}})
    x = await on.agent(1).stream.add("dialogue", "first line")
    with pytest.raises(ValueError, match="episode"):
        on.policy_state.episodes.note(1, "", x)
    with pytest.raises(ValidationError, match="span"):
        GroupMemoryConfig(policies={"temporal": {"span": 0}})
    await group.close()
    await on.close()


def test_rule_judge_needs_shared_content_and_a_negation_or_antonym():
    assert rule_contradicts("The bakery is open today", "The bakery is not open today")
    assert rule_contradicts("The bakery is open today", "The bakery is closed today")
    assert rule_contradicts("I trust the mayor", "I don't trust the mayor")
    assert not rule_contradicts("The bakery is open today", "The bakery is open today")
    assert not rule_contradicts("The bakery is open", "The bakery is not closed")
    assert not rule_contradicts("The bakery is open today", "The river is not frozen")


async def test_contradiction_check_links_judged_pairs_in_batches(group_factory, backend):
    policy = {"enabled": True, "batch_size": 2, "candidates": 2, "min_similarity": 0.1}
    group = group_factory(backend, policies={"contradiction": policy})
    await group.add_agents({1: {}, 2: {}})
    s = group.agent(1).stream
    open_ = await s.add("event", "the bakery on main street is open today")
    await s.add("event", "the bridge was repaired last week")
    await group.end_tick()  # first pass: nothing to contradict yet
    calls: list[list[tuple[str, str]]] = []

    async def judge(pairs):
        calls.append(pairs)
        return [rule_contradicts(a, b) for a, b in pairs]

    group.contradiction_judge = judge
    closed = await s.add("event", "the bakery on main street is not open today")
    repaired = await s.add("event", "the bridge was repaired last week by the town")
    theirs = await group.agent(2).stream.add("event", "the bakery on main street is open today")
    await group.end_tick()
    pairs = [p for batch in calls for p in batch]
    assert all(len(batch) <= 2 for batch in calls)
    assert len(calls) == -(-len(pairs) // 2)  # one judge call per batch of pairs
    assert (
        "the bakery on main street is not open today",
        "the bakery on main street is open today",
    ) in pairs
    assert _edges(group, closed) == {open_: ("contradictory", 1.0)}
    assert _edges(group, repaired) == {}
    assert _edges(group, theirs) == {}  # another agent's memories are never compared
    counters = group.policy_state.counters
    assert counters["contradictions"] == 1 and counters["contradiction_calls"] == len(calls)
    await group.end_tick()  # nothing new: no more judge calls
    assert len(calls) == counters["contradiction_calls"]
    await group.close()


async def test_contradiction_judge_with_a_wrong_answer_count_is_an_error(group_factory):
    group = group_factory(policies={"contradiction": {"enabled": True, "min_similarity": 0.0}})
    await group.add_agents({1: {}})
    await group.agent(1).stream.add("event", "the bakery is open")
    await group.agent(1).stream.add("event", "the bakery is closed")
    group.contradiction_judge = lambda pairs: []
    with pytest.raises(ValueError, match="verdicts"):
        await group.end_tick()
    await group.close()


async def test_contradiction_check_off_calls_no_judge(group_factory):
    group = group_factory()
    await group.add_agents({1: {}})
    group.contradiction_judge = lambda pairs: pytest.fail("judge called while disabled")
    await group.agent(1).stream.add("event", "the bakery is open")
    await group.agent(1).stream.add("event", "the bakery is not open")
    await group.end_tick()
    assert len(group.associations) == 0
    await group.close()
