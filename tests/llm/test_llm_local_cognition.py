"""The other cognition prompts on a real language model (SmolLM2-135M on llama-cpp-python's
server, loopback): dialogue, thought, conversation summary, reflection, consolidation,
attitude, fact and talk-decision prompts, rendered as cognition renders them and answered by
the model, give answers with no filler copied from the format line ("...", "<what Ada says now>"),
and most of them are the model's own answers, not fallbacks."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from societas.agents.cognition.attention import Facts
from societas.agents.cognition.conversation import ConversationSummary
from societas.agents.cognition.emotions import OCC_WORDS
from societas.agents.cognition.prompts import messages
from societas.agents.cognition.talk import TalkChoice
from societas.agents.llm.answer_checks import is_filler
from societas.agents.llm.tasks import (
    AttitudeUpdate,
    DialogueTurn,
    ReflectionInsights,
    ReflectionQuestions,
    Summary,
    ThoughtUpdate,
)

pytestmark = pytest.mark.llm

SYSTEM = {"name": "Ada Adams", "profile": "age: 58, occupation: baker, home: home-1"}
MEMORIES = (
    "- Ada saw the river flood the bakery\n"
    "- Ada talked with Ben about the storm\n"
    "- Ada bought apples at the market"
)
NUMBERED = "1. Ada saw the river flood the bakery\n2. Ada talked with Ben about the storm"
SELF = (
    "You are a female, aged 58, belonging to the white race and identifying as christianity. "
    "Your marital status is married, and you currently reside in a suburban area. Your "
    "occupation is baker, and your education level is below bachelor. You are careful, kind, "
    "with a consumption level of 1200 and a family consumption level of medium. Your income is "
    "2500, and you are skilled in baking bread and pastry."
)
PROMPTS: dict[str, tuple[type[BaseModel], dict[str, Any]]] = {
    "dialogue_turn": (
        DialogueTurn,
        {
            "speaker": "Ada",
            "listener": "Ben",
            "topic_line": " about the storm",
            "relationship": "friends",
            "mood": "worried",
            "needs": "safety 0.4",
            "memories": MEMORIES,
            "history": "Ben: The river is rising.",
        },
    ),
    "thought_update": (
        ThoughtUpdate,
        {
            "name": "Ada",
            "words": ", ".join(OCC_WORDS),
            "self_description": SELF,
            "needs": "safety 0.4",
            "memories": MEMORIES,
        },
    ),
    "conversation_summary": (
        ConversationSummary,
        {
            "name": "Ada",
            "other": "Ben",
            "place": "the market",
            "topic_line": " about the storm",
            "relationship": "friends",
            "history": "Ben: The river is rising.\nAda: I saw water in the bakery.",
        },
    ),
    "reflection_questions": (ReflectionQuestions, {"name": "Ada", "n": 2, "statements": MEMORIES}),
    "reflection_insights": (
        ReflectionInsights,
        {"name": "Ada", "n": 2, "question": "What worries Ada?", "statements": NUMBERED},
    ),
    "consolidation": (Summary, {"name": "Ada", "count": 3, "texts": MEMORIES}),
    "attitude_update": (
        AttitudeUpdate,
        {
            "name": "Ada",
            "topic": "the flood barrier",
            "attitude": 5.0,
            "self_description": SELF,
            "memories": MEMORIES,
        },
    ),
    "talk_decision": (
        TalkChoice,
        {
            "name": "Ada",
            "place": "the market",
            "mood": "fear (intensity 0.6)",
            "needs": "safety 0.4, social 0.3",
            "news": "The river flooded the bakery.",
            "people": "1. Ben (closeness 0.6, sentiment +0.3, talked 4 times); remembers: "
            "Ada talked with Ben about the storm\n2. Cleo (closeness 0.0, sentiment +0.0, "
            "talked 0 times); remembers: nothing",
        },
    ),
    "facts": (Facts, {"name": "Ada", "limit": 5, "observations": MEMORIES}),
}


def _texts(answer: BaseModel) -> list[str]:
    """Every free-text value of an answer (nested lists and objects included)."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(answer.model_dump())
    return out


