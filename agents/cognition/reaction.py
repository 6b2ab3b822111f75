"""Reaction to an observed event (a warning, a rumour, a meeting), and re-planning the rest
of the day from that moment when the agent reacts."""

from __future__ import annotations

from collections.abc import Sequence

from societas.agents.cognition.memorize import ImmediateWriter, MemoryWriter
from societas.agents.cognition.persona import Persona, fmt_needs, lines, named, persona, recall
from societas.agents.cognition.planning import activity_at, replan_rest_of_day
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import Reaction
from societas.memory import AgentMemory
from societas.memory.model.clock import format_time_of_day


async def react(
    mem: AgentMemory,
    llm: LLMGateway,
    event: str,
    day: int,
    hour: int,
    location: str | None = None,
    writer: MemoryWriter | None = None,
    importance: float | None = None,
    p: Persona | None = None,
    people: Sequence[str] = (),
) -> Reaction:
    """Remember the event, decide whether to react (persona, plan, mood, needs, memories);
    if so re-plan the rest of the day from `hour`, starting with the new activity; `people`
    (the population's plain names): an answer naming anyone else is re-asked."""
    writer = writer or ImmediateWriter(llm)
    p = p or await persona(mem)
    await writer.add(mem, "event", event, location=location, importance=importance)
    current = activity_at(p.plan, hour) or {"activity": "nothing in particular"}
    hits = await recall(mem, event, top_k=3)
    reaction = await llm.json(
        messages(
            "reaction",
            p.system(),
            name=p.name,
            time=format_time_of_day(hour * 3600.0),
            day=day,
            activity=current["activity"],
            plan=p.plan_text(),
            mood=p.mood(),
            needs=fmt_needs(p.needs),
            event=event,
            memories=lines(hits),
        ),
        Reaction,
        task="reaction",
        context={
            "name": p.name,
            "event": event,
            "activity": current["activity"],
            "profile": p.rules_profile(),
            **p.feeling(),
            **named(people),
        },
        seed=mem.agent_id * 100003 + day * 24 + hour,
        fallback=lambda: Reaction(react=False),
    )
    if reaction.react and reaction.new_activity:
        where = reaction.location or location or current.get("location") or "here"
        await replan_rest_of_day(
            mem,
            llm,
            day,
            hour,
            event,
            reaction.reaction,
            reaction.new_activity,
            where,
            writer=writer,
            p=p,
            people=people,
        )
    return reaction
