"""Spreading activation adds: a memory linked to a hit scores its own score plus the hit's
score × decay × the association's weight × strength, checked against a hand computation."""

from __future__ import annotations

import math

import pytest

HOUR = 3600.0


async def test_activation_adds_to_the_linked_memorys_own_score(group_factory):
    group = group_factory("edge")
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    anchor = await s.add("event", "the river flooded the lower town", importance=0.9)
    group.clock.set(0, 2 * HOUR)
    linked = await s.add("event", "bought fresh bread at the bakery", importance=0.4)
    group.clock.set(0, 10 * HOUR)
    walks = [await s.add("event", "a walk in the park", importance=0.5) for _ in range(3)]
    await s.associate(anchor, linked, "similar", 1.0)
    (top, second) = await s.search("river flooded", top_k=2)
    assert top.id == anchor and second.id in walks  # without activation: a walk
    hits = {h.id: h.score for h in await s.search("river flooded", top_k=2, expand=True)}
    # Own score: α·0.999^hours + β·importance + γ·0 (no common word); activation: the
    # anchor's score × decay 0.5 × the similar weight 0.8 × strength 1.
    assert hits == {
        anchor: pytest.approx(top.score),
        linked: pytest.approx(0.999**8 + 0.4 + top.score * 0.5 * 0.8),
    }
    await group.close()


async def test_a_linked_memory_of_a_finmem_agent_scores_by_its_layer(group_factory):
    """Its own score is FinMem's, e^(−Δ/Q) + importance × f^Δ (short: Q 3, f 0.9), as a hit's."""
    group = group_factory("edge", profile="finmem", retrieval={"relevance_weight": 0.0})
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    anchor = await s.add("event", "the river flooded the lower town", importance=0.9)
    linked = await s.add("event", "bought fresh bread at the bakery", importance=0.2)
    await s.add("event", "a walk in the park", importance=0.5)
    await s.associate(anchor, linked, "similar", 1.0)
    group.clock.set(2, 0.0)  # two days later
    hits = {h.id: h.score for h in await s.search("river flooded", top_k=2, expand=True)}
    own = math.exp(-2 / 3) + 0.2 * 0.9**2
    assert hits[linked] == pytest.approx(own + hits[anchor] * 0.5 * 0.8, abs=1e-4)
    await group.close()


async def test_activated_memories_carry_the_tier_they_were_read_from(group_factory):
    """A hot hit activates linked memories in warm and in cold: each is returned with its tier,
    and its own score is that of a hit (recency and importance, no common word here)."""
    from tests.memory.conftest import roomy_tiers

    tiers = roomy_tiers(hot_cap_per_agent=1, warm_cap_per_agent=2)  # warm counts hot ones too
    group = group_factory("edge", tiers=tiers, retrieval={"relevance_weight": 0.0})
    await group.add_agents({1: {}})
    s = group.agent(1).stream
    frozen = await s.add("event", "bought fresh bread at the bakery", importance=0.2)
    group.clock.set(0, HOUR)
    warm = await s.add("event", "a walk in the park", importance=0.3)
    group.clock.set(0, 2 * HOUR)
    anchor = await s.add("event", "the river flooded the lower town", importance=0.9)
    for linked in (frozen, warm):
        await s.associate(anchor, linked, "similar", 1.0)
    await group.end_tick()
    assert anchor in group.hot and warm not in group.hot and group.cold.all_ids() == {frozen}
    (top,) = await s.search("river flooded", top_k=1, tiers=["hot"])
    hits = {h.id: h for h in await s.search("river flooded", top_k=3, tiers=["hot"], expand=True)}
    assert {i: h.tier for i, h in hits.items()} == {anchor: "hot", warm: "warm", frozen: "cold"}
    activation = top.score * 0.5 * 0.8
    assert hits[warm].score == pytest.approx(0.999**1 + 0.3 + activation)
    assert hits[frozen].score == pytest.approx(0.999**2 + 0.2 + activation)
    await group.close()
