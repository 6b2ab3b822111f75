"""Recursive planning (Generative Agents): a day plan in broad strokes on waking, each hour
decomposed into 5-15 minute actions when the day reaches it, and the rest of the day
re-planned after a reaction.

The plan lives in the KV attribute `plan`: {"day", "items": [PlanItem...], "hourly": {hour:
[PlanStep...]}}; every plan, hourly decomposition and re-plan is also remembered in the
stream (topic "plan"), with its importance rated like any memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from societas.agents.cognition.memorize import ImmediateWriter, MemoryWriter
from societas.agents.cognition.persona import (
    Persona,
    describe,
    fmt_needs,
    lines,
    named,
    persona,
    recall,
)
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.plan_checks import FALLBACK_LOCATION
from societas.agents.llm.provenance import mark
from societas.agents.llm.tasks import DailyPlan, HourlyPlan, PlanItem
from societas.memory import AgentMemory

__all__ = [
    "activity_at",
    "decompose_hour",
    "describe",
    "plan_day",
    "replan_rest_of_day",
    "reusable_hour",
    "reuse_hour",
]


def default_plan(p: Persona) -> DailyPlan:
    """Fallback when the model's plan never validates: a plain day, at work when the agent
    has a workplace, else at home; dinner is an hour, the evening is spent at home."""
    home, work = p.profile.get("home") or "home", p.profile.get("work")
    day = (
        PlanItem(start_hour=9, activity="work", location=work)
        if work
        else PlanItem(start_hour=9, activity="look after things at home", location=home)
    )
    return DailyPlan(
        items=[
            PlanItem(start_hour=7, activity="wake up and have breakfast", location=home),
            day,
            PlanItem(start_hour=18, activity="have dinner", location=home),
            PlanItem(start_hour=19, activity="relax at home", location=home),
            PlanItem(start_hour=22, activity="sleep", location=home),
        ]
    )


def _checked(p: Persona, plan: DailyPlan) -> list[dict[str, Any]]:
    """The plan's items with a placeholder location (screened to FALLBACK_LOCATION) at the
    agent's home (items the schema dropped are counted once, by the gateway, in the task's
    `dropped_items`)."""
    home = p.profile.get("home") or FALLBACK_LOCATION
    return [
        {**i.model_dump(), "location": home} if i.location == FALLBACK_LOCATION else i.model_dump()
        for i in plan.items
    ]


def activity_at(plan: dict[str, Any], hour: int) -> dict[str, Any] | None:
    """The plan item in force at `hour` (the last one starting at or before it)."""
    current = None
    for item in plan.get("items", []):
        if item["start_hour"] <= hour:
            current = item
    return current


def action_at(plan: dict[str, Any], hour: int, minute: int) -> dict[str, Any] | None:
    """The decomposed action in force at hour:minute, if the hour was decomposed."""
    current = None
    for step in plan.get("hourly", {}).get(str(hour), []):
        if step["minute"] <= minute:
            current = step
    return current


async def plan_day(
    mem: AgentMemory,
    llm: LLMGateway,
    day: int,
    writer: MemoryWriter | None = None,
    p: Persona | None = None,
    store: bool = True,
    people: Sequence[str] = (),
) -> DailyPlan:
    """Make and store today's plan from profile, needs, mood and relevant memories
    (`store=False`: the caller keeps it, e.g. in hot state written back in a batch);
    `people` (the population's plain names): a plan naming anyone else is re-asked."""
    p = p or await persona(mem)
    hits = await recall(mem, f"{p.name} plans goals today", top_k=5)
    plan = await llm.json(
        messages(
            "daily_plan",
            p.system(),
            name=p.name,
            day=day,
            needs=fmt_needs(p.needs),
            mood=p.mood(),
            memories=lines(hits),
            places=p.places(),
            home=p.profile.get("home") or "home",  # for a scenario's own template
            work=p.profile.get("work") or "none",
        ),
        DailyPlan,
        task="daily_plan",
        context={
            "name": p.name,
            "profile": p.rules_profile(),
            "day": day,
            "places": p.known_places(),
            **p.feeling(),
            **named(people),
        },
        seed=mem.agent_id * 100003 + day,
        fallback=lambda: default_plan(p),
    )
    items = _checked(p, plan)
    plan = mark(DailyPlan(items=items), plan.answer_source)
    if store:
        stored = {"day": day, "items": items, "hourly": {}, "source": plan.answer_source}
        await mem.status.update("plan", stored)
    await (writer or ImmediateWriter(llm)).add(
        mem, "plan", f"{p.name}'s plan for day {day}: {describe(items)}"
    )
    return plan


async def decompose_hour(
    mem: AgentMemory,
    llm: LLMGateway,
    hour: int,
    writer: MemoryWriter | None = None,
    p: Persona | None = None,
    store: bool = True,
    people: Sequence[str] = (),
) -> HourlyPlan | None:
    """Split the planned activity of `hour` into 5-15 minute actions, stored under
    plan['hourly'][hour] (the hour in progress only: earlier hours are in the stream and
    the `plans` table) and remembered; `people` as for `plan_day`."""
    p = p or await persona(mem)
    item = activity_at(p.plan, hour)
    if item is None:
        return None
    steps = await llm.json(
        messages(
            "hourly_plan",
            p.system(),
            name=p.name,
            plan=p.plan_text(),
            mood=p.mood(),
            needs=fmt_needs(p.needs),
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
            **p.feeling(),
            **named(people),
        },
        seed=mem.agent_id * 100003 + hour,
        fallback=lambda: HourlyPlan(  # the hour as planned: no made-up split of it
            steps=[{"minute": 0, "duration_min": 60, "action": item["activity"]}]
        ),
    )
    if store:
        hourly = {str(hour): [s.model_dump() for s in steps.steps]}
        await mem.status.update(
            "plan", {**p.plan, "hourly": hourly, "hourly_source": steps.answer_source}
        )
    await _remember_hour(mem, llm, p, hour, steps, item["location"], writer)
    return steps


def reusable_hour(plan: dict[str, Any], hour: int) -> list[dict[str, Any]] | None:
    """The previous hour's actions when `hour` is a routine continuation of it: the same
    planned activity at the same place, that hour decomposed, and nothing observed since
    (no event, news or re-plan: `plan["observed"]` unset); None when a new call is due."""
    previous = plan.get("hourly", {}).get(str(hour - 1))
    if not previous or plan.get("observed"):
        return None
    now, before = activity_at(plan, hour), activity_at(plan, hour - 1)
    if now is None or before is None:
        return None
    same = (now["activity"], now["location"]) == (before["activity"], before["location"])
    return [dict(step) for step in previous] if same else None


async def reuse_hour(
    mem: AgentMemory,
    llm: LLMGateway,
    hour: int,
    steps: list[dict[str, Any]],
    writer: MemoryWriter | None = None,
    p: Persona | None = None,
) -> HourlyPlan:
    """The previous hour's 5-15 minute actions re-timed to `hour` (no LLM call: a routine
    hour whose answer could not differ), remembered like a decomposition."""
    p = p or await persona(mem)
    out = HourlyPlan(steps=steps)
    location = (activity_at(p.plan, hour) or {}).get("location", "")
    await _remember_hour(mem, llm, p, hour, out, location, writer)
    return out


async def _remember_hour(
    mem: AgentMemory,
    llm: LLMGateway,
    p: Persona,
    hour: int,
    steps: HourlyPlan,
    location: str,
    writer: MemoryWriter | None,
) -> None:
    """Remember an hour's actions (topic "plan") at the planned place."""
    actions = "; ".join(
        f"{hour}:{s.minute:02d} {s.action} ({s.duration_min} min)" for s in steps.steps
    )
    await (writer or ImmediateWriter(llm)).add(
        mem, "plan", f"{p.name}'s plan for {hour}:00: {actions}", location=location
    )


async def replan_rest_of_day(
    mem: AgentMemory,
    llm: LLMGateway,
    day: int,
    hour: int,
    event: str,
    reaction: str,
    new_activity: str,
    location: str,
    writer: MemoryWriter | None = None,
    p: Persona | None = None,
    people: Sequence[str] = (),
) -> DailyPlan:
    """Re-plan from `hour` to the end of the day, starting with `new_activity`; the items
    before `hour` and their hourly decompositions stay. Stored and remembered; `people` as
    for `plan_day`."""
    p = p or await persona(mem)
    old = p.plan.get("items", [])
    kept = [i for i in old if i["start_hour"] < hour]
    later = [i for i in old if i["start_hour"] > hour]
    start = PlanItem(start_hour=hour, activity=new_activity, location=location)
    out = await llm.json(
        messages(
            "replan",
            p.system(),
            name=p.name,
            day=day,
            hour=hour,
            plan=p.plan_text(),
            mood=p.mood(),
            needs=fmt_needs(p.needs),
            event=event,
            reaction=reaction or "react",
            new_activity=new_activity,
            location=location,
            places=p.places(),
        ),
        DailyPlan,
        task="replan",
        context={
            "name": p.name,
            "hour": hour,
            "event": event,
            "new_activity": new_activity,
            "location": location,
            "later": later,
            "places": [*p.known_places(), location],
            "profile": p.rules_profile(),
            **p.feeling(),
            **named(people),
        },
        seed=mem.agent_id * 100003 + day * 24 + hour,
        fallback=lambda: DailyPlan(items=[start, *(PlanItem(**i) for i in later)]),
    )
    rest = [i for i in _checked(p, out) if i["start_hour"] >= hour] or [start.model_dump()]
    if rest[0]["start_hour"] != hour:
        rest.insert(0, start.model_dump())
    items = [*kept, *rest]
    hourly = {h: s for h, s in p.plan.get("hourly", {}).items() if int(h) < hour}
    stored = {"day": p.plan.get("day", day), "items": items, "hourly": hourly}
    await mem.status.update("plan", {**stored, "source": out.answer_source})
    await (writer or ImmediateWriter(llm)).add(
        mem, "plan", f"{p.name} changed plans because {event}: {describe(items)}"
    )
    return mark(DailyPlan(items=[PlanItem(**i) for i in items]), out.answer_source)
