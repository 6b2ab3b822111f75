"""The cognitive profile's attention through the LLM: every agent's batch of N raw events
becomes one observation sentence, many agents' batches in one batched call (`batch_json`,
`llm.config.batch_size` items per call). On the `rules` provider the `attention` rule
answers (deterministic, not a language model); a batch that never validates falls back to
the rule-based join of its events (counted by the gateway)."""

from __future__ import annotations

from collections.abc import Sequence

from societas.agents.cognition.prompts import render
from societas.agents.llm.batching import batch_json
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import Summary
from societas.memory.profile_cognitive import default_attention

SEPARATOR = " | "


async def attend(
    llm: LLMGateway, batches: Sequence[Sequence[str]], seed: int | None = None
) -> list[str]:
    """One observation per batch of raw events, in order (batched LLM calls)."""
    items = [SEPARATOR.join(" ".join(e.split()) for e in batch) for batch in batches]
    out = await batch_json(
        llm,
        items,
        Summary,
        task="attention",
        instruction=render("attention", name="the person"),
        context={"name": "the person"},
        seed=seed,
        fallback_item=lambda item: Summary(summary=default_attention(item.split(SEPARATOR))),
    )
    return [s.summary for s in out]
