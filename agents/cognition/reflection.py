"""Reflection as in Generative Agents: when the importance accumulated since the last
reflection passes a threshold, ask salient questions about the newest memories (in the order
they were lived; none asked with fewer than `min_recent`), retrieve evidence per question,
infer an insight per question, and store them as `topic="reflection"` memories linked to the
evidence ids."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import BaseModel, Field

from societas.agents.cognition.memorize import ImmediateWriter, MemoryWriter
from societas.agents.cognition.persona import (
    Persona,
    held,
    in_time_order,
    lines,
    named,
    newest,
    persona,
)
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.provenance import combine, mark
from societas.agents.llm.tasks import Insight, ReflectionInsights, ReflectionQuestions
from societas.memory import AgentMemory, MemoryHit
from societas.memory.model.clock import format_time_of_day

# Default trigger, in stored units (rating/10): chosen with benchmarks/cognition.py so that
# a busy agent of the built-in scenarios reflects a few times per simulated day.
DEFAULT_THRESHOLD = 8.0

# Called once per stored insight: (agent id, memory id, text, evidence ids, answer source).
OnInsight = Callable[[int, int, str, list[int], str], None]


class ReflectionConfig(BaseModel):
    """When and how much to reflect (importance in 0..1 units, i.e. rating/10)."""

    threshold: float = Field(
        default=DEFAULT_THRESHOLD, gt=0, description="Accumulated importance trigger."
    )
    n_recent: int = Field(
        default=30, ge=1, description="Newest memories the questions see, oldest first."
    )
    min_recent: int = Field(
        default=5, ge=1, description="Fewer memories than this: no reflection yet."
    )
    n_questions: int = Field(default=3, ge=1, le=10)
    evidence_k: int = Field(default=8, ge=1, description="Memories retrieved per question.")
    n_insights: int = Field(default=1, ge=1, le=10, description="Insights per question.")


class Reflector:
    """Per-agent importance accumulators and the reflection step (state is checkpointable)."""

    def __init__(self, llm: LLMGateway, config: ReflectionConfig | None = None) -> None:
        self.llm = llm
        self.config = config or ReflectionConfig()
        self.accumulated: dict[int, float] = {}
        self.on_insight: OnInsight | None = None
        self.reflections = 0
        # The population's plain names: a question or insight naming anyone else is re-asked.
        self.people: tuple[str, ...] = ()

    def get_state(self) -> dict[str, float]:
        """What a checkpoint keeps (JSON keys): each agent's importance accumulated so far."""
        return {str(k): v for k, v in self.accumulated.items()}

    def set_state(self, data: dict[str, float]) -> None:
        """Back to what `get_state` returned."""
        self.accumulated = {int(k): float(v) for k, v in data.items()}

    def note(self, agent_id: int, importances: list[float] | float) -> None:
        """Add the importance of memories just stored."""
        vals = importances if isinstance(importances, list) else [importances]
        self.accumulated[agent_id] = self.accumulated.get(agent_id, 0.0) + sum(vals)

    def due(self, agent_id: int) -> bool:
        """Whether the agent's accumulated importance passed the threshold."""
        return self.accumulated.get(agent_id, 0.0) >= self.config.threshold

    async def maybe_reflect(self, mem: AgentMemory) -> list[int]:
        """Reflect if due; returns the new reflection memory ids (empty if not due)."""
        return await self.reflect(mem) if self.due(mem.agent_id) else []

    async def reflect(self, mem: AgentMemory, writer: MemoryWriter | None = None) -> list[int]:
        """Questions → retrieval → insights stored as reflections linked to their evidence
        (earlier reflections can be evidence too). Returns the ids stored now (a deferred
        writer stores them at its flush: then the list is empty, `on_insight` reports them).
        With fewer than `min_recent` memories nothing is asked and the importance stays
        accumulated, so the agent reflects once it has lived enough."""
        cfg = self.config
        lived = await newest(mem, cfg.n_recent)
        if len(lived) < cfg.min_recent:
            return []
        recent_hits = in_time_order(await held(mem, lived, "recent"))
        self.accumulated[mem.agent_id] = 0.0
        p = await persona(mem)
        statements = [h.text for h in recent_hits]
        questions = await self.llm.json(
            messages(
                "reflection_questions",
                p.system(),
                name=p.name,
                statements=lines(stamped(recent_hits)),
                n=cfg.n_questions,
            ),
            ReflectionQuestions,
            task="reflection_questions",
            context={
                "name": p.name,
                "statements": statements,
                "n": cfg.n_questions,
                **named(self.people),
            },
            seed=mem.agent_id,
            fallback=lambda: ReflectionQuestions.model_construct(questions=[]),
        )
        found = await asyncio.gather(
            *(self._insights(mem, p, q) for q in questions.questions[: cfg.n_questions])
        )
        insights = distinct([pair for group in found for pair in group])
        asked = questions.answer_source
        if not insights:
            return []
        writer = writer or ImmediateWriter(self.llm)
        ids = []
        for insight, evidence in insights:
            source = combine([asked, insight.answer_source])
            rid = await writer.add(
                mem,
                "reflection",
                insight.text,
                evidence=evidence,
                on_stored=self._stored(mem.agent_id, insight.text, evidence, source),
            )
            if rid is not None:
                ids.append(rid)
        self.reflections += 1
        return ids

    def _stored(
        self, agent_id: int, text: str, evidence: list[int], source: str
    ) -> Callable[[int, float], None]:
        def done(memory_id: int, _importance: float) -> None:
            if self.on_insight is not None:
                self.on_insight(agent_id, memory_id, text, evidence, source)

        return done

    async def _insights(
        self, mem: AgentMemory, p: Persona, question: str
    ) -> list[tuple[Insight, list[int]]]:
        hits = await held(
            mem,
            await mem.stream.search(question, top_k=self.config.evidence_k, expand=True),
            question,
        )
        if not hits:
            return []
        statements = [h.text for h in hits]
        out = await self.llm.json(
            messages(
                "reflection_insights",
                p.system(),
                name=p.name,
                question=question,
                statements=lines(statements, numbered=True),
                n=self.config.n_insights,
            ),
            ReflectionInsights,
            task="reflection_insights",
            context={
                "name": p.name,
                "question": question,
                "statements": statements,
                **named(self.people),
            },
            seed=mem.agent_id,
            fallback=lambda: ReflectionInsights.model_construct(insights=[]),
        )
        result = []
        for ins in out.insights[: self.config.n_insights]:
            evidence = sorted({hits[i - 1].id for i in ins.evidence if 1 <= i <= len(hits)})
            result.append((mark(ins, out.answer_source), evidence))
        return result


def distinct(insights: list[tuple[Insight, list[int]]]) -> list[tuple[Insight, list[int]]]:
    """One insight per text (case and spacing aside), with the evidence of all its copies:
    two questions drawing the same insight give one memory, not two."""
    merged: dict[str, tuple[Insight, list[int]]] = {}
    for insight, evidence in insights:
        key = " ".join(insight.text.lower().split())
        if key in merged:
            first, known = merged[key]
            merged[key] = (first, sorted({*known, *evidence}))
        else:
            merged[key] = (insight, evidence)
    return list(merged.values())


def stamped(hits: list[MemoryHit]) -> list[str]:
    """Memories as the seed shows them to the question prompt: '[day 2 09:30] text'."""
    return [f"[day {h.day} {format_time_of_day(h.t)}] {h.text}" for h in hits]
