"""The per-agent memory workload of a simulation tick, identical for every side of memory_ops.

Each agent in turn adds 2 memories, searches its memories once (top 3), updates one status key
and reads it back. Texts are seeded; a tick's queries are distinct, so no side can answer a
query from an embedding computed for another agent in the same batch.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

VOCAB = (
    "storm flood river market apples school bridge shelter radio neighbour coffee election tax "
    "bus train fire doctor garden festival rumour bakery harbour church library hospital "
    "teacher fisherman nurse mayor police council budget wage rent farm tractor wheat cattle "
    "concert football museum theatre painting novel poem ferry airport bicycle highway tunnel "
    "vaccine fever clinic pharmacy medicine lawyer court verdict protest strike union factory "
    "engine battery solar wind turbine drought harvest orchard vineyard cheese bread soup "
    "wedding funeral birthday picnic beach island mountain forest lake canoe tent campfire"
).split()
TOPICS = ("activity", "social", "event", "economy", "mobility")
SEED = 20261122
TOP_K = 3
TICK_SECONDS = 1800.0


@dataclass(frozen=True, slots=True)
class Turn:
    """One agent's memory calls in one tick."""

    agent: int
    adds: tuple[tuple[str, str, float], ...]  # (topic, text, importance) x 2
    query: str
    thought: str


def sentence(rng: random.Random) -> str:
    """A five-topic-word memory text."""
    w = rng.sample(VOCAB, 5)
    return f"I saw the {w[0]} near the {w[1]} and talked about {w[2]}, {w[3]} and {w[4]}"


def tick_plan(rng: random.Random, agents: int) -> list[Turn]:
    """Every agent's turn of one tick, in agent order (the same draws on every side)."""
    seen: set[str] = set()
    turns = []
    for a in range(agents):
        adds = tuple((rng.choice(TOPICS), sentence(rng), rng.random()) for _ in range(2))
        while True:
            query = " ".join(rng.sample(VOCAB, 2 + len(seen) // 2000))
            if query not in seen:
                seen.add(query)
                break
        turns.append(Turn(a, adds, query, sentence(rng)))
    return turns


def clock_of(tick: int) -> tuple[int, float]:
    """(day, seconds into the day) of a tick of 30 simulated minutes."""
    return tick // 48, (tick % 48) * TICK_SECONDS


def digest_hits(texts: list[str]) -> str:
    """A short digest of one search's ranked texts (compares the sides' answers)."""
    return hashlib.blake2b("\x1f".join(texts).encode(), digest_size=6).hexdigest()
