"""The LLM side of the memory's contradiction check (memory.contradictions): one gateway call
per batch of memory pairs, structured output (one verdict per pair), wired into a group's
memory as `contradiction_judge`. The rules provider answers it with the memory's rule judge
(negation or antonym over shared content words); it is not a language model."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from societas.agents.cognition.prompts import render
from societas.agents.llm.batching import batch_messages, batch_schema
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.rules import register_rule
from societas.memory.policies.contradictions import rule_contradicts


class ContradictionVerdict(BaseModel):
    """Whether the two memories of one item contradict each other."""

    model_config = ConfigDict(extra="ignore")

    contradictory: bool


def pair_text(a: str, b: str) -> str:
    """One item of the prompt: the two memories, labelled."""
    return f'A: "{" ".join(a.split())}" B: "{" ".join(b.split())}"'


async def judge_contradictions(
    llm: LLMGateway, pairs: Sequence[tuple[str, str]], seed: int = 0
) -> list[bool]:
    """One verdict per pair from ONE call (the memory batches the pairs); a reply that never
    validates counts as 'no contradiction' for the batch (a counted fallback)."""
    pairs = [(str(a), str(b)) for a, b in pairs]
    if not pairs:
        return []
    schema = batch_schema(ContradictionVerdict, len(pairs))
    out = await llm.json(
        batch_messages(
            [pair_text(a, b) for a, b in pairs], ContradictionVerdict, render("contradiction"), None
        ),
        schema,
        task="contradiction",
        context={"pairs": [list(p) for p in pairs]},
        seed=seed,
        fallback=lambda: schema(results=[ContradictionVerdict(contradictory=False)] * len(pairs)),
    )
    return [v.contradictory for v in out.results]  # type: ignore[attr-defined]


@register_rule("contradiction")
def _contradiction(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Rules provider: the memory's rule judge for each pair."""
    return {
        "results": [
            {"contradictory": rule_contradicts(str(a), str(b))} for a, b in ctx.get("pairs", [])
        ]
    }
