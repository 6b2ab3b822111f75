"""The cognitive profile's LLM steps.

- Attention: every agent's batch of N raw events becomes one observation sentence, many
  agents' batches in one batched call (`batch_json`, `llm.config.batch_size` items a call);
  a batch that never validates falls back to the rule-based join of its events (counted).
- Semantic consolidation: every M observations of an agent, (subject, relation, object)
  facts extracted from them (one call), stored in its fact graph and as semantic memories.

On the `rules` provider the `attention` and `facts` rules answer (deterministic, not a
language model)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, model_validator

from societas.agents.cognition.prompts import render
from societas.agents.llm.answer_checks import Answer, is_slot, screen
from societas.agents.llm.batching import batch_json
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import Screened, screened
from societas.memory.architectures.cognitive import default_attention

SEPARATOR = " | "


class Observation(BaseModel):
    """One first-person sentence saying what the person noticed in these events."""

    model_config = ConfigDict(extra="ignore")

    observation: str = Field(min_length=1)


async def attend(
    llm: LLMGateway, batches: Sequence[Sequence[str]], seed: int | None = None
) -> list[str]:
    """One observation per batch of raw events, in order (batched LLM calls)."""
    items = [SEPARATOR.join(" ".join(e.split()) for e in batch) for batch in batches]
    out = await batch_json(
        llm,
        items,
        Observation,
        task="attention",
        instruction=render("attention", name="the person"),
        context={"name": "the person"},
        seed=seed,
        fallback_item=lambda item: Observation(
            observation=default_attention(item.split(SEPARATOR))
        ),
    )
    return [o.observation for o in out]


class FactTriple(BaseModel):
    """One fact: short phrases."""

    subject: Answer = Field(min_length=1, max_length=200)  # "I", "7 am": short is fine
    relation: Answer = Field(min_length=1, max_length=200)
    object: Answer = Field(min_length=1, max_length=200)


class Facts(Screened):
    """What a set of observations implies, as triples (those with a filler part dropped)."""

    facts: list[FactTriple] = Field(max_length=20)

    @model_validator(mode="wrap")
    @classmethod
    def _screen(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        return screened(data, "facts", lambda v: screen(v, _filler_triple), handler)


def _filler_triple(raw: Any) -> bool:
    """A raw triple with a filler subject, relation or object ("...", "<who or what>")."""
    return isinstance(raw, dict) and any(is_slot(raw.get(k)) for k in FactTriple.model_fields)


FACT_LIMIT = 5


async def extract_facts(
    llm: LLMGateway, texts: Sequence[str], seed: int | None = None
) -> list[tuple[str, str, str]]:
    """(subject, relation, object) facts implied by one agent's recent observations."""
    texts = [str(t) for t in texts]
    if not texts:
        return []
    prompt = render(
        "facts",
        name="the person",
        limit=FACT_LIMIT,
        observations="\n".join(f"- {t}" for t in texts),
    )
    out = await llm.json(
        [{"role": "user", "content": prompt}],
        Facts,
        task="facts",
        context={"texts": texts, "limit": FACT_LIMIT},
        seed=seed,
        fallback=lambda: Facts(facts=[]),
    )
    triples = [(f.subject.strip(), f.relation.strip(), f.object.strip()) for f in out.facts]
    return [t for t in triples[:FACT_LIMIT] if all(t)]
