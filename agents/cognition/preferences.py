"""Seed 001's preference evolution, from attitudes: every re-evaluation of a stance adds a
point (value, confidence, why) to that topic's timeline; stability and trend over the last
`window` points say how the preference moves. The timelines live in KV `preferences` (topic
-> the seed's preference content) and each new point is also remembered as a typed
`preference` memory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from societas.memory import AgentMemory
from societas.memory.model.content import PreferenceContent, PreferenceStep

if TYPE_CHECKING:
    from societas.agents.cognition.memorize import MemoryWriter
    from societas.memory.policies.configs import PreferencePolicy

NEUTRAL, SCALE = 5.0, 10.0  # the attitude scale: 0 against .. 10 for
IMPORTANCE = 0.4  # given, not rated: a summary of stances the agent already remembers


def confidence(value: float) -> float:
    """How decided a stance is: its distance from neutral over half the scale, |v − 5| / 5."""
    return round(min(1.0, abs(value - NEUTRAL) / NEUTRAL), 4)


def stability(values: Sequence[float]) -> float:
    """1 − the mean absolute change between consecutive points over the scale (1: unmoved)."""
    if len(values) < 2:
        return 1.0
    steps = [abs(b - a) for a, b in pairwise(values)]
    return round(max(0.0, 1.0 - sum(steps) / len(steps) / SCALE), 4)


def slope(values: Sequence[float]) -> float:
    """Least-squares slope of the values per point (0 for fewer than two)."""
    n = len(values)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, sum(values) / n
    return sum((i - mx) * (v - my) for i, v in enumerate(values)) / sum(
        (i - mx) ** 2 for i in range(n)
    )


def trend(values: Sequence[float], threshold: float) -> str:
    """'towards_for' or 'towards_against' when the slope passes `threshold`, else 'stable'."""
    s = slope(values)
    return "towards_for" if s >= threshold else "towards_against" if s <= -threshold else "stable"


def evolve(
    record: Mapping[str, Any] | None,
    topic: str,
    value: float,
    when: float,
    context: str,
    policy: PreferencePolicy,
) -> PreferenceContent:
    """The topic's preference content with the point (`value` at `when`) added."""
    old = PreferenceContent.model_validate(record) if record else None
    point = PreferenceStep(
        timestamp=when, preference=value, confidence=confidence(value), context=context[:200]
    )
    steps = [*(old.evolution_timeline if old else []), point][-policy.max_points :]
    recent = [s.preference for s in steps[-policy.window :] if isinstance(s.preference, float)]
    return PreferenceContent(
        preference_category=topic,
        evolution_timeline=steps,
        current_preference=value,
        stability_score=stability(recent),
        trend_direction=trend(recent, policy.trend_threshold),
    )


async def note_preference(
    writer: MemoryWriter,
    mem: AgentMemory,
    policy: PreferencePolicy,
    preferences: Mapping[str, Any],
    topic: str,
    value: float,
    context: str = "",
) -> dict[str, Any] | None:
    """Add the re-evaluated stance to `topic`'s timeline and remember it; returns the new KV
    `preferences` (None when preference evolution is off)."""
    if not policy.enabled:
        return None
    content = evolve(preferences.get(topic), topic, value, mem.clock.abs_seconds, context, policy)
    text = (
        f"My preference on {topic} over time: now {value:.1f} of 10, "
        f"{content.trend_direction.replace('_', ' ')}, stability {content.stability_score:.2f}"
    )
    data = content.model_dump()
    record = {"type": "preference", "tags": ("preference",), "metadata": {"content": data}}
    await writer.add(mem, "preference", text, importance=IMPORTANCE, record=record)
    return {**preferences, topic: data}
