"""The LLM side of the memory's contradiction check (memory.contradictions): one gateway call
per batch of memory pairs, structured output (one verdict per pair), wired into a group's
memory as `contradiction_judge`. A language model's batch carries four attention checks at
seeded places, two plain contradictions and two pairs of unrelated memories (a judge that
guesses passes one batch in sixteen): a batch that misses any is re-asked, then falls back to
no contradiction (meaning check `missed_check`); their verdicts are never returned. The rules
provider answers it with the memory's rule judge (negation or antonym over shared content
words); it is not a language model and is asked no checks."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from societas.agents.cognition.prompts import render
from societas.agents.llm.batching import batch_messages, batch_schema, with_checks
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.rules import register_rule
from societas.memory.policies.contradictions import rule_contradicts

# Attention checks: pairs whose verdict is plain, told as memories (no one named).
CONTRADICTING = (
    ("the bakery was open all day", "the bakery was not open all day"),
    ("the bridge into town was closed", "the bridge into town was open"),
    ("the shop sold fresh fish today", "the shop did not sell fresh fish today"),
    ("the library was open on sunday", "the library was closed on sunday"),
)
UNRELATED = (
    ("bought bread at the market", "the park was quiet in the evening"),
    ("read a book at home", "the bus to the harbour was late"),
    ("had coffee at the cafe", "the river rose after the rain"),
    ("walked the dog by the lake", "the school bell rang at noon"),
)
# A batch's checks in order, each from its own half of a pool (never the same pair twice):
# contradicting, unrelated, contradicting, unrelated (meaning.py reads them in this order).
CHECK_POOLS = (CONTRADICTING[::2], UNRELATED[::2], CONTRADICTING[1::2], UNRELATED[1::2])


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
    validates, or misses the attention checks, counts as 'no contradiction' for the batch (a
    counted fallback)."""
    pairs = [(str(a), str(b)) for a, b in pairs]
    if not pairs:
        return []
    asked, checks = pairs, list[int]()
    if llm.config.attention_checks and not llm.answers_by_rules("contradiction"):
        asked, checks = with_checks(pairs, seed, CHECK_POOLS)
    schema = batch_schema(ContradictionVerdict, len(asked))
    out = await llm.json(
        batch_messages(
            [pair_text(a, b) for a, b in asked], ContradictionVerdict, render("contradiction"), None
        ),
        schema,
        task="contradiction",
        context={"pairs": [list(p) for p in asked], **({"anchors": checks} if checks else {})},
        seed=seed,
        fallback=lambda: schema(results=[ContradictionVerdict(contradictory=False)] * len(asked)),
    )
    verdicts = out.results  # type: ignore[attr-defined]
    return [v.contradictory for i, v in enumerate(verdicts) if i not in checks]


@register_rule("contradiction")
def _contradiction(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Rules provider: the memory's rule judge for each pair."""
    return {
        "results": [
            {"contradictory": rule_contradicts(str(a), str(b))} for a, b in ctx.get("pairs", [])
        ]
    }
