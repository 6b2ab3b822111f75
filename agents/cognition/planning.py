"""Daily plan in broad strokes, hourly decomposition, and the plan lookups the agent uses.

The plan lives in the KV attribute `plan`: {"day", "items": [PlanItem...], "hourly": {hour:
[PlanStep...]}}; each new plan is also remembered in the stream (topic "plan")."""

from __future__ import annotations

from typing import Any

from societas.agents.cognition.persona import Persona, fmt_needs, lines, persona, recall
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import DailyPlan, HourlyPlan, PlanItem
from societas.memory import AgentMemory


def default_plan(p: Persona) -> DailyPlan:
    """Fallback when the model's plan never validates: home, work, home."""
    home, work = p.profile.get("home") or "home", p.profile.get("work") or "home"
    return DailyPlan(
        items=[
            PlanItem(start_hour=7, activity="wake up and have breakfast", location=home),
            PlanItem(start_hour=9, activity="work", location=work),
            PlanItem(start_hour=18, activity="have dinner", location=home),
            PlanItem(start_hour=22, activity="sleep", location=home),
        ]
    )


def activity_at(plan: dict[str, Any], hour: int) -> dict[str, Any] | None:
    """The plan item in force at `hour` (the last one starting at or before it)."""
    current = None
    for item in plan.get("items", []):
        if item["start_hour"] <= hour:
            current = item
    return current


def describe(items: list[dict[str, Any]]) -> str:
    """'7:00 breakfast at home; 9:00 ...'."""
    return "; ".join(f"{i['start_hour']}:00 {i['activity']} at {i['location']}" for i in items)


async def plan_day(mem: AgentMemory, llm: LLMGateway, day: int) -> DailyPlan:
    """Make and store today's plan from profile, needs and relevant memories."""
    p = await persona(mem)
    hits = await recall(mem, f"{p.name} plans goals today", top_k=5)
    plan = await llm.json(
        messages(
            "daily_plan",
            p.system(),
            name=p.name,
            day=day,
            needs=fmt_needs(p.needs),
            memories=lines(hits),
            home=p.profile.get("home") or "home",
            work=p.profile.get("work") or "none",
        ),
        DailyPlan,
        task="daily_plan",
        context={"name": p.name, "profile": p.rules_profile(), "needs": p.needs, "day": day},
        seed=mem.agent_id * 100003 + day,
        fallback=lambda: default_plan(p),
    )
    items = [i.model_dump() for i in plan.items]
    await mem.status.update("plan", {"day": day, "items": items, "hourly": {}})
    await mem.stream.add(
        "plan", f"{p.name}'s plan for day {day}: {describe(items)}", importance=0.3
    )
    return plan


async def decompose_hour(mem: AgentMemory, llm: LLMGateway, hour: int) -> HourlyPlan | None:
    """Split the planned activity of `hour` into steps, stored under plan['hourly'][hour]."""
    plan = await mem.status.get("plan", default={})
    item = activity_at(plan, hour)
    if item is None:
        return None
    p = await persona(mem)
    steps = await llm.json(
        messages(
            "hourly_plan",
            p.system(),
            name=p.name,
            activity=item["activity"],
            location=item["location"],
            hour=hour,
        ),
        HourlyPlan,
        task="hourly_plan",
        context={
            "name": p.name,
            "activity": item["activity"],
            "location": item["location"],
            "hour": hour,
        },
        seed=mem.agent_id * 100003 + hour,
        fallback=lambda: HourlyPlan(
            steps=[{"minute": 0, "duration_min": 60, "action": item["activity"]}]
        ),
    )
    hourly = dict(plan.get("hourly", {}))
    hourly[str(hour)] = [s.model_dump() for s in steps.steps]
    await mem.status.update("plan", {**plan, "hourly": hourly})
    return steps
