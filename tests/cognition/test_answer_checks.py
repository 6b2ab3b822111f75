"""Free-text answers from a model: filler copied from the prompt ("...", "<what you say>")
is no answer (the gateway re-asks, then falls back), filler entries of a list answer are
dropped, real text with an ellipsis stays, and the rules policy's answers all pass."""

from __future__ import annotations

import json
import random

import pytest
from pydantic import BaseModel, ValidationError

from societas.agents.cognition.attention import Facts
from societas.agents.cognition.conversation import ConversationSummary
from societas.agents.cognition.prompts import template
from societas.agents.llm.answer_checks import is_filler
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.rules import answer
from societas.agents.llm.tasks import (
    AttitudeUpdate,
    DialogueTurn,
    ReflectionInsights,
    ReflectionQuestions,
    Summary,
    SurveyAnswer,
    ThoughtUpdate,
)

from .test_plan_checks import canned

FILLER = [
    "",
    " ",
    "...",
    "…",
    ". . .",
    "<what Ada says now>",
    "{summary}",
    "[answer]",
    "null",
    "Summary.",
    "going to ...",
    "... or null",
    None,
    3,
    "<noun phrase> *",
    "<second question: ",
    "  2, 3}\n\n{",
]
REAL = [
    "Hi Ben.",
    "Well... I am not sure, Ben.",
    "I was ... so tired today",
    "Yes!",
    "ok",
    "The bakery opens at 7.",
]


@pytest.mark.parametrize("text", FILLER)
def test_filler_is_recognised(text) -> None:
    assert is_filler(text)


@pytest.mark.parametrize("text", REAL)
def test_real_text_is_not_filler(text) -> None:
    assert not is_filler(text)


@pytest.mark.parametrize(
    ("schema", "data"),
    [
        (DialogueTurn, {"utterance": "...", "end": False}),
        (DialogueTurn, {"utterance": "<what Ada says now>"}),
        (ThoughtUpdate, {"thought": "...", "emotion": "joy", "intensity": 0.5}),
        (ThoughtUpdate, {"thought": "I am cold", "emotion": "<one of the six>", "intensity": 0}),
        (Summary, {"summary": "<the one sentence>"}),
        (ConversationSummary, {"summary": "...", "tone": 0.5}),
        (SurveyAnswer, {"answer": "<your answer>", "value": None}),
        (ReflectionQuestions, {"questions": ["...", "<second question>"]}),
        (ReflectionInsights, {"insights": [{"text": "...", "evidence": [1]}]}),
    ],
)
def test_a_filler_answer_is_invalid(schema: type[BaseModel], data: dict) -> None:
    with pytest.raises(ValidationError, match="filler|slot copied|at least 1"):
        schema.model_validate(data)


def test_a_survey_answer_may_be_a_number_or_a_bare_word() -> None:
    for text in ("892.7", "none", "No", "3"):
        assert SurveyAnswer.model_validate({"answer": text}).answer == text


def test_filler_entries_of_a_list_answer_are_dropped_the_rest_kept() -> None:
    q = ReflectionQuestions.model_validate({"questions": ["...", "Why does Ada fear floods?"]})
    assert q.questions == ["Why does Ada fear floods?"]
    raw = {"insights": [{"text": "<an insight about Ada>"}, {"text": "Ada fears the river"}]}
    assert [i.text for i in ReflectionInsights.model_validate(raw).insights] == [
        "Ada fears the river"
    ]
    triples = [
        {"subject": "...", "relation": "...", "object": "..."},
        {"subject": "the bakery", "relation": "<verb phrase>", "object": "7 am"},
        {"subject": "the bakery", "relation": "opens at", "object": "7 am"},
    ]
    facts = Facts.model_validate({"facts": triples}).facts
    assert [(f.subject, f.relation, f.object) for f in facts] == [
        ("the bakery", "opens at", "7 am")
    ]
    reason = AttitudeUpdate.model_validate({"attitude": 7, "reason": "..."})
    assert (reason.attitude, reason.reason) == (7.0, "")  # the stance stands, no reason


