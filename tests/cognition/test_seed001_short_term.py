"""Seed 001 in agents: a conversation's session memory and the task in progress expire after
their TTL; a live session is recalled in the next conversation; preference timelines with
confidence, stability and trend (hand computations)."""

from __future__ import annotations

import pytest

from societas.agents.cognition.conversation import about, remember_conversation
from societas.agents.cognition.memorize import PendingMemories
from societas.agents.cognition.preferences import (
    confidence,
    evolve,
    note_preference,
    slope,
    stability,
    trend,
)
from societas.agents.cognition.short_term import note_task, task_memory
from societas.agents.llm.gateway import LLMGateway
from societas.memory import GroupMemory, GroupMemoryConfig
from societas.memory.policies.configs import PreferencePolicy, SessionPolicy

from .conftest import PROFILES

HISTORY = [
    ("Ann Lee", "Did you hear about the storm?"),
    ("Bob Ray", "Yes, the bakery closes early."),
]
PLAN = {
    "day": 1,
    "items": [
        {"start_hour": 7, "activity": "have breakfast", "location": "flat 2"},
        {"start_hour": 9, "activity": "bake bread", "location": "bakery"},
        {"start_hour": 13, "activity": "deliver bread", "location": "market"},
        {"start_hour": 18, "activity": "rest at home", "location": "flat 2"},
    ],
}


@pytest.fixture
async def shortterm(tmp_path, bm25_embedder):
    policies = {"sessions": {"enabled": True}, "preferences": {"enabled": True, "window": 4}}
    cfg = GroupMemoryConfig(policies=policies, tiers={"migrate_every_ticks": 1})
    g = GroupMemory(cfg, root=tmp_path / "mem", embedder=bm25_embedder)
    await g.add_agents(PROFILES)
    g.clock.set(1, 10 * 3600.0)
    yield g
    await g.close()


async def test_a_session_lives_its_ttl_and_is_recalled_meanwhile(shortterm):
    g = shortterm
    llm = LLMGateway({"provider": "rules"})
    writer = PendingMemories(llm)
    bob = g.agent(2)
    await remember_conversation(
        writer,
        g,
        bob,
        "conv-1",
        "Ann warned me about the storm.",
        HISTORY[:1],
        "bakery",
        other="Ann Lee",
        topic="the storm",
        history=HISTORY,
        tone=0.5,
    )
    await writer.flush(g)
    start = g.clock.abs_seconds
    records = [g.hot.record(i) for i in g.hot.memory_ids(2)]
    by_type = {r.type: r for r in records}
    session, summary = by_type["session"], by_type["conversation"]
    assert session.expires_at == start + 3600.0  # the seed's session TTL
    content = session.metadata["content"]
    assert content["session_id"] == "conv-1" and content["context"]["partner"] == "Ann Lee"
    assert [t["content"] for t in content["conversation_history"]] == [t for _, t in HISTORY]
    assert summary.expires_at is None  # the summary is long-term, with its structure
    assert summary.metadata["content"]["key_points"] == ["Did you hear about the storm?"]
    assert summary.metadata["content"]["emotional_context"] == "warm"
    assert g.policy_state.counters["written_session"] == 1
    g.clock.advance(1800)
    recalled = await about(bob, "Ann Lee", "the storm", sessions=True)
    assert recalled[0].startswith("(earlier, still in mind) Talking with Ann Lee about the storm")
    assert not any("still in mind" in t for t in await about(bob, "Ann Lee", "the storm"))
    g.clock.advance(1800)  # TTL over: not recalled, and deleted at the tick end
    assert not any("still in mind" in t for t in await about(bob, "Ann Lee", "the storm", True))
    await g.end_tick()
    assert g.counters["expired"] == 1
    assert "session" not in {g.hot.record(i).type for i in g.hot.memory_ids(2)}


