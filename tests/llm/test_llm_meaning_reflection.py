"""A reflection's insight is the person thinking over their own life: one that talks as an
interviewer or to one ("allow us to learn from you", "This will help you understand me", "Let
us know ...") or that reads back the plan its statements list ("the plan for day 1: 7:00 wake
up", "7:00 wake up, 8:00 breakfast") is refused; insights said as "I" or as the town's "we",
with a generic "you", or that speak of a plan or a clock time in the person's words are kept;
the plan memory's layout ("Tom's plan for day 0: 6:00 ...") is no one's words in any answer."""

from __future__ import annotations

import pytest

from societas.agents.cognition.persona import lines
from societas.agents.cognition.prompts import messages
from societas.agents.llm.meaning import Prompt, check
from societas.agents.llm.structured import schema_of
from societas.agents.llm.tasks import ReflectionInsights, ReflectionQuestions, SurveyAnswer

NAME = "Will Garcia"
PROFILE = "name: Will Garcia, age: 20, occupation: unemployed, personality: calm and careful"
PEOPLE = (NAME, "Leo Adams", "Ana Lopez")
QUESTION = "What is the most important information that will allow us to learn from you?"
# The statements SmolLM2 drew its insight from (cog-31), and the agent's later days.
PLANNED = [
    "Will Garcia talked with Leo Adams.",
    "Will Garcia is going to relax after the meal",
    "Will Garcia is going to wake up and have breakfast",
    "Will Garcia is going to look after things at home",
    "Will Garcia's plan for day 0: 7:00 wake up and have breakfast at home-1; 9:00 look after "
    "things at home at home-1; 18:00 have dinner at home-1; 19:00 relax at home at home-1; "
    "22:00 sleep at home-1",
]
LIVED = [
    "Will Garcia talked with Leo Adams, his neighbour, about the storm.",
    "The radio said the storm would pass, then the river flooded home-1.",
    "Ana Lopez asked Will Garcia to help her carry sandbags.",
    "Will Garcia helped Ana Lopez look after the shelter.",
    "Will Garcia woke up early again and felt rested.",
]
SMOLLM2 = (
    "The most important information that will allow us to learn from you is the plan for "
    "day 1: 7:00 wake up and have dinner."
)


def insight_failure(
    text: str, statements: list[str] = PLANNED, question: str = QUESTION
) -> str | None:
    """The kind of check Will Garcia's insight `text`, citing every statement, fails in the
    reflection call his reflector makes; None when it is kept."""
    system = {"name": NAME, "profile": PROFILE}
    asked = messages(
        "reflection_insights",
        system,
        name=NAME,
        question=question,
        statements=lines(statements, numbered=True),
        n=1,
    )
    ctx = {"name": NAME, "question": question, "statements": statements, "people": PEOPLE}
    evidence = list(range(1, len(statements) + 1))
    value = ReflectionInsights.model_validate({"insights": [{"text": text, "evidence": evidence}]})
    prompt = Prompt.of(asked, schema_of(ReflectionInsights), ctx, "reflection_insights")
    found = check("reflection_insights", value, prompt, ctx)
    return found.kind if found else None


def test_smollm2s_insight_to_an_interviewer_reading_back_a_plan_is_refused() -> None:
    """SmolLM2's insight, kept after a re-ask in cog-31, in the very call that drew it."""
    assert insight_failure(SMOLLM2) == "copied_prompt"


@pytest.mark.parametrize(
    "text",
    [
        "The most important information that will allow us to learn from you is my talk "
        "with Leo Adams.",
        "Relaxing after the meal will help you understand me.",
        "This will help you understand me: I look after things at home.",
        "Let us know how Will Garcia relaxes after the meal.",
        "Tell us more about your breakfast at home.",
        "We can learn a lot from you about looking after a home.",
    ],
)
def test_an_insight_that_talks_as_an_asker_or_to_one_steps_out_of_character(text: str) -> None:
    assert insight_failure(text) == "out_of_character"


@pytest.mark.parametrize(
    ("text", "statements", "kind"),
    [
        ("7:00 wake up, 8:00 breakfast", PLANNED, "copied_prompt"),
        ("At 9:00 look after things at home; then 18:00 have dinner.", PLANNED, "copied_prompt"),
        ("The plan for day 1: 7:00 wake up and relax after the meal.", PLANNED, "copied_prompt"),
        ("7:00 wake up, 8:00 breakfast", PLANNED[:4], "not_an_insight"),  # no plan to copy
    ],
)
def test_an_insight_that_is_a_time_table_is_the_plan_read_back(
    text: str, statements: list[str], kind: str
) -> None:
    assert insight_failure(text, statements) == kind


@pytest.mark.parametrize(
    "text",
    [
        "I learn the most from talking with my neighbours",
        "You can't trust the radio in a storm",  # a generic "you"
        "My plan for tomorrow matters less than helping Ana",
        "I wake up at 7:00 every day and it keeps me steady",
        "We should look after each other in this town",  # the town's "we"
        "The storm let us know how weak the river banks are.",
        "Talking with neighbours helps you understand a storm.",
        "We learned a lot from the flood and from Ana Lopez.",
        "7:00 is early for me, 8:00 suits me better.",
        "Leo Adams is the neighbour I turn to when the radio goes quiet.",
    ],
)
def test_a_reflection_in_the_persons_own_words_is_kept(text: str) -> None:
    assert insight_failure(text, LIVED, "What keeps Will Garcia steady?") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Tom's plan for day 0: 6:00 wake up and have breakfast at home-5", "copied_prompt"),
        ("My plan for the day was to wake at 6:00 and bake bread.", None),
    ],
)
def test_a_plan_for_a_numbered_day_is_the_memory_lists_layout_in_any_answer(
    text: str, kind: str | None
) -> None:
    """SmolLM2's survey answer (kept first try): the plan memory's line, not an answer."""
    question = "What did you do this morning?"
    ctx = {"kind": "open", "question": question, "name": "Tom Ito"}
    asked = [
        {"role": "system", "content": "You are Tom Ito."},
        {"role": "user", "content": question},
    ]
    found = check("survey", SurveyAnswer(answer=text), Prompt.of(asked, None, ctx, "survey"), ctx)
    assert (found.kind if found else None) == kind, found


def question_failure(question: str, statements: list[str] = LIVED) -> str | None:
    """The kind of check Will Garcia's reflection question fails in the call his reflector
    makes for questions; None when it is kept."""
    system = {"name": NAME, "profile": PROFILE}
    asked = messages("reflection_questions", system, name=NAME, statements=lines(statements), n=1)
    ctx = {"name": NAME, "statements": statements, "n": 1, "people": PEOPLE}
    value = ReflectionQuestions.model_validate({"questions": [question]})
    prompt = Prompt.of(asked, schema_of(ReflectionQuestions), ctx, "reflection_questions")
    found = check("reflection_questions", value, prompt, ctx)
    return found.kind if found else None


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        (QUESTION, "out_of_character"),  # SmolLM2's question behind the insight above
        ("What can we learn about you from your morning?", "out_of_character"),
        ("Tell us, what did Will Garcia do after the flood?", "out_of_character"),
        ("What does Will Garcia care about most?", None),
        ("What can Will Garcia learn from Ana Lopez?", None),
        ("How did the storm change how we look after each other?", None),
        ("Why does Will Garcia wake up early?", None),
    ],
)
def test_a_reflection_question_asked_as_an_interviewer_steps_out_of_character(
    question: str, kind: str | None
) -> None:
    """A question the person asks themself about their memories, not one put to "you"."""
    assert question_failure(question) == kind
