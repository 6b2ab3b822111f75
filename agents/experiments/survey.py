"""Surveys and interviews: put questions to agents through the LLM gateway (task `survey`).

Each agent answers with its persona, its status and memories retrieved for the question in
context. Asking changes nothing in the agent: retrieval for a question does not count as an
access (forgetting), and answers are stored in the agent's memory only when the survey says
`remember: true`. Scheduled surveys run at the end of their tick and write the `surveys`
results table (tick, day, time, survey, agent_id, question_id, answer_text, value,
answer_source, fallback_reason: for a fallback, why the model's replies were refused).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from societas.agents.cognition import prompts
from societas.agents.cognition.persona import named, persona_of
from societas.agents.experiments.checks import SURVEY_SALT, tick_at
from societas.agents.experiments.schema import Question
from societas.agents.llm.survey_checks import named_options, number_read
from societas.agents.llm.tasks import SurveyAnswer
from societas.memory.model.records import SearchRequest

if TYPE_CHECKING:
    from societas.agents.environment import SimTime
    from societas.agents.runtime.engine import GroupEngine
    from societas.memory import GroupMemory

# Status keys that are bookkeeping, or keyed by other agents' ids (which mean nothing to the
# person asked: who they know reaches the prompt as recalled memories, by name).
_HIDDEN = frozenset(
    (
        "social_network", "plan", "knowledge", "home", "work", "position", "type", "category",
        "relationships", "chat_histories", "interactions",
    )
)  # fmt: skip


@dataclass(slots=True)
class Answer:
    """One agent's answer to one question."""

    agent_id: int
    question_id: str
    text: str
    value: float | None
    answer_source: str = "fallback"  # see agents.llm.provenance
    fallback_reason: str | None = None  # a fallback's last problem with the model's answers


def _instructions(q: Question) -> str:
    if q.kind == "likert":
        return f"Answer with a whole number from 1 to {q.scale} as value, and a short reason."
    if q.kind == "choice":
        opts = "; ".join(f"{i}: {o}" for i, o in enumerate(q.options or []))
        return f"Choose one option ({opts}); answer with its text, value = its number."
    if q.kind == "number":
        bounds = (
            f" between {q.min:g} and {q.max:g}" if q.min is not None and q.max is not None else ""
        )
        return f"Answer with a number{bounds} as value."
    return "Answer in one or two sentences; value = null."


