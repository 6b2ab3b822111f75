"""Each built-in block's behaviour on a real engine (Qdrant Edge memory, rules gateway)."""

from __future__ import annotations

import dataclasses

from societas.agents.blocks import (
    CognitionBlock,
    EconomyBlock,
    MobilityBlock,
    NeedsBlock,
    PlanBlock,
    SocialBlock,
    categorize,
    current_need,
    resolve_place,
)
from societas.agents.runtime.protocol import Message
from societas.agents.scenario import Intervention

from .conftest import make_ctx


async def test_needs_decay_restore_and_current_need(engine):
    block, a = NeedsBlock(engine.scenario), engine.agents[0]
    a.state.update(category="work", hunger_satisfaction=0.5, energy_satisfaction=0.5)
    await block.forward(make_ctx(engine, 0))
    assert a.state["hunger_satisfaction"] < 0.5 and a.state["energy_satisfaction"] < 0.5
    a.state.update(category="eat")
    await block.forward(make_ctx(engine, 0))
    assert a.state["hunger_satisfaction"] > 0.7
    a.state.update(category="sleep", energy_satisfaction=0.2)
    await block.forward(make_ctx(engine, 0))
    assert a.state["energy_satisfaction"] > 0.2
    a.state.update(alert=True, safety_satisfaction=0.3, category="work")
    await block.forward(make_ctx(engine, 0, danger=True))
    assert a.state["current_need"] == "safety"
    assert {"hunger_satisfaction", "current_need"} <= a.dirty
    assert current_need({"safety": 1, "hunger": 0.1, "energy": 0.1, "social": 1}, 0.25) == "hunger"
    assert current_need({"safety": 1, "hunger": 1, "energy": 1, "social": 1}, 0.25) == "none"


async def test_plan_makes_a_daily_plan_and_follows_it(engine):
    block, a = PlanBlock(engine.scenario), engine.agents[1]
    await block.forward(make_ctx(engine, 1, tick=0))
    assert a.state["plan"]["day"] == 0 and a.state["plan"]["items"]
    plan_memories = await a.memory.stream.search("plan", topic="plan")
    assert plan_memories
    assert a.state["_target"] in engine.population.town


async def test_plan_needs_and_evacuation_override(engine):
    block, a = PlanBlock(engine.scenario), engine.agents[2]
    await block.forward(make_ctx(engine, 2, tick=8))
    a.state.update(current_need="hunger", activity="x")
    await block.forward(make_ctx(engine, 2, tick=8))
    assert a.state["activity"] == "get something to eat" and a.state["category"] == "eat"
    a.state.update(evacuating=True, current_need="none")
    await block.forward(make_ctx(engine, 2, tick=9))
    assert a.state["_target"] == a.profile.shelter and a.state["category"] == "evacuate"


async def test_plan_reacts_to_a_danger_event_by_evacuating(engine):
    block, a = PlanBlock(engine.scenario), engine.agents[3]
    warning = Intervention(
        tick=8, kind="event", text="Hurricane warning: evacuate now", danger=True
    )
    await block.forward(make_ctx(engine, 3, tick=8, events=[warning], danger=True))
    assert a.state["alert"] and a.state["evacuating"]
    assert "reaction" in {r[2] for r in engine.results.buffered("events")}


async def test_mobility_moves_to_resolved_places(engine):
    a, town = engine.agents[4], engine.population.town
    p = a.profile
    assert resolve_place("home", p, town, "x") == p.home
    assert resolve_place("evacuate to the shelter", p, town, "x") == p.shelter
    assert resolve_place("cafe", p, town, "x") == p.leisure
    assert resolve_place("the moon", p, town, "here") == "here"
    assert categorize("have lunch", "work") == "eat"
    assert categorize("teacher at work-1", "work") == "work"
    a.state["_target"] = p.shelter
    await MobilityBlock().forward(make_ctx(engine, 4))
    assert a.state["position"] == p.shelter and "position" in a.dirty


