"""Memory policies: FinMem layers on a crafted timeline, access, consolidation, associations."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from societas.memory import GroupMemoryConfig

DAY = 86_400.0
LAYERS = {
    "short": {
        "importance_decay_per_day": 0.5,
        "recency_tau_days": 1,
        "promote_at": 0.8,
        "cleanup_below": 0.1,
    },
    "mid": {
        "importance_decay_per_day": 0.9,
        "recency_tau_days": 2,
        "promote_at": 0.95,
        "demote_below": 0.3,
        "cleanup_below": 0.01,
    },
    "long": {"importance_decay_per_day": 1.0, "recency_tau_days": 10, "demote_below": 0.01},
    "reflection": {"importance_decay_per_day": 1.0, "recency_tau_days": 10},
}


def forgetting(**extra):
    return {
        "forgetting": {
            "enabled": True,
            "layers": LAYERS,
            "run_every_ticks": 1,
            "access_boost": 0.1,
            **extra,
        }
    }


@pytest.fixture
def make(group_factory, backend):
    def build(policies, **config):
        tiers = {"warm_max_age_days": None, "warm_cap_per_agent": None}
        return group_factory(backend, policies=policies, tiers=tiers, **config)

    return build


async def crafted(group):
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    a = await stream.add("event", "alpha the bridge collapsed", importance=0.9)
    b = await stream.add("event", "bravo a cat crossed the road", importance=0.15)
    c = await stream.add("event", "charlie the bakery opened late", importance=0.5)
    return a, b, c


async def test_crafted_timeline_promotes_cleans_up_and_demotes(make):
    group = make(forgetting())
    a, b, c = await crafted(group)
    await group.end_tick()  # day 0: A (0.9 >= 0.8) goes short -> mid
    (rec_a,) = await group.get_by_ids([a])
    assert (rec_a.layer, rec_a.importance) == ("mid", pytest.approx(0.9))
    assert group.counters["promoted"] == 1

    group.clock.set(1, 0.0)
    await group.end_tick()  # day 1: B 0.15·0.5 = 0.075 < 0.1 -> cleaned up (to cold)
    assert group.cold.all_ids() == {b}
    assert (await group.get_by_ids([b]))[0].text == "bravo a cat crossed the road"

    group.clock.set(3, 0.0)
    await group.end_tick()  # day 3: A mid recency e^(-3/2) = 0.22 < 0.3 -> demoted;
    #                         C 0.5·0.5^3 = 0.0625 < 0.1 -> cleaned up
    (rec_a,) = await group.get_by_ids([a])
    assert rec_a.layer == "short"
    # stored to 3 decimals by the pass (one write per distinct layer and importance)
    assert rec_a.importance == pytest.approx(0.9 * 0.9**3, abs=5e-4)
    assert group.cold.all_ids() == {b, c}
    assert (
        group.counters["promoted"],
        group.counters["demoted"],
        group.counters["cleaned_up"],
        group.counters["forgotten"],
    ) == (1, 1, 2, 0)
    counts = await group.tier_counts()
    assert counts["warm"] + counts["cold"] == 3


async def test_forget_drops_cleaned_up_memories_and_counts_them(make):
    group = make(forgetting(forget=True))
    _, b, _ = await crafted(group)
    group.clock.set(3, 0.0)
    await group.end_tick()
    assert group.counters["forgotten"] == 2 and group.cold.count() == 0
    counts = await group.tier_counts()
    assert counts["warm"] + counts["cold"] + group.counters["forgotten"] == 3
    with pytest.raises(KeyError):
        await group.get_by_ids([b])


async def test_engine_ranks_by_decayed_importance(make):
    group = make(forgetting(), retrieval={"recency_weight": 0, "relevance_weight": 0})
    a, b, c = await crafted(group)
    group.clock.set(0, 12 * 3600.0)  # half a day: short-layer importance × 0.5 ** 0.5
    hits = await group.agent(1).stream.search("the", top_k=3)  # stop words: recency candidates
    expected = {a: 0.9 * 0.5**0.5, b: 0.15 * 0.5**0.5, c: 0.5 * 0.5**0.5}
    assert [h.id for h in hits] == [a, c, b]
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.id], rel=1e-4)


async def test_access_raises_importance_and_restarts_decay(make):
    group = make(forgetting())
    a, _, _ = await crafted(group)
    group.clock.set(1, 0.0)
    await group.agent(1).stream.search("alpha bridge", top_k=1)
    (rec,) = await group.get_by_ids([a])
    assert rec.importance == pytest.approx(0.9 * 0.5 + 0.1)  # decayed one day, then boosted
    assert rec.layer_since == group.clock.abs_seconds
    assert group.counters["accesses"] == 1


async def test_a_flushed_boost_leaves_ram_and_the_store_holding_the_same_payload(make):
    """The store's boost is rebased and rounded at the flush; the hot copy takes the same
    values, so a memory scores the same whether ranked from RAM, the engine or cold."""
    group = make(forgetting())
    ids = await crafted(group)
    await group.end_tick()
    group.clock.set(0, 7 * 3600.0)
    await group.agent(1).stream.search("alpha bridge", top_k=3)  # boosts all three
    group.clock.set(0, 11 * 3600.0)
    await group.end_tick()  # the flush: decayed to 11:00, rounded to 3 decimals
    stored = await group.store.retrieve(list(ids))
    hot = group.hot
    rebased = 0
    for memory_id in ids:
        row = hot.row_of[memory_id]
        payload = stored[memory_id]
        in_ram = (hot.layers[row], hot.importances[row], hot.layer_since[row])
        assert in_ram == (payload["layer"], payload["importance"], payload["layer_since"])
        rebased += payload["layer_since"] == group.clock.abs_seconds
    assert rebased == 3


async def test_consolidation_merges_near_duplicates(make):
    consolidation = {"enabled": True, "similarity": 0.7, "run_every_ticks": 1}
    group = make({"consolidation": {**consolidation, "min_group": 2, "sources": "cold"}})
    await group.add_agents({1: {}, 2: {}})
    stream = group.agent(1).stream
    dupes = [
        await stream.add(
            "activity", "bought fresh bread at the bakery on main street", importance=imp
        )
        for imp in (0.2, 0.6, 0.4)
    ]
    dupes.append(await stream.add("activity", "bought fresh bread at the main street bakery"))
    other = await stream.add("activity", "swam in the lake with friends")
    elsewhere = await stream.add("event", "bought fresh bread at the bakery on main street")
    await group.agent(2).stream.add("activity", "bought fresh bread at the bakery on main street")
    await group.end_tick()
    assert group.counters["consolidated"] == 4
    assert group.cold.all_ids() == set(dupes)
    hits = await stream.search("bakery bread", top_k=5, topic="activity")
    summary = next(h for h in hits if h.text.endswith("(and 3 similar memories)"))
    assert summary.importance == 0.6
    (record,) = await group.get_by_ids([summary.id])
    assert sorted(record.evidence_ids) == sorted(dupes)
    assert [r.id for r in await stream.get_related_cognition(dupes[0])] == [summary.id]
    assert other not in group.cold.all_ids()  # not a near-duplicate: untouched
    remaining = {h.id for h in await stream.search("bakery", top_k=10)}
    assert elsewhere in remaining  # another topic: not merged


async def test_custom_async_summarizer(make):
    consolidation = {"enabled": True, "similarity": 0.7, "run_every_ticks": 1, "min_group": 2}
    group = make({"consolidation": consolidation})
    await group.add_agents({1: {}})

    async def summarize(texts):
        return f"LLM summary of {len(texts)}"

    group.summarizer = summarize
    for _ in range(2):
        await group.agent(1).stream.add("event", "the siren sounded at noon")
    await group.end_tick()
    hits = await group.agent(1).stream.search("summary", top_k=1)
    assert hits[0].text == "LLM summary of 2"


async def test_spreading_activation_follows_links(make):
    group = make(
        {}, retrieval={"candidates": "relevant", "recency_weight": 0, "importance_weight": 0}
    )
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    evidence = [
        await stream.add("event", "the river rose overnight"),
        await stream.add("event", "sandbags arrived by truck"),
    ]
    insight = await stream.add("reflection", "our town must prepare for floods")
    await stream.add_cognition_to_memory(evidence, insight)
    plain = await stream.search("prepare floods", top_k=5)
    assert [h.id for h in plain] == [insight]
    expanded = await stream.search("prepare floods", top_k=5, expand=True)
    assert expanded[0].id == insight
    assert {h.id for h in expanded[1:]} == set(evidence)
    for hit in expanded[1:]:
        assert hit.score == pytest.approx(expanded[0].score * 0.5)


@pytest.mark.parametrize(
    ("policies", "field"),
    [
        (
            {
                "forgetting": {
                    "layers": {"short": {"importance_decay_per_day": 0.9, "recency_tau_days": 1}}
                }
            },
            "missing",
        ),
        (
            {
                "forgetting": {
                    "layers": {**LAYERS, "short": {**LAYERS["short"], "promote_at": 0.05}}
                }
            },
            "promote_at",
        ),
        (
            {
                "forgetting": {
                    "layers": {**LAYERS, "mid": {**LAYERS["mid"], "importance_decay_per_day": 1.5}}
                }
            },
            "importance_decay_per_day",
        ),
        ({"forgetting": {"layers": {**LAYERS, "eternal": LAYERS["long"]}}}, "eternal"),
        ({"forgetting": {"access_boost": -0.1}}, "access_boost"),
        ({"consolidation": {"similarity": 0}}, "similarity"),
        ({"consolidation": {"min_group": 1}}, "min_group"),
        ({"associations": {"decay": 1.0}}, "decay"),
        ({"forgetting": {"enabld": True}}, "enabld"),
    ],
)
def test_bad_policy_configs_name_the_field(policies, field):
    with pytest.raises(ValidationError) as info:
        GroupMemoryConfig(policies=policies)
    assert field in str(info.value)
