"""Importance rating (Generative Agents' poignancy, 1..10 stored as 0..1), batched per call.

A language model's batch carries two attention-check items at seeded places, one from each
end of the scale: a model that rates the mundane one above `MUNDANE_MAX` or the poignant one
below `POIGNANT_MIN` is not rating, so the batch is re-asked and then falls back (meaning
check `missed_anchor`). Their ratings are never stored. The rules policy is not asked them:
it is deterministic code, not a respondent that may not attend. `llm.attention_checks: false`
asks none.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from societas.agents.cognition.prompts import render
from societas.agents.llm.batching import batch_json, with_checks
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import ImportanceScore
from societas.memory import AgentMemory

FALLBACK_SCORE = 3  # when a batch never validates: a mildly mundane memory
# Attention checks: moments at the scale's two ends, told as a memory (no one named: a batch
# may hold several people's memories).
MUNDANE = (
    "brushed teeth after breakfast",
    "ate breakfast and had a coffee",
    "took a nap on the sofa",
)
POIGNANT = (
    "marriage ended in a divorce; cried all night",
    "closest friend died in hospital; cried at the news",
    "home burned down in a fire; terrified, crying for hours",
)


async def rate_importance(
    llm: LLMGateway, texts: Sequence[str], name: str = "the person", seed: int | None = None
) -> list[float]:
    """Importance in 0..1 for each text, `llm.config.batch_size` texts per call."""
    return [score for score, _source in await rate_with_source(llm, texts, name, seed)]


async def rate_with_source(
    llm: LLMGateway, texts: Sequence[str], name: str = "the person", seed: int | None = None
) -> list[tuple[float, str]]:
    """(importance in 0..1, answer_source) for each text: where each rating came from."""
    asks_checks = llm.config.attention_checks and not llm.answers_by_rules("importance")
    scores = await batch_json(
        llm,
        list(texts),
        ImportanceScore,
        task="importance",
        instruction=render("importance", name=name),
        context={"name": name},
        seed=seed,
        fallback_item=lambda _t: ImportanceScore(score=FALLBACK_SCORE),
        checks=partial(with_anchors, seed=seed) if asks_checks else None,
    )
    return [(s.score / 10.0, s.answer_source) for s in scores]


def with_anchors(chunk: list[str], seed: int | None) -> tuple[list[str], list[int]]:
    """`chunk` with a mundane and a poignant check at seeded places, and those places."""
    return with_checks(chunk, seed, (MUNDANE, POIGNANT))


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
