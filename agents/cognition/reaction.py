"""Reaction to an observed event, and re-planning the rest of the day when the agent reacts."""

from __future__ import annotations

from societas.agents.cognition.importance import remember
from societas.agents.cognition.persona import lines, persona, recall
from societas.agents.cognition.planning import activity_at, describe
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import Reaction
from societas.memory import AgentMemory
from societas.memory.clock import format_time_of_day

RESUME_AFTER_H = 2  # a reaction displaces the plan for this many hours


async def react(
    mem: AgentMemory, llm: LLMGateway, event: str, day: int, hour: int, location: str | None = None
) -> Reaction:
    """Remember the event, decide whether to react; if so insert the new activity at `hour`
    and drop plan items it displaces (the plan resumes RESUME_AFTER_H hours later)."""
    p = await persona(mem)
    await remember(mem, llm, "event", [event], location=location, name=p.name)
    plan = await mem.status.get("plan", default={})
    current = activity_at(plan, hour) or {"activity": "nothing in particular"}
    hits = await recall(mem, event, top_k=3)
    reaction = await llm.json(
        messages(
            "reaction",
            p.system(),
            name=p.name,
            time=format_time_of_day(hour * 3600.0),
            day=day,
            activity=current["activity"],
            event=event,
            memories=lines(hits),
        ),
        Reaction,
        task="reaction",
        context={
            "name": p.name,
            "event": event,
            "activity": current["activity"],
            "needs": p.needs,
            "profile": p.rules_profile(),
        },
        seed=mem.agent_id * 100003 + day * 24 + hour,
        fallback=lambda: Reaction(react=False),
    )
    if reaction.react and reaction.new_activity:
        where = reaction.location or location or current.get("location") or "here"
        kept = [
            i
            for i in plan.get("items", [])
            if i["start_hour"] < hour or i["start_hour"] >= hour + RESUME_AFTER_H
        ]
        new = {"start_hour": hour, "activity": reaction.new_activity, "location": where}
        items = sorted([*kept, new], key=lambda i: i["start_hour"])
        hourly = {h: s for h, s in plan.get("hourly", {}).items() if int(h) < hour}
        await mem.status.update(
            "plan", {"day": plan.get("day", day), "items": items, "hourly": hourly}
        )
        await mem.stream.add(
            "plan",
            f"{p.name} changed plans because {event}: {describe(items)}",
            importance=0.5,
            location=location,
        )
    return reaction
