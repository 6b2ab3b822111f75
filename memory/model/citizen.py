"""The default citizen memory config, after AgentSociety's society agent."""

from __future__ import annotations

from typing import Any

from societas.memory.model.config import MemoryAttribute, MemoryConfig


def _embedded(name: str, default: str, description: str, template: str) -> MemoryAttribute:
    """A str attribute searched by KV search, embedded through `template`."""
    return MemoryAttribute(
        name=name,
        type="str",
        default_or_value=default,
        description=description,
        whether_embedding=True,
        embedding_template=template,
    )


def _plain(name: str, type: str, default: Any, description: str) -> MemoryAttribute:
    """An attribute that is not embedded."""
    return MemoryAttribute(name=name, type=type, default_or_value=default, description=description)


_EMOTIONS = ("sadness", "joy", "fear", "disgust", "anger", "surprise")

CITIZEN_ATTRIBUTES: list[MemoryAttribute] = [
    _plain("type", "str", "citizen", "Agent type"),
    _embedded("name", "", "Full name", "My name is {}"),
    _plain("age", "int", 30, "Age in years"),
    _plain("gender", "str", "", "Gender"),
    _embedded("education", "", "Highest education", "My education is {}"),
    _embedded("occupation", "", "Occupation", "I work as a {}"),
    _plain("income", "float", 0.0, "Monthly income"),
    _plain("consumption", "float", 0.0, "Monthly spending"),
    _plain("currency", "float", 0.0, "Money on hand"),
    _embedded("personality", "", "Personality", "My personality is {}"),
    _plain("home", "str", "", "Home place id"),
    _plain("work", "str", "", "Workplace id"),
    _plain("position", "str", "", "Current place id"),
    _plain("hunger_satisfaction", "float", 0.9, "Need satisfaction 0..1"),
    _plain("energy_satisfaction", "float", 0.9, "Need satisfaction 0..1"),
    _plain("safety_satisfaction", "float", 0.4, "Need satisfaction 0..1"),
    _plain("social_satisfaction", "float", 0.6, "Need satisfaction 0..1"),
    _plain("current_need", "str", "none", "Most urgent need"),
    _plain("emotion", "dict", dict.fromkeys(_EMOTIONS, 5), "Emotion intensities 0..10"),
    _embedded("emotion_types", "Relief", "Dominant emotion word", "I feel {}"),
    _embedded("thought", "Currently nothing good or bad is happening", "Current thought", "{}"),
    _plain("attitude", "dict", {}, "Topic -> stance 0..10"),
    _plain("plan", "dict", {}, "The current plan"),
    _plain("social_network", "list", [], "Friend agent ids with relation strength"),
    _plain("chat_histories", "dict", {}, "Friend id -> dialogue so far"),
    _plain("interactions", "dict", {}, "Friend id -> interaction log"),
    _plain("knowledge", "list", [], "Fact ids known"),
]

CITIZEN_MEMORY_CONFIG = MemoryConfig.from_list(CITIZEN_ATTRIBUTES)
