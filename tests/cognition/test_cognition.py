"""Every cognition function on the rules policy and over HTTP through the emulator."""

from __future__ import annotations

from societas.agents.cognition import (
    ReflectionConfig,
    Reflector,
    activity_at,
    consolidate,
    converse,
    decompose_hour,
    plan_day,
    rate_importance,
    react,
    remember,
    summarize,
    update_attitude,
    update_thought,
)
from societas.agents.llm.gateway import LLMGateway

HURRICANE = [
    "The radio says a hurricane will hit the coast on Friday",
    "Neighbours are boarding up windows against the hurricane",
    "The mayor ordered an evacuation of the coast before the hurricane",
    "The shelter at the school opened for evacuation",
    "A bus takes people to the shelter before the hurricane",
]


async def test_importance_is_batched_and_ranks_poignant_above_mundane(group, llm) -> None:
    texts = [
        "ate breakfast",
        "my father died in the hospital",
        "brushed teeth",
        "the house caught fire",
    ] * 6
    scores = await rate_importance(llm, texts, "Ann")
    assert len(scores) == 24 and all(0 < s <= 1 for s in scores)
    assert min(scores[1], scores[3]) > max(scores[0], scores[2])
    if hasattr(llm, "emulator"):
        assert llm.emulator.stats["chat_requests"] == 2  # 24 items, 20 per call
        llm.emulator.reset()
    ids = await remember(group.agent(1), llm, "event", texts[:4], location="home")
    recs = await group.agent(1).stream.get_by_ids(ids)
    expected = await rate_importance(llm, texts[:4], seed=1)  # remember seeds by agent id
    assert [r.importance for r in recs] == expected


async def test_reflection_triggers_and_links_insights_to_evidence(group, llm) -> None:
    mem = group.agent(1)
    ids = await remember(mem, llm, "event", HURRICANE)
    reflector = Reflector(llm, ReflectionConfig(threshold=1.0, n_questions=2))
    assert not reflector.due(1)
    recs = await mem.stream.get_by_ids(ids)
    reflector.note(1, [r.importance for r in recs])
    assert reflector.due(1)
    new = await reflector.maybe_reflect(mem)
    assert new and not reflector.due(1)
    reflections = await mem.stream.get_by_ids(new)
    assert all(r.topic == "reflection" for r in reflections)
    assert any("hurricane" in r.text.lower() for r in reflections)
    linked = set()
    for mid in ids:
        linked |= {c.id for c in await mem.stream.get_related_cognition(mid)}
    assert linked & set(new)  # insights point back at their evidence
    assert await reflector.maybe_reflect(mem) == []  # accumulator was reset


async def test_daily_plan_and_hourly_decomposition(group, llm) -> None:
    mem = group.agent(2)
    plan = await plan_day(mem, llm, day=1)
    stored = await mem.status.get("plan")
    assert stored["day"] == 1 and len(stored["items"]) == len(plan.items) >= 3
    hours = [i["start_hour"] for i in stored["items"]]
    assert hours == sorted(hours)
    assert any(i["location"] == "bakery" for i in stored["items"])  # from the profile
    work_hour = next(i["start_hour"] for i in stored["items"] if i["location"] == "bakery")
    steps = await decompose_hour(mem, llm, work_hour)
    assert steps is not None and sum(s.duration_min for s in steps.steps) <= 60
    stored = await mem.status.get("plan")
    assert str(work_hour) in stored["hourly"]
    hits = await mem.stream.search("plan for day 1", topic="plan")
    assert hits and "bakery" in hits[0].text
    assert "at bakery at bakery" not in hits[0].text  # the place once: "baker at bakery"


async def test_reaction_replans_on_danger_and_ignores_trivia(group, llm) -> None:
    mem = group.agent(1)
    await plan_day(mem, llm, day=1)
    before = await mem.status.get("plan")
    calm = await react(mem, llm, "a cat sat on a mat", day=1, hour=10)
    assert not calm.react and await mem.status.get("plan") == before
    flood = await react(mem, llm, "a flood reached the street", day=1, hour=10, location="school")
    assert flood.react and flood.new_activity
    after = await mem.status.get("plan")
    assert activity_at(after, 10)["activity"] == flood.new_activity
    assert activity_at(after, 11)["activity"] == flood.new_activity  # displaced for 2 h
    events = await mem.stream.search("flood", topic="event")
    assert events and events[0].text.startswith("a flood")