async def test_social_learns_facts_from_chats_and_invites_at_encounters(engine):
    block, a = SocialBlock(engine.scenario), engine.agents[5]
    a.state["category"] = "work"
    chat = Message(
        tick=0,
        sender=6,
        recipient=5,
        kind="chat",
        payload={"text": "Did you hear?", "facts": ["f1"], "name": "Six"},
    )
    trusted = {"6": {"closeness": 1.0, "sentiment": 1.0, "talks": 3, "tick": 0}}
    a.state["relationships"] = trusted  # news from a close, liked friend is believed
    await block.forward(make_ctx(engine, 5, tick=1, inbox=[chat]))
    assert a.state["knowledge"] == ["f1"]
    assert (1, 5, "f1", 6) in engine.results.buffered("knowledge")
    heard = await a.memory.stream.search("Six told me", top_k=5)
    assert any("Six told me" in h.text for h in heard)
    engine.scenario.social.chat_prob = 1.0
    engine.scenario.social.friend_chat_prob = 1.0
    a.profile = dataclasses.replace(a.profile, sociability=1.0)  # shared profiles: a copy
    meet = Message(tick=1, sender=7, recipient=5, kind="encounter", payload={"place": "cafe-0"})
    await block.forward(make_ctx(engine, 5, tick=2, inbox=[meet]))
    partner, place, topic = a.state["_invite"]  # the driver routes the conversation
    assert (partner, place) == (7, "cafe-0") and "bridge" in topic.lower()


async def test_social_echo_chamber_ignores_distant_posts(engine):
    block, a = SocialBlock(engine.scenario), engine.agents[8]
    engine.scenario.exposure.echo_chamber = True
    a.state["attitude"] = {"carbon tax": 2.0}
    far = Message(
        tick=0,
        sender=1,
        recipient=8,
        kind="post",
        payload={"topic": "carbon tax", "value": 9.0, "name": "X", "text": "yes"},
    )
    await block.forward(make_ctx(engine, 8, tick=1, inbox=[far]))
    assert not a.state.get("_exposed")
    near = far.model_copy(update={"payload": {**far.payload, "value": 3.0}})
    await block.forward(make_ctx(engine, 8, tick=1, inbox=[near]))
    assert a.state["_exposed"]


async def test_economy_work_income_policy_and_hours(engine):
    block = EconomyBlock(engine.scenario)
    employed = next(a for a in engine.agents.values() if a.profile.work)
    aid, s = employed.id, employed.state
    await block.forward(make_ctx(engine, aid, tick=0))
    assert s["work_hours"] == engine.scenario.economy.work_hours
    s["category"] = "work"
    before = s["currency"]
    await block.forward(make_ctx(engine, aid, tick=1))
    assert s["currency"] > before and s["worked_today"] == 0.5
    income = s["income"]
    ubi = Intervention(tick=2, kind="policy", policy="ubi", amount=500)
    await block.forward(make_ctx(engine, aid, tick=2, events=[ubi]))
    assert s["income"] == income + 500 and s["transfers"] == 500
    await block.forward(make_ctx(engine, aid, tick=40))  # the next day
    assert s["work_hours"] < engine.scenario.economy.work_hours


async def test_cognition_thought_attitude_and_reflection(engine):
    block, a = CognitionBlock(engine.scenario), engine.agents[9]
    hour = engine.scenario.cognition.thought_hour
    tick = (hour - engine.scenario.start_hour) * 2
    await block.forward(make_ctx(engine, 9, tick=tick))
    assert a.state["_emotion"]
    for n in range(3):
        await a.memory.stream.add("post", f"N{n} posted: I support carbon tax: it is good.")
    a.state.update(_exposed=True, attitude={"carbon tax": 5.0})
    t = next(t for t in range(100) if (t + 9) % engine.scenario.cognition.attitude_every == 0)
    await block.forward(make_ctx(engine, 9, tick=t))
    assert a.state["attitude"]["carbon tax"] > 5.0
    engine.reflector.note(9, 100.0)
    await block.forward(make_ctx(engine, 9, tick=t + 1))
    assert any(r[2] == "reflection" for r in engine.results.buffered("events"))
    assert await a.memory.stream.search("coming up", topic="reflection")