def _text(value: Any) -> str:
    """A status value as prompt text; mappings in key order (a restored dict may be sorted)."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return str(value)


def status_for_prompt(values: dict[str, Any], profile: Collection[str] = ()) -> dict[str, Any]:
    """An agent's status `values` as it would describe them: bookkeeping keys, the `profile`
    keys the system prompt already gives, and values that say nothing (empty, unset, a flag
    that is off) left out."""
    return {
        k: v
        for k, v in sorted(values.items())
        if k not in _HIDDEN and k not in profile and _says_something(v)
    }


def _says_something(value: Any) -> bool:
    """False for None, an off flag and an empty text or collection (a zero still says)."""
    if value is None or value is False:
        return False
    return not (isinstance(value, str | dict | list | tuple) and len(value) == 0)


async def _memories(
    memory: GroupMemory, asks: list[tuple[int, Question]], top_k: int
) -> list[list[str]]:
    """Memories per (agent, question), searched in one batch, without counting as access."""
    if top_k <= 0 or not asks:
        return [[] for _ in asks]
    requests = [SearchRequest(agent_id=a, query=q.text, top_k=top_k) for a, q in asks]
    policies = memory.config.policies
    quiet = policies.model_copy(
        update={"forgetting": policies.forgetting.model_copy(update={"enabled": False})}
    )
    config, profiles = memory.config, memory.profiles
    memory.config = config.model_copy(update={"policies": quiet})
    memory.profiles = profiles.quiet()  # forgetting is per agent (its type's profile)
    try:
        hits = await memory.search_many(requests)
    finally:
        memory.config, memory.profiles = config, profiles
    profiles = memory.profiles  # a cognitive agent's prompt holds at most its working memory
    caps = [
        profiles.cognitive(a).working_memory_capacity if profiles.is_cognitive(a) else None
        for a, _ in asks
    ]
    return [[h.text for h in found][:cap] for found, cap in zip(hits, caps, strict=True)]


def _checked(q: Question, reply: SurveyAnswer) -> tuple[str, float | None]:
    """The answer text and a value valid for the question (clamped, option-matched); None
    when the reply holds no usable value (a fallback is never counted as an answer)."""
    text = reply.answer.strip()
    value = reply.value if reply.value is not None and math.isfinite(reply.value) else None
    if q.kind in ("likert", "number") and value is None:
        value = number_read(text, q.text, q.kind)  # no time of day, place or other span
    if value is None and q.kind != "choice":
        return text, None
    if q.kind == "likert":
        assert value is not None
        return text, float(min(q.scale, max(1, round(value))))
    if q.kind == "number":
        assert value is not None
        value = max(q.min, value) if q.min is not None else value
        return text, min(q.max, value) if q.max is not None else value
    if q.kind == "choice":
        options = [o.lower() for o in q.options or []]
        index = options.index(text.lower()) if text.lower() in options else None
        if index is None and value is not None and 0 <= int(value) < len(options):
            index = int(value)
        if index is None and len(named := named_options(text, options)) == 1:
            index = named[0]  # as the meaning check read it: 'strongly support', not 'support'
        return text, None if index is None else float(index)
    return text, None


async def ask(
    engine: GroupEngine,
    asks: list[tuple[int, Question]],
    *,
    memories: int = 3,
    seed: int = 0,
    task: str = "survey",
) -> list[Answer]:
    """Answers of agents to questions: [(agent_id, question)] -> [Answer], in that order
    (`task`: the LLM task it routes as, e.g. `interview`)."""
    assert engine.memory is not None
    memory = engine.memory
    found = await _memories(memory, asks, memories)

    async def one(agent_id: int, q: Question, recalled: list[str]) -> Answer:
        values = memory.export(agent_id)
        person = persona_of(agent_id, values, engine.agents[agent_id].state)
        status = status_for_prompt(values, person.profile)
        if q.attribute is not None:  # the attribute asked about first
            status = {q.attribute: memory.kv_get(agent_id, q.attribute), **status}
        messages = prompts.messages(  # templates: prompts/survey.txt (a scenario may override)
            "survey",
            system=person.system(),
            status=", ".join(f"{k}={_text(v)}" for k, v in status.items()),
            memories="\n".join(f"- {m}" for m in recalled) or "- nothing in particular",
            question=q.text,
            instructions=_instructions(q),
        )
        context = {
            "name": person.name,  # an answer telling of them by name narrates
            "kind": q.kind,
            "question": q.text,
            "scale": q.scale,
            "options": q.options,
            "min": q.min,
            "max": q.max,
            "attribute": q.attribute,
            "status": status,
            "memories": recalled,
            **named(engine.reflector.people),  # an answer may name only them or the prompt's
        }
        reply = await engine.llm.json(
            messages,
            SurveyAnswer,
            task=task,
            context=context,
            seed=seed * 1_000_003 + agent_id,
            fallback=lambda: SurveyAnswer(answer="(no answer)", value=None),
        )
        text, value = _checked(q, reply)
        if reply.answer_source == "fallback":  # "(no answer)" names no option, not even "no"
            value = None
        return Answer(agent_id, q.id, text, value, reply.answer_source, reply.fallback_reason)

    return list(
        await asyncio.gather(*(one(a, q, m) for (a, q), m in zip(asks, found, strict=True)))
    )


async def run_surveys(engine: GroupEngine, tick: int, now: SimTime) -> int:
    """Run the scenario's surveys scheduled at `tick` for this group's agents; rows written."""
    sc, pop = engine.scenario, engine.population
    assert pop is not None
    rows = 0
    for index, survey in enumerate(sc.surveys):
        if tick_at(sc, survey.day, survey.hour) != tick:
            continue
        selected = pop.select(survey.select, SURVEY_SALT + index, sc.seed) & set(engine.agents)
        asks = [(a, q) for a in sorted(selected) for q in survey.questions]
        answers = await ask(engine, asks, memories=survey.memories, seed=sc.seed + tick)
        minutes = int(now.t // 60)
        clock = f"{minutes // 60:02d}:{minutes % 60:02d}"
        for (_, q), ans in zip(asks, answers, strict=True):
            row = (tick, now.day, clock, survey.id, ans.agent_id, q.id, ans.text, ans.value)
            why = ans.fallback_reason if ans.answer_source == "fallback" else None
            engine.results.add("surveys", (*row, ans.answer_source, why))
            if survey.remember:
                agent = engine.agents[ans.agent_id]
                answered = "" if ans.answer_source == "fallback" else f" I answered: {ans.text}"
                await agent.memory.stream.add(  # asked, with no answer: no "(no answer)" said
                    "survey", f"I was asked: {q.text}{answered}", importance=0.3
                )
        rows += len(answers)
    return rows
