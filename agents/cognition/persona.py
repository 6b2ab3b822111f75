"""What cognition reads about an agent from its KV memory: profile, needs, plan, attitudes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from societas.memory import AgentMemory, MemoryHit, MemoryRecord

NEEDS = ("hunger", "energy", "safety", "social")
_PROFILE_KEYS = ("name", "age", "occupation", "personality", "home", "work")


class Persona(BaseModel):
    """A snapshot of the agent's profile and needs, as prompts and rules see it."""

    agent_id: int
    name: str
    profile: dict[str, Any]
    needs: dict[str, float]

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


async def persona(mem: AgentMemory) -> Persona:
    """Read profile and needs (missing attributes fall back to neutral defaults)."""
    profile = {k: await mem.status.get(k, default="") for k in _PROFILE_KEYS}
    needs = {n: float(await mem.status.get(f"{n}_satisfaction", default=0.5)) for n in NEEDS}
    name = str(profile.get("name") or f"agent {mem.agent_id}")
    return Persona(agent_id=mem.agent_id, name=name, profile=profile, needs=needs)


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


async def recent(mem: AgentMemory, top_k: int, **filters: Any) -> list[MemoryHit]:
    """The most recent/important memories, whatever their text (GA's 'recent N')."""
    return await mem.stream.search(RECENCY_ONLY, top_k=top_k, **filters)


async def recall(
    mem: AgentMemory, query: str, top_k: int = 3, today: bool = False, **filters: Any
) -> list[MemoryHit]:
    """Relevant memories first, topped up with recent ones: with sparse (BM25) embeddings a
    query sharing no word with any memory would otherwise retrieve nothing."""
    if today:
        hits = await mem.stream.search_today(query, top_k=top_k, **filters)
    else:
        hits = await mem.stream.search(query, top_k=top_k, **filters)
    if len(hits) < top_k:
        seen = {h.id for h in hits}
        more = (
            await mem.stream.search_today(RECENCY_ONLY, top_k=top_k, **filters)
            if today
            else await recent(mem, top_k, **filters)
        )
        hits = [*hits, *(h for h in more if h.id not in seen)][:top_k]
    return hits
