"""Questions for the recall benchmark, built from a run's results tables, each with the
memories that answer it (its evidence), so that a retrieval can be scored against them."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Topics of lived experience: what happened, not what the agent later made of it.
EXPERIENCE = frozenset({"dialogue", "activity", "fact", "event", "observation"})
KINDS = ("told", "heard", "activity", "talk")
LATE_TICKS = 6  # evidence may be stored this many ticks after the event (cognitive attention)


@dataclass(frozen=True, slots=True)
class Memory:
    """The fields of one stored memory the questions need."""

    id: int
    agent_id: int
    topic: str
    text: str
    time: float  # simulated seconds since day 0, 00:00


@dataclass(frozen=True, slots=True)
class Question:
    """One question to one agent, and the ids of the memories that answer it."""

    agent_id: int
    kind: str
    text: str
    evidence: frozenset[int]
    evidence_time: float  # time of the newest evidence memory


@dataclass(frozen=True, slots=True)
class Clock:
    """Tick to simulated time, as the scenario counts it."""

    tick_seconds: float
    start_hour: int

    def at(self, tick: int) -> float:
        """Seconds since day 0, 00:00 at the start of `tick`."""
        return self.start_hour * 3600.0 + tick * self.tick_seconds

    def day(self, tick: int) -> int:
        """The simulated day `tick` starts in."""
        return int(self.at(tick) // 86_400)

    def clock_text(self, tick: int) -> str:
        """'14:30' for the start of `tick`."""
        seconds = self.at(tick) % 86_400
        return f"{int(seconds // 3600):02d}:{int(seconds % 3600 // 60):02d}"


def _within(memories: Iterable[Memory], start: float, end: float) -> list[Memory]:
    """Experience memories stored between `start` and `end`."""
    return [m for m in memories if start <= m.time <= end and m.topic in EXPERIENCE]


def _earliest(memories: Sequence[Memory]) -> list[Memory]:
    """The memories stored first among `memories` (one tick's worth)."""
    if not memories:
        return []
    first = min(m.time for m in memories)
    return [m for m in memories if m.time == first]


def _names(text: str, name: str) -> bool:
    """Whether `text` reports talk with `name` (rather than mentions them in passing)."""
    return text.startswith((f"I talked with {name}", f"{name} told me", f"I told {name}")) or (
        not text.startswith(("I talked with", "I told", "Hi "))
        and " told me" not in text[:60]
        and name in text
    )


def _question(agent: int, kind: str, text: str, evidence: Sequence[Memory]) -> Question | None:
    if not evidence:
        return None
    return Question(
        agent, kind, text, frozenset(m.id for m in evidence), max(m.time for m in evidence)
    )


def questions_for(
    agent: int,
    memories: Sequence[Memory],
    tables: Mapping[str, list[dict[str, Any]]],
    names: Mapping[int, str],
    facts: Mapping[str, str],
    clock: Clock,
    rng: random.Random,
    per_kind: int,
) -> tuple[list[Question], int]:
    """Up to `per_kind` questions of each kind for `agent` from the results tables
    (`knowledge`, `agent_state`, `dialogues` rows as dicts), and how many events were drawn
    whose evidence was not found among the agent's memories."""
    late = LATE_TICKS * clock.tick_seconds
    out: list[Question] = []
    unmatched = 0

    def keep(q: Question | None) -> None:
        nonlocal unmatched
        if q is None:
            unmatched += 1
        else:
            out.append(q)

    heard = [r for r in tables["knowledge"] if r["agent_id"] == agent and r["fact"] in facts]
    for row in rng.sample(heard, min(per_kind, len(heard))):
        fact = facts[row["fact"]].rstrip(".")
        when = clock.at(row["tick"])
        lines = [m for m in memories if fact.lower() in m.text.lower()]
        first = _earliest(_within(lines, when - clock.tick_seconds, when + late))
        if row["source"] >= 0:
            source = names[row["source"]]
            told = [m for m in first if source in m.text]
            keep(_question(agent, "told", f"Who told you that {_lower(fact)}?", told))
        keep(
            _question(
                agent, "heard", f"Where were you when you first heard that {_lower(fact)}?", first
            )
        )

    states = [r for r in tables["agent_state"] if r["agent_id"] == agent]
    states.sort(key=lambda r: r["tick"])
    changes = [
        r
        for prev, r in zip([None, *states], states, strict=False)
        if r["activity"] and (prev is None or prev["activity"] != r["activity"])
    ]
    for row in rng.sample(changes, min(per_kind, len(changes))):
        when = clock.at(row["tick"])
        doing = f"is going to {row['activity']}".lower()
        evidence = [m for m in _within(memories, when, when + late) if doing in m.text.lower()]
        at, day = clock.clock_text(row["tick"]), clock.day(row["tick"])
        text = f"What were you doing at {at} on day {day}?"
        keep(_question(agent, "activity", text, evidence))

    talks: dict[tuple[int, int], list[int]] = defaultdict(list)  # (partner, day) -> ticks
    for r in tables["dialogues"]:
        if agent in (r["speaker"], r["listener"]) and r["speaker"] != r["listener"]:
            other = r["listener"] if r["speaker"] == agent else r["speaker"]
            if other >= 0:
                talks[(other, clock.day(r["tick"]))].append(r["tick"])
    pairs = sorted(talks)
    for other, day in rng.sample(pairs, min(per_kind, len(pairs))):
        ticks = talks[(other, day)]
        start, end = clock.at(min(ticks)) - clock.tick_seconds, clock.at(max(ticks)) + late
        evidence = [m for m in _within(memories, start, end) if _names(m.text, names[other])]
        text = f"What did you and {names[other]} talk about on day {day}?"
        keep(_question(agent, "talk", text, evidence))
    return out, unmatched


def _lower(sentence: str) -> str:
    """The sentence as a clause: its first letter in lower case."""
    return sentence[:1].lower() + sentence[1:]


def recall_at(hits: Sequence[int], evidence: frozenset[int], k: int) -> float:
    """Share of the evidence in the top `k` hits, out of what `k` hits could hold."""
    found = len(evidence.intersection(hits[:k]))
    return found / min(k, len(evidence))