def test_task_memory_from_the_day_plan():
    policy = SessionPolicy(enabled=True)
    text, record = task_memory(policy, 100.0, PLAN, 13, "deliver bread", "work", "market")
    assert text == "Doing now: deliver bread"
    assert record["expires_at"] == 100.0 + 7200.0  # the seed's task TTL
    assert record["metadata"]["content"] == {
        "task_id": "1-13-work",
        "task_type": "work",
        "status": "in_progress",
        "progress": 0.5,  # 2 of the day's 4 items started before 13:00
        "steps_completed": ["have breakfast", "bake bread"],
        "next_steps": ["rest at home"],
        "context_variables": {"place": "market", "hour": 13},
    }
    assert task_memory(SessionPolicy(), 100.0, PLAN, 13, "x", "work", None) is None  # off
    no_task = SessionPolicy(enabled=True, ttl_seconds={"session": 60.0})
    assert task_memory(no_task, 100.0, PLAN, 13, "x", "work", None) is None


async def test_a_task_memory_expires(shortterm):
    g = shortterm
    writer = PendingMemories(LLMGateway({"provider": "rules"}))
    policy = g.config.policies.sessions
    await note_task(writer, g.agent(2), policy, PLAN, 9, "bake bread", "work", "bakery")
    await writer.flush(g)
    assert [g.hot.record(i).type for i in g.hot.memory_ids(2)] == ["task"]
    g.clock.advance(7200)
    await g.end_tick()
    assert g.hot.memory_ids(2) == [] and g.counters["expired"] == 1
    assert g.policy_state.counters["written_task"] == 1


def test_preference_formulas_by_hand():
    assert confidence(8.0) == 0.6 and confidence(5.0) == 0.0 and confidence(0.0) == 1.0
    assert stability([5.0, 6.0, 7.0, 8.0]) == 0.9  # 1 - mean |Δ| 1 / 10
    assert stability([5.0]) == 1.0
    assert slope([5.0, 6.0, 7.0, 8.0]) == 1.0
    assert slope([4.0, 6.0, 5.0]) == 0.5  # Σ(i−1)(v−5) = 1 over Σ(i−1)² = 2
    assert trend([5.0, 6.0, 7.0, 8.0], 0.25) == "towards_for"
    assert trend([8.0, 7.0, 6.5], 0.25) == "towards_against"
    assert trend([5.0, 5.2, 5.0, 5.1], 0.25) == "stable"


def test_a_timeline_grows_and_keeps_its_window():
    policy = PreferencePolicy(enabled=True, window=3, max_points=4)
    record = None
    for n, value in enumerate([5.0, 4.0, 3.0, 2.5, 2.0]):
        record = evolve(record, "tax", value, n * 60.0, f"read post {n}", policy).model_dump()
    assert [p["preference"] for p in record["evolution_timeline"]] == [4.0, 3.0, 2.5, 2.0]
    assert record["current_preference"] == 2.0
    assert record["evolution_timeline"][-1]["confidence"] == 0.6
    assert record["stability_score"] == 0.95  # last 3: |Δ| 0.5, 0.5
    assert record["trend_direction"] == "towards_against"  # slope -0.5


async def test_note_preference_keeps_the_timeline_in_kv_and_remembers_it(shortterm):
    g = shortterm
    writer = PendingMemories(LLMGateway({"provider": "rules"}))
    ann = g.agent(1)
    prefs: dict = {}
    for value in (6.0, 7.0, 8.0):
        prefs = await note_preference(
            writer, ann, g.config.policies.preferences, prefs, "tax", value
        )
        g.clock.advance(600)
    await writer.flush(g)
    assert prefs["tax"]["trend_direction"] == "towards_for"
    assert len(prefs["tax"]["evolution_timeline"]) == 3
    kinds = [g.hot.record(i).type for i in g.hot.memory_ids(1)]
    assert kinds == ["preference"] * 3 and g.policy_state.counters["written_preference"] == 3
    off = PreferencePolicy()
    assert await note_preference(writer, ann, off, prefs, "tax", 9.0) is None
