"""Structured content per memory type: checked when written, its richness feeds importance."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

Unit = Field(0.0, ge=0.0, le=1.0)


class _Content(BaseModel, extra="forbid"):
    """A memory type's structured content; an unknown field is an error."""


class ConversationContent(_Content):
    """What a conversation left: its id, summary, key points, tone, decisions, open issues."""

    conversation_id: str = ""
    summary: str = ""
    participants: list[str] = []
    key_points: list[str] = []
    emotional_context: str = ""
    decisions_made: list[str] = []
    unresolved_issues: list[str] = []


class PreferenceStep(_Content):
    """One point of a preference's timeline: when, the value held, how sure, why."""

    timestamp: float
    preference: float | str | list[str]
    confidence: float = Unit
    context: str = ""


class PreferenceContent(_Content):
    """A preference's evolution: its timeline, the current value, stability and trend."""

    preference_category: str
    evolution_timeline: list[PreferenceStep] = []
    current_preference: float | str | list[str] | None = None
    stability_score: float = Unit
    trend_direction: str = ""


class StyleContent(_Content):
    """A learnt style: progress, what worked, what failed, the rules learnt."""

    style_category: str
    learning_progress: dict[str, Any] = {}
    successful_combinations: list[dict[str, Any]] = []
    failed_attempts: list[dict[str, Any]] = []
    style_rules_learned: list[str] = []


class ContextContent(_Content):
    """A situational context: its data, validity period and what triggers it."""

    context_type: str
    context_data: dict[str, Any] = {}
    validity_period: dict[str, float | str] = {}
    context_triggers: list[str] = []


class SessionContent(_Content):
    """A session's short-term context (expires with its memory): stage, mood, history."""

    session_id: str
    start_time: float = 0.0
    last_activity: float = 0.0
    context: dict[str, Any] = {}
    temporary_data: dict[str, Any] = {}
    conversation_history: list[dict[str, Any]] = []


class TaskContent(_Content):
    """A task in progress (expires with its memory): status, progress, steps done and next."""

    task_id: str
    task_type: str = ""
    status: Literal["pending", "in_progress", "done", "cancelled"] = "in_progress"
    progress: float = Unit
    steps_completed: list[str] = []
    next_steps: list[str] = []
    context_variables: dict[str, Any] = {}


SCHEMAS: dict[str, type[_Content]] = {
    "conversation": ConversationContent,
    "preference": PreferenceContent,
    "style": StyleContent,
    "context": ContextContent,
    "session": SessionContent,
    "task": TaskContent,
}


def check_content(memory_type: str, content: Any) -> None:
    """Raise ValueError (naming the type and field) unless `content` fits the type's schema."""
    schema = SCHEMAS.get(memory_type)
    if schema is None:
        raise ValueError(f"metadata.content: type {memory_type!r} has no structured content")
    try:
        schema.model_validate(content)
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(p) for p in e["loc"])
        raise ValueError(
            f"metadata.content.{where} of a {memory_type} memory: {e['msg']}"
        ) from None


_WORD = re.compile(r"[^\W\d_]{3,}")


def richness(text: str, content: Mapping[str, Any] | None, memory_type: str, words: int) -> float:
    """Content richness in [0, 1]: share of schema fields filled, or distinct words over `words`."""
    schema = SCHEMAS.get(memory_type)
    if content and schema is not None:
        filled = sum(
            1 for name in schema.model_fields if content.get(name) not in (None, "", [], {})
        )
        return filled / len(schema.model_fields)
    return min(1.0, len(set(_WORD.findall(text.lower()))) / words)
