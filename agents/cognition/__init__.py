"""Agent cognition: importance, reflection, planning, reaction, talk decisions, dialogue,
thought, attitude and consolidation. Every call goes through the LLM gateway, so the same
code runs on the `rules` policy (not a language model), the bundled emulator, or a real
endpoint."""

from __future__ import annotations

from societas.agents.cognition import rules_cognition as _rules  # noqa: F401 (registers rules)
from societas.agents.cognition.attitude import update_attitude
from societas.agents.cognition.consolidation import consolidate, summarize
from societas.agents.cognition.conversation import (
    ConversationSummary,
    speak,
    summarize_conversation,
)
from societas.agents.cognition.dialogue import Conversation, Utterance, converse
from societas.agents.cognition.importance import rate_importance, remember
from societas.agents.cognition.memorize import ImmediateWriter, MemoryWriter, PendingMemories
from societas.agents.cognition.persona import Persona, persona
from societas.agents.cognition.planning import (
    action_at,
    activity_at,
    decompose_hour,
    plan_day,
    replan_rest_of_day,
    reusable_hour,
    reuse_hour,
)
from societas.agents.cognition.reaction import react
from societas.agents.cognition.reflection import ReflectionConfig, Reflector
from societas.agents.cognition.talk import Candidate, TalkChoice, choose_partner
from societas.agents.cognition.thought import update_thought

__all__ = [
    "Candidate",
    "Conversation",
    "ConversationSummary",
    "ImmediateWriter",
    "MemoryWriter",
    "PendingMemories",
    "Persona",
    "ReflectionConfig",
    "Reflector",
    "TalkChoice",
    "Utterance",
    "action_at",
    "activity_at",
    "choose_partner",
    "consolidate",
    "converse",
    "decompose_hour",
    "persona",
    "plan_day",
    "rate_importance",
    "react",
    "remember",
    "replan_rest_of_day",
    "reusable_hour",
    "reuse_hour",
    "speak",
    "summarize",
    "summarize_conversation",
    "update_attitude",
    "update_thought",
]
