"""Consolidation summaries for the tiering policy: several memories → one summary memory
linked to its sources, so the sources can age out to a colder tier."""

from __future__ import annotations

from collections.abc import Sequence

from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import Summary
from societas.memory import AgentMemory


async def summarize(
    llm: LLMGateway, texts: Sequence[str], name: str = "the person", seed: int = 0
) -> str:
    """One summary sentence for `texts` (fallback: the first texts joined)."""
    texts = [str(t) for t in texts]
    out = await llm.json(
        messages(
            "consolidation",
            {"name": name, "profile": "n/a"},
            name=name,
            count=len(texts),
            texts="\n".join(f"- {t}" for t in texts),
        ),
        Summary,
        task="consolidation",
        context={"name": name, "texts": texts},
        seed=seed,
        fallback=lambda: Summary(summary="; ".join(texts[:3])[:500] or "(nothing)"),
    )
    return out.summary


async def consolidate(
    mem: AgentMemory, llm: LLMGateway, memory_ids: Sequence[int], name: str = "the person"
) -> int:
    """Write a `topic="summary"` memory for `memory_ids`, linked to them; returns its id."""
    records = await mem.stream.get_by_ids(list(memory_ids))
    if not records:
        raise ValueError("consolidate: memory_ids must name at least one memory, got []")
    text = await summarize(llm, [r.text for r in records], name, seed=mem.agent_id)
    sid = await mem.stream.add(
        "summary", text, importance=max(r.importance for r in records), location=records[0].location
    )
    await mem.stream.add_cognition_to_memory([r.id for r in records], sid)
    return sid
