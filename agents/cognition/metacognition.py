"""Meta-cognition of the cognitive memory profile (L4) as a reflection by the run's model.

The model reads a report on the agent's own memory (novelty of what it perceives, its
recent observations, what consolidation found, working memory's evictions) and answers a
strategy: attention's interval and importance threshold and consolidation's interval, each
within a range around the configured cadence (¼–4×, as the rules version keeps it). An
answer outside those ranges or repeating the prompt's example numbers fails the task's
meaning check and is re-asked, then replaced by the rules reflection
(`rules_metacognition`). On the `rules` provider (not a language model) the rules policy
answers with that same rules reflection. Every pass is counted per answer source under the
task `metacognition`, and the source ends the reflection the agent's L4 log keeps.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import Field

from societas.agents.cognition.prompts import render
from societas.agents.llm.answer_checks import Said
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import Reply
from societas.memory.architectures.cognitive import (
    CognitiveConfig,
    MetaReport,
    Strategy,
    Trigger,
    rules_metacognition,
)

TASK = "metacognition"
IMPORTANCE_RANGE = (0.5, 1.0)  # below this, attention would fire on nearly every event
OBSERVATIONS = 8  # newest observations the report lists
# The prompt's example answer; numbers chosen so that an answer repeating them is a copy.
EXAMPLE: dict[str, Any] = {
    "reflection": "<one or two sentences on how the memory is doing>",
    "attention_every": 7,
    "attention_importance": 0.65,
    "consolidation_every": 33,
}
SETTINGS = ("attention_every", "attention_importance", "consolidation_every")


class MetaStrategy(Reply):
    """The model's reflection on its memory and the settings it chooses (null: unchanged)."""

    reflection: Said = Field(min_length=1, max_length=1000)
    attention_every: int | None = Field(None, ge=1, le=10_000)
    attention_importance: float | None = Field(None, ge=0.0, le=1.0)
    consolidation_every: int | None = Field(None, ge=1, le=100_000)


def cadence_range(base: int | None) -> list[int] | None:
    """[low, high] a cadence may move within: ¼–4× the configured one (None: not set)."""
    return None if base is None else [max(1, math.ceil(base / 4)), 4 * base]


def context_of(report: MetaReport) -> dict[str, Any]:
    """The call's structured inputs: the report, the settings now, their allowed ranges and
    the prompt's example (what the meaning check and the rules policy read)."""
    return {
        "novelty": round(report.novelty, 4),
        "events": report.events,
        "observations": report.observations[-OBSERVATIONS:],
        "consolidations": report.consolidations,
        "new_facts": report.new_facts,
        "known_facts": report.known_facts,
        "evictions": report.evictions,
        "attention_every": report.attention.every,
        "attention_importance": report.attention.importance_at,
        "consolidation_every": report.consolidation.every,
        "base_attention_every": report.base.attention.every,
        "base_consolidation_every": report.base.consolidation.every,
        "ranges": {
            "attention_every": cadence_range(report.base.attention.every),
            "attention_importance": list(IMPORTANCE_RANGE),
            "consolidation_every": cadence_range(report.base.consolidation.every),
        },
        "example": {k: EXAMPLE[k] for k in SETTINGS},
    }


def report_of(ctx: dict[str, Any]) -> MetaReport:
    """The report a call's context describes (what the rules policy reflects on)."""
    base = CognitiveConfig.model_construct(
        attention=Trigger(every=ctx.get("base_attention_every")),
        consolidation=Trigger(every=ctx.get("base_consolidation_every")),
    )
    return MetaReport(
        agent_id=0,
        novelty=float(ctx.get("novelty", 1.0)),
        events=int(ctx.get("events", 0)),
        observations=[str(o) for o in ctx.get("observations") or []],
        consolidations=int(ctx.get("consolidations", 0)),
        new_facts=int(ctx.get("new_facts", 0)),
        known_facts=int(ctx.get("known_facts", 0)),
        evictions=int(ctx.get("evictions", 0)),
        attention=Trigger(
            every=ctx.get("attention_every"), importance_at=ctx.get("attention_importance")
        ),
        consolidation=Trigger(every=ctx.get("consolidation_every")),
        base=base,
    )


def rules_answer(ctx: dict[str, Any]) -> dict[str, Any]:
    """The rules policy's answer: `rules_metacognition` on the context's report."""
    return rules_metacognition(report_of(ctx)).model_dump()


def _settings_lines(ctx: dict[str, Any]) -> str:
    lines = []
    for key in SETTINGS:
        allowed = ctx["ranges"][key]
        if allowed is None:
            lines.append(f"- {key}: not used (keep null)")
        else:
            lines.append(f"- {key}: {ctx[key]} (allowed {allowed[0]} to {allowed[1]})")
    return "\n".join(lines)


def _report_lines(ctx: dict[str, Any]) -> str:
    seen = "\n".join(f"  - {o}" for o in ctx["observations"]) or "  - (none)"
    return "\n".join(
        [
            f"- novelty of what is perceived: {ctx['novelty']:.2f} over {ctx['events']} events "
            "(1 = all new, 0 = all repeated)",
            f"- recent observations:\n{seen}",
            f"- consolidation passes: {ctx['consolidations']}, new facts found: "
            f"{ctx['new_facts']}, facts known: {ctx['known_facts']}",
            f"- working memory items let go: {ctx['evictions']}",
        ]
    )


def prompt(ctx: dict[str, Any], name: str = "the person") -> str:
    """The task's prompt for a call's context."""
    return render(
        TASK,
        name=name,
        example=json.dumps(EXAMPLE),
        report=_report_lines(ctx),
        settings=_settings_lines(ctx),
    )


async def reflect(llm: LLMGateway, report: MetaReport, seed: int = 0) -> Strategy:
    """The agent's meta-cognition through the gateway: the model's strategy (rules when it
    never gives a valid one), its reflection ending with the answer's source."""
    ctx = context_of(report)
    rules = rules_metacognition(report)
    answer = await llm.json(
        [{"role": "user", "content": prompt(ctx)}],
        MetaStrategy,
        task=TASK,
        context=ctx,
        seed=seed * 7919 + report.agent_id,
        fallback=lambda: MetaStrategy.model_validate(rules.model_dump()),
    )
    return Strategy(
        reflection=f"{answer.reflection} (answer source: {answer.answer_source})",
        attention_every=answer.attention_every,
        attention_importance=answer.attention_importance,
        consolidation_every=answer.consolidation_every,
    )
