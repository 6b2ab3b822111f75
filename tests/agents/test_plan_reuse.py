"""Routine hours reuse the previous hour's actions instead of a new hourly_plan call, and an
observed event or a new activity makes the next hour call again (real engine, rules gateway)."""

from __future__ import annotations

from societas.agents.blocks import PlanBlock
from societas.agents.cognition import reusable_hour
from societas.agents.scenario import Intervention

from .conftest import make_ctx

# start_hour 6, 30-minute ticks: tick 6 = 9:00, 8 = 10:00, 9 = 10:30, 10 = 11:00, 12 = 12:00
ITEMS = [
    {"start_hour": 6, "activity": "have breakfast", "location": "home"},
    {"start_hour": 9, "activity": "write the report", "location": "office"},
    {"start_hour": 12, "activity": "have lunch", "location": "home"},
]


def hourly_calls(engine) -> int:
    """hourly_plan calls the engine's gateway answered so far."""
    return engine.llm.stats()["tasks"].get("hourly_plan", {}).get("requests", 0)


def action_rows(engine, agent_id: int, hour: int) -> list[tuple]:
    """(minute, duration, action) of the agent's `plans` action rows for `hour`."""
    rows = engine.results.buffered("plans")
    return [r[4:7] for r in rows if r[1] == agent_id and r[2] == "action" and r[3] == hour]


async def test_a_routine_hour_reuses_the_previous_hours_actions_without_a_call(engine):
    block, a = PlanBlock(engine.scenario), engine.agents[5]
    plan = {"day": 0, "items": [dict(i) for i in ITEMS], "hourly": {}}
    a.set("plan", plan)
    await block.forward(make_ctx(engine, 5, tick=6))  # 9:00, a new activity: a call
    await engine._write_back()  # hot state to KV, as at the end of a tick
    after_nine = hourly_calls(engine)
    nine = action_rows(engine, 5, 9)
    assert nine and after_nine >= 1
    await block.forward(make_ctx(engine, 5, tick=8))  # 10:00, same activity and place
    await engine._write_back()  # hot state to KV, as at the end of a tick
    assert hourly_calls(engine) == after_nine
    assert action_rows(engine, 5, 10) == nine
    assert a.state["plan"]["hourly"] == {"10": a.state["plan"]["hourly"]["10"]}
    remembered = await a.memory.stream.search("plan for 10:00", topic="plan")
    assert any("plan for 10:00" in m.text for m in remembered)
    news = Intervention(tick=9, kind="event", text="The town fair opens on Saturday")
    await block.forward(make_ctx(engine, 5, tick=9, events=[news]))  # 10:30: observed
    await engine._write_back()  # hot state to KV, as at the end of a tick
    assert a.state["plan"].get("observed") is True
    calls = hourly_calls(engine)
    await block.forward(make_ctx(engine, 5, tick=10))  # 11:00: something new, a call
    await engine._write_back()  # hot state to KV, as at the end of a tick
    assert hourly_calls(engine) == calls + 1
    assert "observed" not in a.state["plan"]
    await block.forward(make_ctx(engine, 5, tick=12))  # 12:00: lunch, a new activity
    await engine._write_back()  # hot state to KV, as at the end of a tick
    assert hourly_calls(engine) == calls + 2


def test_reusable_hour_needs_same_activity_place_and_nothing_observed():
    steps = [{"minute": 0, "duration_min": 30, "action": "focus"}]
    plan = {"day": 0, "items": ITEMS, "hourly": {"9": steps}}
    assert reusable_hour(plan, 10) == steps
    assert reusable_hour(plan, 11) is None  # hour 10 not decomposed
    assert reusable_hour({**plan, "observed": True}, 10) is None
    moved = [*ITEMS[:2], {"start_hour": 10, "activity": "write the report", "location": "cafe"}]
    assert reusable_hour({**plan, "items": moved}, 10) is None
    lunch = {**plan, "hourly": {"11": steps}}
    assert reusable_hour(lunch, 12) is None
