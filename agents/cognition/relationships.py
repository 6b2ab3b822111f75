"""Relationships: each agent's closeness (0..1) and sentiment (-1..1) towards others, kept in
its status memory (KV `relationships`: other id -> {closeness, sentiment, talks, tick}).

Conversations move them; they decide whom an agent seeks out and how readily it believes
what someone tells it (diffusion) or posts (polarization). Friends of the generated social
network start at their tie strength; strangers at 0 closeness, neutral sentiment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from societas.agents.cognition.emotions import valence

DISLIKED = -0.3  # below this sentiment a person is not talked to, nor believed when posting


class Relation(BaseModel):
    """One agent's view of another."""

    closeness: float = Field(0.0, ge=0.0, le=1.0)
    sentiment: float = Field(0.0, ge=-1.0, le=1.0)
    talks: int = Field(0, ge=0)
    tick: int = -1


def relation(
    relationships: Mapping[str, Any], other: int, friend_weight: float | None = None
) -> Relation:
    """The stored relation to `other`, or its starting value (tie strength for friends)."""
    entry = relationships.get(str(other))
    if entry:
        return Relation.model_validate(entry)
    return Relation(closeness=float(friend_weight or 0.0))


def after_conversation(rel: Relation, tone: float, turns: int, tick: int) -> Relation:
    """Closeness grows with each conversation (more with more turns); sentiment moves a third
    of the way towards the conversation's tone (-1 hostile .. 1 warm)."""
    gain = (1.0 - rel.closeness) * min(0.3, 0.04 + 0.02 * turns)
    if tone < -0.3:
        gain = -0.1 * rel.closeness  # a hostile talk pushes apart
    tone = max(-1.0, min(1.0, tone))
    return Relation(
        closeness=round(min(1.0, max(0.0, rel.closeness + gain)), 4),
        sentiment=round(max(-1.0, min(1.0, rel.sentiment + (tone - rel.sentiment) / 3.0)), 4),
        talks=rel.talks + 1,
        tick=tick,
    )


def mood(emotion: str, intensity: float) -> float:
    """-1 (dark) .. 1 (bright): the emotion's valence (a seed word or intensity key) times its
    intensity (0..1)."""
    return valence(emotion) * max(0.0, min(1.0, intensity))


def belief(rel: Relation) -> float:
    """How likely news from this person is believed: trust follows closeness and liking."""
    return max(0.05, min(1.0, 0.45 + 0.5 * rel.closeness + 0.3 * rel.sentiment))


def stance_agreement(mine: Mapping[str, float], theirs: Mapping[str, float]) -> float:
    """-1 .. 1: how close two agents' attitudes (0..10) are on the topics both hold."""
    shared = sorted(set(mine) & set(theirs))
    if not shared:
        return 0.0
    gap = sum(abs(float(mine[t]) - float(theirs[t])) for t in shared) / len(shared)
    return round(1.0 - gap / 2.5, 4) if gap <= 5.0 else -1.0
