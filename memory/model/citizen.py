"""The default citizen memory config, after AgentSociety's society agent."""

from __future__ import annotations

from societas.memory.model.config import MemoryAttribute, MemoryConfig

_A = MemoryAttribute

CITIZEN_ATTRIBUTES: list[MemoryAttribute] = [
    _A(name="type", type="str", default_or_value="citizen", description="Agent type"),
    _A(
        name="name",
        type="str",
        default_or_value="",
        description="Full name",
        whether_embedding=True,
        embedding_template="My name is {}",
    ),
    _A(name="age", type="int", default_or_value=30, description="Age in years"),
    _A(name="gender", type="str", default_or_value="", description="Gender"),
    _A(
        name="education",
        type="str",
        default_or_value="",
        description="Highest education",
        whether_embedding=True,
        embedding_template="My education is {}",
    ),
    _A(
        name="occupation",
        type="str",
        default_or_value="",
        description="Occupation",
        whether_embedding=True,
        embedding_template="I work as a {}",
    ),
    _A(name="income", type="float", default_or_value=0.0, description="Monthly income"),
    _A(name="consumption", type="float", default_or_value=0.0, description="Monthly spending"),
    _A(name="currency", type="float", default_or_value=0.0, description="Money on hand"),
    _A(
        name="personality",
        type="str",
        default_or_value="",
        description="Personality",
        whether_embedding=True,
        embedding_template="My personality is {}",
    ),
    _A(name="home", type="str", default_or_value="", description="Home place id"),
    _A(name="work", type="str", default_or_value="", description="Workplace id"),
    _A(name="position", type="str", default_or_value="", description="Current place id"),
    _A(
        name="hunger_satisfaction",
        type="float",
        default_or_value=0.9,
        description="Need satisfaction 0..1",
    ),
    _A(
        name="energy_satisfaction",
        type="float",
        default_or_value=0.9,
        description="Need satisfaction 0..1",
    ),
    _A(
        name="safety_satisfaction",
        type="float",
        default_or_value=0.4,
        description="Need satisfaction 0..1",
    ),
    _A(
        name="social_satisfaction",
        type="float",
        default_or_value=0.6,
        description="Need satisfaction 0..1",
    ),
    _A(name="current_need", type="str", default_or_value="none", description="Most urgent need"),
    _A(
        name="emotion",
        type="dict",
        default_or_value={
            "sadness": 5,
            "joy": 5,
            "fear": 5,
            "disgust": 5,
            "anger": 5,
            "surprise": 5,
        },
        description="Emotion intensities 0..10",
    ),
    _A(
        name="emotion_types",
        type="str",
        default_or_value="Relief",
        description="Dominant emotion word",
        whether_embedding=True,
        embedding_template="I feel {}",
    ),
    _A(
        name="thought",
        type="str",
        default_or_value="Currently nothing good or bad is happening",
        description="Current thought",
        whether_embedding=True,
        embedding_template="{}",
    ),
    _A(name="attitude", type="dict", default_or_value={}, description="Topic -> stance 0..10"),
    _A(name="plan", type="dict", default_or_value={}, description="The current plan"),
    _A(
        name="social_network",
        type="list",
        default_or_value=[],
        description="Friend agent ids with relation strength",
    ),
    _A(
        name="chat_histories",
        type="dict",
        default_or_value={},
        description="Friend id -> dialogue so far",
    ),
    _A(
        name="interactions",
        type="dict",
        default_or_value={},
        description="Friend id -> interaction log",
    ),
    _A(name="knowledge", type="list", default_or_value=[], description="Fact ids known"),
]

CITIZEN_MEMORY_CONFIG = MemoryConfig.from_list(CITIZEN_ATTRIBUTES)
