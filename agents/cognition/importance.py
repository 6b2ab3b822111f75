"""Importance rating (Generative Agents' poignancy, 1..10 stored as 0..1), batched per call."""

from __future__ import annotations

from collections.abc import Sequence

from societas.agents.cognition.prompts import render
from societas.agents.llm.batching import batch_json
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import ImportanceScore
from societas.memory import AgentMemory

FALLBACK_SCORE = 3  # when a batch never validates: a mildly mundane memory


async def rate_importance(
    llm: LLMGateway, texts: Sequence[str], name: str = "the person", seed: int | None = None
) -> list[float]:
    """Importance in 0..1 for each text, `llm.config.batch_size` texts per call."""
    return [score for score, _source in await rate_with_source(llm, texts, name, seed)]


async def rate_with_source(
    llm: LLMGateway, texts: Sequence[str], name: str = "the person", seed: int | None = None
) -> list[tuple[float, str]]:
    """(importance in 0..1, answer_source) for each text: where each rating came from."""
    scores = await batch_json(
        llm,
        list(texts),
        ImportanceScore,
        task="importance",
        instruction=render("importance", name=name),
        context={"name": name},
        seed=seed,
        fallback_item=lambda _t: ImportanceScore(score=FALLBACK_SCORE),
    )
    return [(s.score / 10.0, s.answer_source) for s in scores]


async def remember(
    mem: AgentMemory,
    llm: LLMGateway,
    topic: str,
    texts: Sequence[str],
    location: str | None = None,
    name: str = "the person",
) -> list[int]:
    """Rate `texts` in one batch and add them to the stream; returns memory ids."""
    importances = await rate_importance(llm, texts, name, seed=mem.agent_id)
    return [
        await mem.stream.add(topic, t, importance=i, location=location)
        for t, i in zip(texts, importances, strict=True)
    ]
