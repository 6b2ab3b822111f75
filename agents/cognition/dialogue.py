"""A conversation between two agents of one group memory (standalone use; the runtime routes
the same turns between groups in sub-rounds, see agents/runtime/conversations.py). Turns
alternate (a first) until one ends it or `max_turns`; each participant then remembers its
own summary of it (topic "dialogue", importance rated), which is how news spreads."""

from __future__ import annotations

from pydantic import BaseModel

from societas.agents.cognition.conversation import (
    DEFAULT_MAX_TURNS,
    speak,
    summarize_conversation,
)
from societas.agents.cognition.memorize import ImmediateWriter, MemoryWriter
from societas.agents.cognition.persona import persona
from societas.agents.cognition.relationships import Relation
from societas.agents.llm.gateway import LLMGateway
from societas.memory import AgentMemory


class Utterance(BaseModel):
    """One line of a conversation."""

    speaker: str
    text: str


class Conversation(BaseModel):
    """The turns, and the memory ids written for each participant (agent id -> ids)."""

    turns: list[Utterance]
    memory_ids: dict[int, list[int]]


async def converse(
    llm: LLMGateway,
    a: AgentMemory,
    b: AgentMemory,
    topic: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    location: str | None = None,
    seed: int = 0,
    writer: MemoryWriter | None = None,
) -> Conversation:
    """Alternate turns (a first) until one ends it or `max_turns`; each side remembers a
    summary of it from its own point of view."""
    writer = writer or ImmediateWriter(llm)
    pa, pb = await persona(a), await persona(b)
    sides = ((a, pa, pb), (b, pb, pa))
    history: list[tuple[str, str]] = []
    for turn in range(max_turns):
        mem, me, other = sides[turn % 2]
        out = await speak(
            llm, mem, me, other.name, Relation(), topic or "", history, turn, max_turns, seed=seed
        )
        history.append((me.name, out.utterance))
        if out.end:
            break
    memory_ids: dict[int, list[int]] = {a.agent_id: [], b.agent_id: []}
    if history:
        first: float | None = None  # the first side's tone, which the second must not oppose
        for mem, me, other in sides:
            summary = await summarize_conversation(
                llm,
                me,
                other.name,
                Relation(),
                history,
                topic or "",
                location or "",
                seed=seed,
                other_tone=first,
            )
            if first is None and summary.answer_source != "fallback":  # a fallback's is no tone
                first = summary.tone
            involved = {"related_agents": [other.agent_id]}
            mid = await writer.add(
                mem, "dialogue", summary.summary, location=location, record=involved
            )
            if mid is not None:
                memory_ids[mem.agent_id].append(mid)
    turns = [Utterance(speaker=s, text=t) for s, t in history]
    return Conversation(turns=turns, memory_ids=memory_ids)