async def test_dialogue_spreads_information_through_both_memories(group, llm) -> None:
    ann, bob, cat = group.agent(1), group.agent(2), group.agent(3)
    await ann.stream.add("event", "The mayor resigned this morning", importance=0.9)
    assert not await _knows(cat, "mayor") and not await _knows(bob, "mayor")
    conv = await converse(llm, ann, bob, topic="the mayor", max_turns=4)
    assert conv.turns and conv.turns[0].speaker == "Ann Lee"
    assert len(conv.memory_ids[1]) == len(conv.memory_ids[2]) == 1  # a summary each
    assert await _knows(bob, "mayor")  # Bob heard it from Ann
    await converse(llm, bob, cat, topic="the mayor", max_turns=2, seed=1)
    assert await _knows(cat, "mayor")  # and passed it on to Cat


async def _knows(mem, word: str) -> bool:
    hits = await mem.stream.search(word, top_k=5)
    return any(word in h.text.lower() for h in hits)


async def test_thought_update_follows_experience(group, llm) -> None:
    mem = group.agent(3)
    await mem.stream.add(
        "event", "A fire broke out in the clinic and we had to evacuate", importance=0.9
    )
    out = await update_thought(mem, llm)
    assert out.emotion == "Fear"  # the seed's word; the intensity it raises is fear
    assert await mem.status.get("thought") == out.thought
    assert (await mem.status.get("emotion"))["fear"] == round(out.intensity * 10)
    assert await mem.status.get("emotion_types") == "Fear"


async def test_attitude_moves_towards_what_was_heard(group, llm) -> None:
    mem = group.agent(2)
    for text in (
        "Ann said she supports ubi because it is fair",
        "Cat said ubi would help families, she is in favor of ubi",
        "The radio said ubi is good for the town",
    ):
        await mem.stream.add("dialogue", text, importance=0.5)
    out = await update_attitude(mem, llm, "ubi", stubbornness=0.0)
    assert out.attitude > 5.5
    assert (await mem.status.get("attitude"))["ubi"] == out.attitude


async def test_consolidation_writes_a_linked_summary(group, llm) -> None:
    mem = group.agent(1)
    ids = [
        await mem.stream.add("event", t, importance=0.2 + i / 10)
        for i, t in enumerate(
            ["walked in the park", "fed ducks in the park", "sat on a bench in the park"]
        )
    ]
    sid = await consolidate(mem, llm, ids, name="Ann")
    (summary,) = await mem.stream.get_by_ids([sid])
    assert summary.topic == "summary" and "park" in summary.text
    assert summary.importance == max(r.importance for r in await mem.stream.get_by_ids(ids))
    assert sid in {c.id for c in await mem.stream.get_related_cognition(ids[0])}
    assert "park" in await summarize(llm, ["park one", "park two"])


async def test_a_day_survives_a_faulty_server(group, bm25_embedder) -> None:
    """Over HTTP with 429s, 500s, broken and garbage JSON: everything completes, counted."""
    from societas.testing.emulator import EmulatorConfig, serve

    cfg = EmulatorConfig(
        base_latency_s=0.001,
        rate_429=0.2,
        rate_500=0.1,
        rate_malformed=0.2,
        rate_garbage=0.1,
        retry_after_s=0.01,
        seed=4,
    )
    async with serve(cfg) as (emu, url):
        llm = LLMGateway(
            {
                "endpoints": [{"base_url": url, "model": "emulated", "send_task_hints": True}],
                "retry": {"base_delay_s": 0.005, "max_attempts": 8},
            }
        )
        async with llm:
            for aid in (1, 2, 3):
                await plan_day(group.agent(aid), llm, day=1)
                await update_thought(group.agent(aid), llm)
                await decompose_hour(group.agent(aid), llm, 9)
            await converse(llm, group.agent(1), group.agent(2), topic="the weather")
    ev = llm.accounting.events
    injected = emu.stats["injected"]
    assert injected["429"] + injected["500"] > 0
    assert ev.get("retry.429", 0) + ev.get("retry.5xx", 0) == injected["429"] + injected["500"]
    assert ev.get("json.repaired", 0) + ev.get("json.reask", 0) + ev.get("json.fallback", 0) > 0
    for a in (1, 2, 3):
        assert (await group.agent(a).status.get("plan"))["items"]
