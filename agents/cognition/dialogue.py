"""Dialogue between two agents. Each turn the speaker retrieves from its own memory; at the
end every utterance is written into BOTH agents' streams (topic "dialogue"): this is how
information spreads through the society."""

from __future__ import annotations

from pydantic import BaseModel

from societas.agents.cognition.importance import rate_importance
from societas.agents.cognition.persona import lines, persona, recall
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import DialogueTurn
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
    max_turns: int = 4,
    location: str | None = None,
    seed: int = 0,
) -> Conversation:
    """Alternate turns (a first) until one ends it or `max_turns`; remember it in both."""
    pa, pb = await persona(a), await persona(b)
    sides = ((a, pa, pb), (b, pb, pa))
    turns: list[Utterance] = []
    for turn in range(max_turns):
        mem, me, other = sides[turn % 2]
        query = turns[-1].text if turns else (topic or f"news to tell {other.name}")
        hits = await recall(mem, query, top_k=3)
        history = [[u.speaker, u.text] for u in turns]
        out = await llm.json(
            messages(
                "dialogue_turn",
                me.system(),
                speaker=me.name,
                listener=other.name,
                topic_line=f" about {topic}" if topic else "",
                memories=lines(hits),
                history="\n".join(f"{s}: {t}" for s, t in history) or "(just met)",
            ),
            DialogueTurn,
            task="dialogue_turn",
            context={
                "speaker": me.name,
                "listener": other.name,
                "topic": topic,
                "memories": [h.text for h in hits],
                "history": history,
                "turn": turn,
                "max_turns": max_turns,
            },
            seed=seed * 7919 + mem.agent_id * 31 + turn,
            fallback=lambda: DialogueTurn(utterance="Sorry, I have to go.", end=True),
        )
        turns.append(Utterance(speaker=me.name, text=out.utterance))
        if out.end:
            break
    memory_ids: dict[int, list[int]] = {a.agent_id: [], b.agent_id: []}
    if turns:
        texts = [f"{u.speaker} said: {u.text}" for u in turns]
        importance = await rate_importance(llm, texts, pa.name, seed=seed)
        for mem, other in ((a, pb), (b, pa)):
            for text, imp in zip(texts, importance, strict=True):
                mid = await mem.stream.add(
                    "dialogue",
                    f"Talking with {other.name}: {text}",
                    importance=imp,
                    location=location,
                )
                memory_ids[mem.agent_id].append(mid)
    return Conversation(turns=turns, memory_ids=memory_ids)
