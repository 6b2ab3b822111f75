"""What cognition reads about an agent from its KV memory: profile, needs, plan, attitudes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from societas.agents.cognition.emotions import INTENSITIES, OCC_WORDS, family
from societas.agents.cognition.prompts import render
from societas.agents.llm.meaning import Population
from societas.agents.llm.plan_checks import PLACE_WORDS
from societas.memory import AgentMemory, MemoryHit, MemoryRecord

NEEDS = ("hunger", "energy", "safety", "social")
_ID_SUFFIX = re.compile(r"\s+\d+$")


def plain_name(name: str) -> str:
    """A person's name as prompts show it: without the id a population adds to make names
    unique ('Hugo Adams 7' -> 'Hugo Adams'; a model would read the number as part of it)."""
    return _ID_SUFFIX.sub("", name.strip()) or name


def plain_names(names: Iterable[str]) -> Population:
    """A population's names as prompts show them, sorted, each once: who exists, for the
    meaning check that re-asks an answer naming anyone else."""
    return Population(sorted({plain_name(n) for n in names}))


def named(people: Sequence[str]) -> dict[str, Any]:
    """A call's context entry naming the population (`people`), none when not given."""
    return {"people": people} if people else {}


_PROFILE_KEYS = ("name", "age", "occupation", "personality", "home", "work")


class Persona(BaseModel):
    """A snapshot of the agent's profile, needs, emotion and plan, as prompts and rules see it."""

    agent_id: int
    name: str
    profile: dict[str, Any]
    needs: dict[str, float]
    emotion: str = "calm"
    emotion_intensity: float = 0.0
    plan: dict[str, Any] = Field(default_factory=dict)

    def system(self) -> dict[str, Any]:
        """Fields for the system prompt."""
        shown = {k: v for k, v in self.profile.items() if v not in ("", None)}
        return {"name": self.name, "profile": ", ".join(f"{k}: {v}" for k, v in shown.items())}

    def rules_profile(self) -> dict[str, Any]:
        """The profile with the keys the rules policy reads (home, workplace, occupation)."""
        return {
            **self.profile,
            "home": self.profile.get("home") or "home",
            "workplace": self.profile.get("work") or "",
        }

    def mood(self) -> str:
        """'fear (intensity 0.7)' for prompts."""
        return f"{self.emotion.lower()} (intensity {self.emotion_intensity:.1f})"

    def feeling(self) -> dict[str, Any]:
        """Needs and emotion as the rules policy reads them from a call's context."""
        return {
            "needs": self.needs,
            "emotion": family(self.emotion),
            "emotion_intensity": self.emotion_intensity,
        }

    def places(self) -> str:
        """The places a plan may name, for prompts: 'home: X, work: Y, or a shop, ...'."""
        home, work = self.profile.get("home") or "home", self.profile.get("work")
        own = f"home: {home}" + (f", work: {work}" if work else "")
        return f"{own}, or a shop, a cafe, a park, the shelter"

    def known_places(self) -> list[str]:
        """What a plan's location may contain for the meaning check: the agent's place
        names and the words that name its own places."""
        names = [str(self.profile.get(k) or "") for k in ("home", "work")]
        return [n for n in names if n] + [w for group, _ in PLACE_WORDS for w in group]

    def plan_text(self) -> str:
        """Today's plan in one line ('(no plan yet)' when there is none)."""
        items = self.plan.get("items") or []
        return describe(items) if items else "(no plan yet)"


async def persona(mem: AgentMemory) -> Persona:
    """Read profile, needs, emotion and plan (missing attributes: neutral defaults)."""
    profile = {k: await mem.status.get(k, default="") for k in _PROFILE_KEYS}
    needs = {n: float(await mem.status.get(f"{n}_satisfaction", default=0.5)) for n in NEEDS}
    name = plain_name(str(profile.get("name") or f"agent {mem.agent_id}"))
    profile["name"] = name
    emotion = str(await mem.status.get("emotion_types", default="") or "calm")
    levels = await mem.status.get("emotion", default={}) or {}
    intensity = float(levels.get(family(emotion), 5)) / 10.0 if levels else 0.0
    plan = await mem.status.get("plan", default={}) or {}
    return Persona(
        agent_id=mem.agent_id,
        name=name,
        profile=profile,
        needs=needs,
        emotion=emotion,
        emotion_intensity=max(0.0, min(1.0, intensity)),
        plan=plan if isinstance(plan, dict) else {},
    )