def test_the_rules_policy_never_answers_with_filler() -> None:
    """Runs on the rules policy stay as they were: every answer validates as before."""
    rng = random.Random(5)
    cases = {
        "dialogue_turn": (DialogueTurn, {"speaker": "Ada", "listener": "Ben", "topic": "storm"}),
        "thought_update": (ThoughtUpdate, {"name": "Ada", "needs": {"hunger": 0.2}}),
        "consolidation": (Summary, {"texts": ["Ada saw the flood", "Ada saw the river rise"]}),
        "reflection_questions": (ReflectionQuestions, {"statements": ["Ada baked bread"], "n": 2}),
        "conversation_summary": (
            ConversationSummary,
            {"name": "Ada", "other": "Ben", "heard": ["The river is rising."], "turns": 2},
        ),
        "reflection_insights": (
            ReflectionInsights,
            {"statements": ["Ada baked bread", "Ada saw the flood"], "question": "Why?", "n": 2},
        ),
        "facts": (Facts, {"texts": ["I noticed Bob at the bakery", "It hit at 7"], "limit": 5}),
    }
    for task, (schema, ctx) in cases.items():
        for seed in range(20):
            raw = answer(task, {**ctx, "seed": rng.random()}, seed)
            assert isinstance(raw, dict)
            out = schema.model_validate(raw)  # raises on filler
            assert getattr(out, "dropped", 0) == 0, (task, raw)  # nothing screened out


async def test_a_filler_utterance_is_reasked_then_the_model_answer_used() -> None:
    bad = json.dumps({"utterance": "<what Ada says now>", "end": False})
    good = json.dumps({"utterance": "The water reached the bakery.", "end": False})
    async with canned([bad, good]) as url:
        gw = LLMGateway({"endpoints": [{"base_url": url, "model": "canned"}], "json_reasks": 1})
        async with gw:
            out = await gw.json([{"role": "user", "content": "Plan your words"}], DialogueTurn)
    assert out.utterance == "The water reached the bakery."
    assert gw.accounting.events["json.invalid"] == 1 and gw.accounting.events["json.reask"] == 1


async def test_filler_entries_dropped_are_counted_per_task() -> None:
    """A valid answer with filler entries: the rest is used, the dropped ones are counted in
    the task's `dropped_items` (run.json's llm_tasks), not as a re-ask."""
    reply = json.dumps({"questions": ["...", "<second question>", "What does Ada fear?"]})
    async with canned([reply]) as url:
        gw = LLMGateway({"endpoints": [{"base_url": url, "model": "canned"}]})
        async with gw:
            out = await gw.json(
                [{"role": "user", "content": "Plan questions"}],
                ReflectionQuestions,
                task="reflection_questions",
            )
    assert out.questions == ["What does Ada fear?"] and out.dropped == 2
    usage = gw.accounting.snapshot()["tasks"]["reflection_questions"]
    assert usage["dropped_items"] == 2 and usage["valid_first_try"] == 1
    assert usage["reasks"] == 0


@pytest.mark.parametrize(
    ("name", "schema"),
    [
        ("conversation_summary", ConversationSummary),
        ("thought_update", ThoughtUpdate),
    ],
)
def test_a_prompts_example_number_sits_at_its_scales_midpoint(
    name: str, schema: type[BaseModel]
) -> None:
    """A model that copies the example's number then says 'neutral', not a warm tone or a
    stance the prompt put there (an example off the midpoint biases every copied answer)."""
    text = template(name).replace("{{", "{").replace("}}", "}")
    example = json.loads(text.split("Reply with ONLY a JSON object: ", 1)[1].splitlines()[0])
    bounded = {
        field: (spec["minimum"], spec["maximum"])
        for field, spec in schema.model_json_schema()["properties"].items()
        if "minimum" in spec and "maximum" in spec
    }
    assert bounded, name
    for field, (low, high) in bounded.items():
        assert example[field] == (low + high) / 2, (name, field, example[field])
