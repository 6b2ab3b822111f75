"""Conversation cognition shared by the runtime's routed conversations and `converse`: one
turn (persona, mood and needs, the relationship, what the speaker retrieves about the other
and the topic, the conversation so far) and the summary each participant remembers (with
the conversation's tone for that participant, which moves the relationship)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from societas.agents.cognition.persona import Persona, fmt_needs, lines, plain_name, recall
from societas.agents.cognition.prompts import messages
from societas.agents.cognition.relationships import Relation
from societas.agents.cognition.short_term import (
    SESSION_IMPORTANCE,
    conversation_record,
    session_context,
    session_memory,
)
from societas.agents.llm.answer_checks import Said
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import DialogueTurn, Reply
from societas.memory import AgentMemory

if TYPE_CHECKING:
    from societas.agents.cognition.memorize import MemoryWriter
    from societas.memory import GroupMemory

DEFAULT_MAX_TURNS = 8


class ConversationSummary(Reply):
    """What one participant remembers of a conversation, and its tone (-1 hostile .. 1 warm)."""

    summary: Said = Field(min_length=1)
    tone: float = Field(0.0, ge=-1.0, le=1.0)


async def about(mem: AgentMemory, other: str, topic: str, sessions: bool = False) -> list[str]:
    """What the speaker retrieves about the other person and the topic; with `sessions`, the
    live session with them first (seed 001's short-term context)."""
    found = [h.text for h in await recall(mem, f"{other} {topic}".strip(), top_k=3)]
    return [*(await session_context(mem, other)), *found] if sessions else found


def describe_relation(rel: Relation) -> str:
    """'closeness 0.4, sentiment +0.2, talked 3 times' for prompts."""
    return (
        f"closeness {rel.closeness:.1f}, sentiment {rel.sentiment:+.1f}, talked {rel.talks} times"
    )


def transcript(history: Sequence[tuple[str, str]]) -> str:
    """'Ann: hi' lines ('(nothing said yet)' when empty)."""
    return "\n".join(f"{s}: {t}" for s, t in history) or "(nothing said yet)"


async def speak(
    llm: LLMGateway,
    mem: AgentMemory,
    me: Persona,
    other: str,
    rel: Relation,
    topic: str,
    history: Sequence[tuple[str, str]],
    turn: int,
    max_turns: int,
    known: Sequence[str] = (),
    seed: int = 0,
    retrieved: Sequence[str] | None = None,
    people: Sequence[str] = (),
) -> DialogueTurn:
    """The speaker's next line: retrieval about `other` and the topic (or `retrieved`, what
    an earlier turn of the same conversation retrieved), plus what it knows; `people` (the
    population's plain names) lets the gateway reject a line naming someone unknown."""
    if retrieved is None:
        retrieved = await about(mem, other, topic)
    memories = [*known, *retrieved]
    other = plain_name(other)
    return await llm.json(
        messages(
            "dialogue_turn",
            me.system(),
            speaker=me.name,
            listener=other,
            topic_line=f" about {topic}" if topic else "",
            relationship=describe_relation(rel),
            mood=me.mood(),
            needs=fmt_needs(me.needs),
            memories=lines(memories),
            history=transcript(history),
        ),
        DialogueTurn,
        task="dialogue_turn",
        context={
            "speaker": me.name,
            "listener": other,
            "topic": topic or None,
            "memories": memories,
            "history": [list(h) for h in history],
            "turn": turn,
            "max_turns": max_turns,
            "closeness": rel.closeness,
            **({"people": people} if people else {}),
            **me.feeling(),
        },
        seed=seed * 7919 + mem.agent_id * 31 + turn,
        fallback=lambda: DialogueTurn(utterance="Sorry, I have to go.", end=True),
    )


async def summarize_conversation(
    llm: LLMGateway,
    me: Persona,
    other: str,
    rel: Relation,
    history: Sequence[tuple[str, str]],
    topic: str = "",
    place: str = "",
    agreement: float = 0.0,
    seed: int = 0,
    other_tone: float | None = None,
    people: Sequence[str] = (),
) -> ConversationSummary:
    """One participant's summary of the conversation and its tone for them; the gateway
    rejects a tone opposite to `other_tone` (the other side's, when already known) or to
    the transcript's own, and, with `people`, a summary naming someone unknown. With no
    usable answer (a fallback) the tone is the relation's sentiment, which it then leaves
    as it was."""
    other = plain_name(other)
    said = [t for s, t in history if plain_name(s) == other]
    return await llm.json(
        messages(
            "conversation_summary",
            me.system(),
            name=me.name,
            other=other,
            place=place or "town",
            topic_line=f" about {topic}" if topic else "",
            relationship=describe_relation(rel),
            history=transcript(history),
        ),
        ConversationSummary,
        task="conversation_summary",
        context={
            "name": me.name,
            "other": other,
            "place": place,
            "topic": topic,
            "heard": said,
            "turns": len(history),
            "agreement": agreement,
            "sentiment": rel.sentiment,
            "lines": [t for _, t in history],
            **({"other_tone": other_tone} if other_tone is not None else {}),
            **({"people": people} if people else {}),
            **me.feeling(),
        },
        seed=seed * 7919 + me.agent_id,
        fallback=lambda: ConversationSummary(  # the feeling in force: no made-up tone
            summary=f"{me.name} talked with {other}.", tone=rel.sentiment
        ),
    )


async def remember_conversation(
    writer: MemoryWriter,
    group: GroupMemory,
    mem: AgentMemory,
    episode: str,
    summary: str,
    heard: Sequence[tuple[str, str]] = (),
    location: str | None = None,
    *,
    other: str = "",
    topic: str = "",
    history: Sequence[tuple[str, str]] = (),
    tone: float | None = None,
    involved: Sequence[int] = (),
) -> None:
    """What one participant remembers of a conversation, each memory recording the others
    `involved` (their ids, the memory's related_agents): with the memory's temporal policy on,
    the other's lines (`remember_turns`, "Bob said: ...") then the summary, linked in the
    order stored by `temporal` associations (memory.temporal); otherwise the summary alone.
    With sessions on (memory.policies.sessions) the summary is a typed `conversation` memory
    with structured content, and the conversation's context (`history`) a `session` memory
    that expires after its TTL."""
    sessions = group.config.policies.sessions
    people = {"related_agents": list(involved)}
    typed = {
        **(conversation_record(episode, summary, other, heard, tone) if sessions.enabled else {}),
        **people,
    }
    session = session_memory(sessions, mem.clock.abs_seconds, episode, other, topic, history, tone)
    if session is not None:
        text, record = session
        await writer.add(
            mem,
            "session",
            text,
            location=location,
            importance=SESSION_IMPORTANCE,
            record={**record, **people},
        )
    policy = group.config.policies.temporal
    if not policy.enabled:
        await writer.add(mem, "dialogue", summary, location=location, record=typed)
        return
    episodes = group.policy_state.episodes

    def stored(memory_id: int, importance: float) -> None:
        episodes.note(mem.agent_id, episode, memory_id)

    lines = [f"{name} said: {text}" for name, text in heard] if policy.remember_turns else []
    for text in lines:
        await writer.add(mem, "dialogue", text, location=location, on_stored=stored, record=people)
    await writer.add(mem, "dialogue", summary, location=location, on_stored=stored, record=typed)