def persona_of(agent_id: int, profile: Mapping[str, Any], state: Mapping[str, Any]) -> Persona:
    """The same snapshot from an agent's profile and hot state (no memory reads): the
    engine's per-tick path. `state` holds the needs, `plan`, `emotion` and `emotion_types`."""
    shown = {k: profile.get(k, "") for k in _PROFILE_KEYS}
    shown["name"] = plain_name(str(shown.get("name") or f"agent {agent_id}"))
    emotion = str(state.get("emotion_types") or "calm")
    levels = state.get("emotion") or {}
    intensity = float(levels.get(family(emotion), 5)) / 10.0 if levels else 0.0
    plan = state.get("plan") or {}
    return Persona(
        agent_id=agent_id,
        name=shown["name"],
        profile=shown,
        needs={n: float(state.get(f"{n}_satisfaction", 0.5)) for n in NEEDS},
        emotion=emotion,
        emotion_intensity=max(0.0, min(1.0, intensity)),
        plan=plan if isinstance(plan, dict) else {},
    )


# The demographic fields the AgentSociety seed's thought and attitude prompts show.
BACKGROUND = (
    "gender",
    "age",
    "race",
    "religion",
    "marriage_status",
    "residence",
    "occupation",
    "education",
    "personality",
    "consumption",
    "family_consumption",
    "income",
    "skill",
)


def _shown(value: Any) -> str:
    """A KV value as the seed's sentence shows it ('unknown' when unset)."""
    if value in ("", None):
        return "unknown"
    return f"{value:.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


async def describe_self(mem: AgentMemory) -> str:
    """The seed's self-description for thought and attitude prompts: demographic fields,
    emotion intensities, current thought and dominant emotion among the 21 words."""
    fields = {k: _shown(await mem.status.get(k, default="")) for k in BACKGROUND}
    levels = await mem.status.get("emotion", default={}) or {}
    intensities = ", ".join(f"{k}: {levels.get(k, 5)}" for k in INTENSITIES)
    return render(
        "self_description",
        **fields,
        intensities=intensities,
        thought=_shown(await mem.status.get("thought", default="")),
        words=", ".join(OCC_WORDS),
        emotion=_shown(await mem.status.get("emotion_types", default="")),
    )


def describe(items: Sequence[dict[str, Any]]) -> str:
    """'7:00 breakfast at home; 9:00 ...' (the place once where the activity names it)."""
    return "; ".join(
        f"{i['start_hour']}:00 {i['activity']}"
        + ("" if str(i["location"]) in str(i["activity"]) else f" at {i['location']}")
        for i in items
    )


def lines(items: Sequence[MemoryHit | MemoryRecord | str], numbered: bool = False) -> str:
    """Memories as prompt lines ('1. text' or '- text'); '(none)' when empty."""
    texts = [i if isinstance(i, str) else i.text for i in items]
    if not texts:
        return "(none)"
    return "\n".join(f"{n}. {t}" if numbered else f"- {t}" for n, t in enumerate(texts, 1))


def fmt_needs(needs: dict[str, float]) -> str:
    """Needs as 'hunger 0.8, energy 0.5'."""
    return ", ".join(f"{k} {v:.1f}" for k, v in needs.items())


# Only stop words: an empty query vector, which the memory ranks by recency + importance alone.
RECENCY_ONLY = "the and of"


async def held(mem: AgentMemory, hits: list[MemoryHit], context: str) -> list[MemoryHit]:
    """What a prompt may show of `hits`: unchanged, or for an agent of the `cognitive` memory
    profile its working memory after the recall (hits reconsolidated into it, at most its
    capacity, strongest first)."""
    cognition = getattr(mem, "cognition", None)
    if cognition is None:
        return hits
    return await cognition.hold_hits(mem.agent_id, hits, context)


async def newest(mem: AgentMemory, n: int, pool: int = 4) -> list[MemoryHit]:
    """The agent's `n` newest memories, oldest first (Generative Agents' 'recent N' read in
    the order lived): today's memories, then any day's, each from one recency-ranked search
    of `pool` × `n` candidates, kept in time order. Not passed through working memory
    (`held`): the caller decides what a prompt shows."""
    top_k = min(1000, max(n, pool * n))
    day = mem.clock.day
    found = await mem.stream.search(RECENCY_ONLY, top_k=top_k, day_range=(day, day))
    if len(found) < n:
        seen = {h.id for h in found}
        more = await mem.stream.search(RECENCY_ONLY, top_k=top_k)
        found += [h for h in more if h.id not in seen]
    return in_time_order(found)[-n:]


def in_time_order(hits: Sequence[MemoryHit]) -> list[MemoryHit]:
    """`hits` oldest first (ties: in the order they were stored)."""
    return sorted(hits, key=lambda h: (h.time, h.id))


async def recall(
    mem: AgentMemory, query: str, top_k: int = 3, today: bool = False, **filters: Any
) -> list[MemoryHit]:
    """Relevant memories first, topped up with recent ones: with sparse (BM25) embeddings a
    query sharing no word with any memory would otherwise retrieve nothing."""
    search = mem.stream.search_today if today else mem.stream.search
    hits = await search(query, top_k=top_k, **filters)
    if len(hits) < top_k:
        seen = {h.id for h in hits}
        more = await search(RECENCY_ONLY, top_k=top_k, **filters)
        hits = [*hits, *(h for h in more if h.id not in seen)][:top_k]
    return await held(mem, hits, query)