async def test_the_cognition_prompts_get_answers_without_filler(model_gateway) -> None:
    gw = model_gateway(max_tokens=200)
    async with gw:
        for task, (schema, fields) in PROMPTS.items():
            for seed in range(2):
                out = await gw.json(
                    messages(task, SYSTEM, **fields), schema, task=task, seed=seed, fallback=None
                )
                if out is None:  # a fallback: counted below
                    continue
                texts = [t for t in _texts(out) if t]  # an attitude's reason may be ""
                assert not any(is_filler(t) for t in texts), (task, out)
    tasks = gw.accounting.snapshot()["tasks"]
    assert set(tasks) == set(PROMPTS)
    own = sum(t["valid_first_try"] + t["repaired"] + t["valid_after_reask"] for t in tasks.values())
    # not vacuous: the model's own answers, screened and checked, were used for 4 of the 18
    # calls or more (the rest, SmolLM2's cut-off, copied or second-person texts, fell back)
    assert own >= 4, tasks


async def _answers(gw, msgs, schema, task: str, context, unchanged, seeds: int) -> list:
    """The model's answers to one prompt over `seeds` seeds (`unchanged` where it fell back)."""
    async with gw:
        return [
            await gw.json(
                msgs, schema, task=task, context=context, seed=s, fallback=lambda: unchanged
            )
            for s in range(seeds)
        ]


async def test_a_stance_with_nothing_recalled_moves_only_for_a_reason_about_its_topic(
    model_gateway,
) -> None:
    """Asked for Ada's stance with nothing recalled on the topic, the model's answer is kept
    only with a reason that speaks of the topic: SmolLM2 restates her profile ("You are a
    female, aged 58") and, from an example showing 5.0, put every stance at 5.0 as data."""
    prior, topic = 7.5, "the flood barrier"
    fields = {"name": "Ada", "topic": topic, "attitude": f"{prior:.1f}"}
    msgs = messages("attitude_update", SYSTEM, self_description=SELF, memories="", **fields)
    context = {"name": "Ada", "topic": topic, "attitude": prior, "recent": []}
    unchanged = AttitudeUpdate(attitude=prior, reason="unchanged")
    gw = model_gateway(max_tokens=120)
    for out in await _answers(gw, msgs, AttitudeUpdate, "attitude_update", context, unchanged, 2):
        about = {"flood", "barrier", "barriers", "floods"}
        words = set(out.reason.lower().replace(".", " ").split())
        assert out is unchanged or about & words, out
    usage = gw.accounting.snapshot()["tasks"]["attitude_update"]
    assert usage["requests"] >= 2 and usage["json_calls"] == 2, usage


def _trigrams(text: str) -> set[tuple[str, ...]]:
    ws = "".join(c if c.isalnum() else " " for c in text.lower()).split()
    return {tuple(ws[i : i + 3]) for i in range(len(ws) - 2)}


# The self-description a run showed SmolLM2 (describe_self), on an evening with nothing recalled.
ROSA = (
    "You are a female, aged 45, belonging to the white race and identifying as no religion. "
    "Your marital status is single, and you currently reside in a suburban area. Your "
    "occupation is nurse, and your education level is bachelor. You are friendly and "
    "talkative, with a consumption level of 865.71 and a family consumption level of low. Your "
    "income is 1236.73, and you are skilled in caring for patients.\nYour current emotion "
    "intensities (0 meaning not at all, 10 meaning very much): sadness: 5, joy: 5, fear: 5, "
    "disgust: 5, anger: 5, surprise: 5.\nYou have the following thoughts: Currently nothing "
    "good or bad is happening."
)


async def test_a_thought_kept_from_the_model_is_not_its_self_description(model_gateway) -> None:
    """SmolLM2 answered the thought prompt with the self-description it was shown ("You are a
    female, aged 45, belonging to ..."), kept as the day's thought: such an answer is
    re-asked, and only a thought of the model's own is kept."""
    system = {"name": "Rosa Brown", "profile": "age: 45, occupation: nurse, home: home-0"}
    fields = {"name": "Rosa Brown", "words": ", ".join(OCC_WORDS), "needs": "hunger 0.9"}
    msgs = messages("thought_update", system, self_description=ROSA, memories="(none)", **fields)
    context = {"name": "Rosa Brown", "thought": "nothing in particular", "recent": []}
    unchanged = ThoughtUpdate(thought="nothing in particular", emotion="Joy", intensity=0.3)
    gw = model_gateway(max_tokens=120)
    for out in await _answers(gw, msgs, ThoughtUpdate, "thought_update", context, unchanged, 3):
        grams = _trigrams(out.thought)
        assert out is unchanged or len(grams & _trigrams(ROSA)) < 0.6 * len(grams), out
    assert gw.accounting.snapshot()["tasks"]["thought_update"]["json_calls"] == 3
