"""What the built-in blocks keep per agent, declared by each block: the status attributes it
adds to the memory schema and the hot keys it reads or writes every tick (kept in
`agent.state`, written back in batches). The core `Agent` knows none of them."""

from __future__ import annotations

from dataclasses import dataclass

from societas.memory import CITIZEN_ATTRIBUTES, MemoryAttribute


@dataclass(frozen=True, slots=True)
class BlockState:
    """The attributes a block adds to the schema and the hot keys it uses every tick."""

    block: str
    attributes: tuple[MemoryAttribute, ...] = ()
    hot_keys: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # scratch keys ("_...") that live across ticks (checkpointed)


_A = MemoryAttribute
NEEDS = BlockState(
    "needs",
    hot_keys=(
        "hunger_satisfaction",
        "energy_satisfaction",
        "safety_satisfaction",
        "social_satisfaction",
        "current_need",
    ),
)
MOBILITY = BlockState("mobility", hot_keys=("position",), kept=("_target",))
PLAN = BlockState(
    "plan",
    attributes=(
        _A(name="trust_government", type="float", default_or_value=0.5, description="0..1"),
        _A(name="activity", type="str", default_or_value="sleep", description="Current activity"),
        _A(name="category", type="str", default_or_value="sleep", description="Activity kind"),
    ),
    hot_keys=("activity", "category", "plan", "trust_government"),
    kept=("_heard_news",),
)
ECONOMY = BlockState(
    "economy",
    attributes=(
        _A(name="work_hours", type="float", default_or_value=0.0, description="Hours/day worked"),
        _A(name="worked_today", type="float", default_or_value=0.0, description="Hours today"),
        _A(name="transfers", type="float", default_or_value=0.0, description="Monthly transfers"),
    ),
    hot_keys=("currency", "income", "consumption", "work_hours", "worked_today", "transfers"),
    kept=("_econ_day",),
)
EVACUATION = BlockState(
    "plan",
    attributes=(
        _A(name="evacuating", type="bool", default_or_value=False, description="At the shelter"),
        _A(name="alert", type="bool", default_or_value=False, description="Aware of danger"),
    ),
    hot_keys=("evacuating", "alert"),
)
SOCIAL = BlockState(
    "social",
    attributes=(
        _A(
            name="relationships",
            type="dict",
            default_or_value={},
            description="Other agent id -> {closeness 0..1, sentiment -1..1, talks, tick}",
        ),
    ),
    hot_keys=("knowledge", "relationships", "emotion", "emotion_types"),
    kept=("_exposed",),
)
COGNITION = BlockState(
    "cognition",
    attributes=tuple(
        _A(name=k, type="str", default_or_value="", description=f"{k.replace('_', ' ')} (seed)")
        for k in ("race", "religion", "marriage_status", "residence", "skill", "family_consumption")
    ),
    hot_keys=("attitude", "emotion", "emotion_types"),
    kept=("_emotion", "_attitude_source"),  # topic -> answer_source of the stance in force
)

PREFERENCES = BlockState(  # memory.policies.preferences: each attitude topic's timeline
    "cognition",
    attributes=(
        _A(name="preferences", type="dict", default_or_value={}, description="Topic -> timeline"),
    ),
    hot_keys=("preferences",),
)

BUILTIN: tuple[BlockState, ...] = (
    NEEDS,
    MOBILITY,
    PLAN,
    ECONOMY,
    EVACUATION,
    SOCIAL,
    COGNITION,
    PREFERENCES,
)


def attributes_of(states: tuple[BlockState, ...] = BUILTIN) -> list[MemoryAttribute]:
    """The citizen attributes plus every block's own, in declaration order."""
    return [*CITIZEN_ATTRIBUTES, *(a for s in states for a in s.attributes)]


def hot_keys_of(states: tuple[BlockState, ...] = BUILTIN) -> tuple[str, ...]:
    """Every block's hot keys, each once, in declaration order."""
    return tuple(dict.fromkeys(k for s in states for k in s.hot_keys))


def kept_of(states: tuple[BlockState, ...] = BUILTIN) -> frozenset[str]:
    """Every block's scratch keys that a checkpoint keeps."""
    return frozenset(k for s in states for k in s.kept)
