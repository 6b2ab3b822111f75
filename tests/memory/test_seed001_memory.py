"""Seed 001 in the memory: structured content per type, content richness, the seed's importance
formula (hand computations), consolidation's 7-day look-back, and memories that expire."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from societas.memory.model.content import richness
from societas.memory.model.records import AddRequest
from societas.memory.policies.configs import ImportanceRecompute
from societas.memory.policies.forgetting import ConsolidationPolicy
from societas.memory.policies.importance import importance_pass, recomputed

DAY = 86_400.0
FULL_TASK = {
    "task_id": "t1",
    "task_type": "work",
    "status": "in_progress",
    "progress": 0.5,
    "steps_completed": ["open the shop"],
    "next_steps": ["serve customers"],
    "context_variables": {"place": "bakery"},
}


def test_content_richness_by_hand():
    # distinct words of 3+ letters: ann, told, the, bakery, opens, noon -> 6 of 20
    assert richness("Ann told me the bakery opens at noon", None, "episodic", 20) == 0.3
    assert richness("ok ok", None, "episodic", 20) == 0.0
    # structured: 3 of the conversation schema's 7 fields are filled
    content = {"conversation_id": "c1", "summary": "We met.", "key_points": ["rain"], "partner": 0}
    content.pop("partner")
    assert richness("We met.", content, "conversation", 20) == pytest.approx(3 / 7)
    assert richness("Doing now: work", FULL_TASK, "task", 20) == 1.0


def test_seed_importance_formula_by_hand():
    p = ImportanceRecompute(enabled=True, formula="seed")
    assert (p.base_weight, p.age_weight, p.access_weight, p.feedback_weight) == (0.2,) * 4
    assert (p.association_weight, p.content_weight, p.access_saturation) == (0.1, 0.1, 10.0)
    # 0.2·0.6 + 0.2·e^-1 + 0.2·min(4/10, 1) + 0.2·(1+tanh 0)/2 + 0.1·(1-e^-1) + 0.1·0.3
    hand = 0.12 + 0.2 * math.exp(-1) + 0.08 + 0.1 + 0.1 * (1 - math.exp(-1)) + 0.03
    assert recomputed(p, 0.6, 7 * DAY, 4, None, 0.0, 3.0, 0.3) == round(hand, 2) == 0.47
    assert recomputed(p, 0.6, 7 * DAY, 40, None, 0.0, 3.0, 0.3) == round(hand + 0.12, 2)  # cap
    # a weight the config sets keeps its value; the others take the seed's
    mine = ImportanceRecompute(enabled=True, formula="seed", content_weight=0.3)
    assert (mine.content_weight, mine.age_weight) == (0.3, 0.2)


def test_additive_formula_gains_the_content_term():
    p = ImportanceRecompute(enabled=True, content_weight=0.1)
    assert recomputed(p, 0.5, 0.0, 0, None, 0.0, 0.0, 0.3) == 0.53
    assert recomputed(ImportanceRecompute(enabled=True), 0.5, 0.0, 0, None, 0.0, 0.0, 1.0) == 0.5


async def test_the_pass_ranks_richer_content_higher(group_factory):
    group = group_factory(policies={"importance": {"enabled": True, "formula": "seed"}})
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    rich = await s.add("task", "Doing now: work", 0.5, type="task", metadata={"content": FULL_TASK})
    plain = await s.add("task", "ok", 0.5)
    await group.sync_writes()
    assert await importance_pass(group) == {"importance_recomputed": 2, "importance_changed": 1}
    got = {r.id: r.importance for r in await group.get_by_ids([rich, plain])}
    # same rating, age 0, no reads, feedback or links: only richness (1 vs 0) differs
    base = 0.2 * 0.5 + 0.2 * 1.0 + 0.0 + 0.2 * 0.5
    assert got == {rich: round(base + 0.1, 2), plain: round(base, 2)}
    await group.close()


def test_structured_content_is_checked_per_type():
    ok = AddRequest(
        agent_id=1, topic="t", description="x", type="task", metadata={"content": FULL_TASK}
    )
    assert ok.metadata == {"content": FULL_TASK}
    with pytest.raises(ValidationError, match=r"metadata\.content\.progress of a task memory"):
        AddRequest(
            agent_id=1,
            topic="t",
            description="x",
            type="task",
            metadata={"content": {"task_id": "a", "progress": 2}},
        )
    with pytest.raises(ValidationError, match="type 'episodic' has no structured content"):
        AddRequest(agent_id=1, topic="t", description="x", metadata={"content": {"a": 1}})
    with pytest.raises(ValidationError, match="preference_category"):
        AddRequest(
            agent_id=1, topic="t", description="x", type="preference", metadata={"content": {}}
        )


def test_consolidation_looks_back_the_seeds_seven_days():
    assert ConsolidationPolicy().window_days == 7.0


async def test_a_memory_with_a_ttl_is_gone_after_it(group_factory):
    group = group_factory(tiers={"migrate_every_ticks": 1})
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    now = group.clock.abs_seconds
    session = await s.add(
        "session", "talking with Bob about rain", type="session", expires_at=now + 3600
    )
    kept = await s.add("event", "it rained all day about Bob")
    group.clock.advance(3599)
    await group.end_tick()
    assert {h.id for h in await s.search("Bob rain", top_k=5)} == {session, kept}
    group.clock.advance(1)  # the TTL has passed: searches skip it, the tick end deletes it
    assert {h.id for h in await s.search("Bob rain", top_k=5)} == {kept}
    await group.end_tick()
    assert group.counters["expired"] == 1
    with pytest.raises(KeyError):
        await group.get_by_ids([session])
    await group.close()
