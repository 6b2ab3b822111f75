"""Seed 001's short-term memory, as agents keep it: a conversation's context as a `session`
memory and the activity in progress as a `task` memory, each written with its type's time to
live (`memory.policies.sessions`), so it expires by itself. A later conversation with the
same person, while the session lives, starts from it (`session_context`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from societas.agents.cognition.persona import plain_name
from societas.memory import AgentMemory
from societas.memory.model.content import ConversationContent, SessionContent, TaskContent

if TYPE_CHECKING:
    from societas.agents.cognition.memorize import MemoryWriter
    from societas.memory import GroupMemory
    from societas.memory.policies.configs import SessionPolicy

COUNTED = ("session", "task", "preference")  # typed memories the memory_policies table counts
SESSION_IMPORTANCE = 0.3  # given, not rated: a session is working context, not an experience
TASK_IMPORTANCE = 0.2
KEY_POINTS = 5  # lines of the other's kept as a conversation's key points
TONES = ((0.3, "warm"), (-0.3, "neutral"))  # tone at or above -> word; below both: tense


def count_typed(group: GroupMemory, types: Sequence[str]) -> None:
    """Count the session, task and preference memories just stored (`memory_policies`)."""
    counters = group.policy_state.counters
    for memory_type in types:
        if memory_type in COUNTED:
            key = f"written_{memory_type}"
            counters[key] = counters.get(key, 0) + 1


def expires_at(policy: SessionPolicy, memory_type: str, now: float) -> float | None:
    """When a memory of `memory_type` written `now` expires (None: it does not)."""
    ttls = {str(k): v for k, v in policy.ttl_seconds.items()} if policy.enabled else {}
    return None if memory_type not in ttls else now + ttls[memory_type]


def partner_tag(name: str) -> str:
    """The tag that finds the sessions with one person."""
    return f"with:{plain_name(name)}"[:64]


def tone_word(tone: float) -> str:
    return next((word for at, word in TONES if tone >= at), "tense")


def conversation_record(
    episode: str, summary: str, other: str, heard: Sequence[tuple[str, str]], tone: float | None
) -> dict[str, Any]:
    """A conversation summary's typed-record fields: type `conversation`, structured content."""
    content = ConversationContent(
        conversation_id=episode,
        summary=summary,
        participants=[plain_name(other)] if other else [],
        key_points=[text for _, text in heard][-KEY_POINTS:],
        emotional_context="" if tone is None else tone_word(tone),
    )
    return {"type": "conversation", "metadata": {"content": content.model_dump()}}


def session_memory(
    policy: SessionPolicy,
    now: float,
    episode: str,
    other: str,
    topic: str,
    history: Sequence[tuple[str, str]],
    tone: float | None,
) -> tuple[str, dict[str, Any]] | None:
    """(text, typed-record fields) of the session memory a conversation leaves, or None when
    sessions are off or carry no TTL."""
    until = expires_at(policy, "session", now)
    if until is None or not history:
        return None
    name = plain_name(other)
    content = SessionContent(
        session_id=episode,
        start_time=now,
        last_activity=now,
        context={
            "partner": name,
            "topic": topic,
            "conversation_stage": "ended",
            "mood": "" if tone is None else tone_word(tone),
        },
        conversation_history=[
            {"timestamp": now, "role": plain_name(who), "content": text} for who, text in history
        ],
    )
    last = "; ".join(f"{plain_name(who)}: {text}" for who, text in history[-2:])
    text = f"Talking with {name}{f' about {topic}' if topic else ''}, last said: {last}"
    record = {
        "type": "session",
        "tags": ("session", partner_tag(other)),
        "metadata": {"content": content.model_dump()},
        "expires_at": until,
    }
    return text, record


async def session_context(mem: AgentMemory, other: str) -> list[str]:
    """The live session with `other` (newest), as context for a new conversation."""
    hits = await mem.stream.search(
        plain_name(other), top_k=1, types=("session",), tags=(partner_tag(other),)
    )
    return [f"(earlier, still in mind) {h.text}" for h in hits]


def task_memory(
    policy: SessionPolicy,
    now: float,
    plan: Mapping[str, Any],
    hour: int,
    activity: str,
    category: str,
    place: str | None,
) -> tuple[str, dict[str, Any]] | None:
    """(text, typed-record fields) of the task memory for the activity just started: the day
    plan's items before it are the steps completed, the next ones the next steps, progress
    the share of the day's items done; None when tasks are off."""
    until = expires_at(policy, "task", now)
    if until is None:
        return None
    items = [i for i in plan.get("items") or () if isinstance(i, Mapping)]
    done = [str(i["activity"]) for i in items if int(i.get("start_hour", 0)) < hour]
    upcoming = [str(i["activity"]) for i in items if int(i.get("start_hour", 0)) > hour]
    content = TaskContent(
        task_id=f"{plan.get('day', 0)}-{hour}-{category}",
        task_type=category,
        progress=round(len(done) / len(items), 4) if items else 0.0,
        steps_completed=done[-5:],
        next_steps=upcoming[:3],
        context_variables={"place": place, "hour": hour},
    )
    record = {
        "type": "task",
        "tags": ("task",),
        "metadata": {"content": content.model_dump()},
        "expires_at": until,
    }
    return f"Doing now: {activity}", record


async def note_task(
    writer: MemoryWriter,
    mem: AgentMemory,
    policy: SessionPolicy,
    plan: Mapping[str, Any],
    hour: int,
    activity: str,
    category: str,
    place: str | None,
) -> None:
    """Write the task memory of the activity the agent just started, when tasks are on."""
    task = task_memory(policy, mem.clock.abs_seconds, plan, hour, activity, category, place)
    if task is not None:
        text, record = task
        await writer.add(
            mem, "task", text, location=place, importance=TASK_IMPORTANCE, record=record
        )
