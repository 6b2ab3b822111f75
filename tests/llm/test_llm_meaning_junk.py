"""Junk a small model writes that parses and says something, but not as a person of the town:
a dialogue line or a thought describing a picture ("He is looking at the camera"), and an
assistant's words in an agent's mouth ("Thank you for your question!"). Each fails its meaning
check, so it is re-asked and then falls back; real speech about cameras, thanks and help still
passes."""

from __future__ import annotations

from typing import Any

import pytest

from societas.agents.cognition.conversation import ConversationSummary
from societas.agents.llm.meaning import check
from societas.agents.llm.tasks import (
    AttitudeUpdate,
    DialogueTurn,
    ReflectionInsights,
    Summary,
    SurveyAnswer,
    ThoughtUpdate,
)

from .test_llm_meaning import prompt_of

SPEAKER, LISTENER = "Ines Nagy", "Quin Chen"
OUT = "out_of_character"  # the kind an assistant's words and a caption off a line fail


def line_failure(text: str, last: str = "How are you today?") -> str | None:
    """The kind of check Ines Nagy's line `text` fails after Quin Chen's `last`; None: kept."""
    ctx = {"speaker": SPEAKER, "listener": LISTENER, "history": [[LISTENER, last]]}
    found = check("dialogue_turn", DialogueTurn(utterance=text), prompt_of("Say it."), ctx)
    return found.kind if found else None


def answer_failure(text: str, question: str = "How was your day?") -> str | None:
    """The kind of check an open survey answer `text` to `question` fails; None: kept."""
    ctx = {"kind": "open", "question": question, "name": SPEAKER}
    found = check("survey", SurveyAnswer(answer=text), prompt_of(question), ctx)
    return found.kind if found else None


def thought_failure(text: str) -> str | None:
    ctx = {"name": SPEAKER, "thought": "nothing in particular", "recent": []}
    value = ThoughtUpdate(thought=text, emotion="Joy", intensity=0.4)
    found = check("thought_update", value, prompt_of("Your thought?"), ctx)
    return found.kind if found else None


LINES = [f"{SPEAKER}: Hi Quin, the festival starts at noon.", f"{LISTENER}: I will bring bread."]


def summary_failure(text: str) -> str | None:
    ctx = {"name": SPEAKER, "other": LISTENER, "lines": LINES, "topic": "festival"}
    value = ConversationSummary(summary=text, tone=0.3)
    found = check("conversation_summary", value, prompt_of("Summarise."), ctx)
    return found.kind if found else None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # SmolLM2's own line, kept after a re-ask: a picture described, not words said
        ("It's a man, a woman and a boy. He is looking at the camera...", "stage_direction"),
        ("The image shows two people talking in a cafe.", "stage_direction"),
        ("In this photo, two people sit on a bench in the park.", "stage_direction"),
        ("This is a photo of a woman holding a cup of coffee.", "stage_direction"),
        ("She smiles at the camera and waves.", "stage_direction"),
        ("The camera zooms in on the bakery.", "stage_direction"),
        ("Look at the camera shop on Main Street, it finally opened!", None),
        ("Smile for the camera, Quin!", None),
        ("I took a picture of the sunset yesterday.", None),
        ("Did you see the photo I sent you?", None),
        ("In the picture I sent you, the dog is asleep.", None),
        ("In this photo, I look young.", None),
        ("In this photo, my grandmother is holding me.", None),
        ("The scene at the market was chaos this morning.", None),
    ],
)
def test_a_line_describing_a_picture_is_no_speech(text: str, kind: str | None) -> None:
    assert line_failure(text) == kind


@pytest.mark.parametrize(
    ("fails", "text"),
    [
        (thought_failure, "The image shows a woman standing in front of her house."),
        (thought_failure, "A man in a blue shirt is looking straight at the camera."),
        (summary_failure, "In this image, Quin Chen holds bread at the festival."),
        (answer_failure, "The picture depicts a sunny day in the park."),
    ],
)
def test_a_caption_is_no_thought_summary_or_answer(fails: Any, text: str) -> None:
    assert fails(text) == OUT


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Thank you for your question! The festival starts at noon.", OUT),
        ("The festival starts at noon. I hope this helps!", OUT),
        ("Sure! Here is a possible response: the festival starts at noon.", OUT),
        ("Let me know if you have any other questions.", OUT),
        ("Let me know if you need anything else.", OUT),
        ("Is there anything else I can help you with?", OUT),
        ("Feel free to ask!", OUT),
        ("I'm happy to help with your question.", OUT),
        ("As your AI assistant, I suggest the park.", OUT),
        ("I'm happy to help!", OUT),  # nobody asked for help
        ("Thanks for the coffee, Maria!", None),
        ("Thank you for asking, I'm fine.", None),
        ("I'd be happy to help you move on Saturday.", None),
        ("Let me know if you need anything else from the shop.", None),
        ("Feel free to ask Rosa about the bread.", None),
        ("Here's the bread you wanted.", None),
        ("Here is my plan: the park, then home.", None),
        ("I'm a shop assistant at the bakery.", None),
        ("How can I help you?", None),  # a line to the listener may offer help
    ],
)
def test_an_assistants_words_are_no_line_of_a_townsperson(text: str, kind: str | None) -> None:
    assert line_failure(text) == kind


@pytest.mark.parametrize(
    "last",
    ["Could you help me carry the boxes?", "Thanks so much for the bread!"],
)
def test_gladness_to_help_answers_a_call_for_help_or_thanks(last: str) -> None:
    assert line_failure("I'm happy to help!", last) is None
    assert line_failure("Glad to help you with that.", last) is None
    assert line_failure("Glad to help you with that.") == OUT  # unasked


@pytest.mark.parametrize(
    ("fails", "text", "kind"),
    [
        (thought_failure, "I'm happy to help you with anything you need.", OUT),
        (thought_failure, "How can I help you today?", OUT),
        (thought_failure, "I'd be happy to help Rosa paint her fence tomorrow.", None),
        (summary_failure, "Quin Chen will bring bread. I'll be happy to help if you like.", OUT),
        (summary_failure, "Here's the summary: Quin Chen will bring bread.", OUT),
        (summary_failure, "Quin Chen will bring bread to the festival at noon.", None),
        (answer_failure, "Thank you for your question! I had a calm day.", OUT),
        (answer_failure, "I had a calm day. I hope this answers your question.", OUT),
        (answer_failure, "My day was calm, thanks for asking.", None),
        (answer_failure, "I helped Rosa at the bakery; I'm always glad to help her.", None),
    ],
)
def test_an_assistants_words_are_no_thought_summary_or_answer(
    fails: Any, text: str, kind: str | None
) -> None:
    assert fails(text) == kind


def test_an_assistants_offer_is_no_answer_about_ones_day() -> None:
    """SmolLM2's answer to "How was your day?", kept first try in two runs."""
    said = "This is a story of my day, based on the survey and interview. I am here to help."
    assert answer_failure(said) == OUT


def test_gladness_to_help_answers_a_question_about_helping() -> None:
    assert answer_failure("Yes, I'm happy to help.", "Would you help a neighbour move?") is None
    assert answer_failure("Yes, I'm happy to help.") == OUT


def test_an_insight_a_reason_and_a_memory_summary_are_no_assistants_words() -> None:
    statements = ["Ines Nagy baked bread.", "Ines Nagy sold bread at the festival."]
    insight = {"text": "Ines Nagy bakes for the town. I hope this helps!", "evidence": [1, 2]}
    found = check(
        "reflection_insights",
        ReflectionInsights(insights=[insight]),
        prompt_of("Insights?"),
        {"name": SPEAKER, "statements": statements},
    )
    assert found is not None and found.kind == OUT, found
    reason = AttitudeUpdate(attitude=6, reason="Thank you for your question about basic income.")
    ctx = {"topic": "basic income", "recent": ["basic income was discussed"]}
    found = check("attitude_update", reason, prompt_of("Your stance?"), ctx)
    assert found is not None and found.kind == OUT, found
    memory = Summary(summary="The image shows Ines Nagy baking bread at home.")
    found = check("consolidation", memory, prompt_of("Summarise these memories."), {})
    assert found is not None and found.kind == OUT, found


def test_gladness_at_news_nobody_told_is_an_assistants_reply() -> None:
    """SmolLM2's answer to "How was your day?", kept after json-repair: the asker told no news
    to be glad of; a line may answer the other's news."""
    said = "I'm glad to hear that you're having a great day at work, but my day was long."
    assert answer_failure(said) == OUT
    assert thought_failure("I'm sorry to hear you had a rough morning.") == OUT
    assert line_failure(said, "I'm having a great day at work!") is None
    assert answer_failure("I was glad to hear the festival is on Saturday.") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("1.2, mood: relief 0.5, sentiment: positive", "copied_prompt"),  # SmolLM2's, kept
        ("Mood: relief, sentiment: positive", "copied_prompt"),
        ("Listen: the bridge is out, and the school is closed.", None),
        ("I told her: come over, it's fine.", None),
        ("Note: the bridge is out, so take the ferry.", None),
    ],
)
def test_a_line_that_is_a_record_of_labelled_values_is_no_speech(text: str, kind: str | None):
    assert line_failure(text) == kind


DID = "What did you do this morning, and why?"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (  # SmolLM2's, kept after a re-ask (pol-21)
            "The task has been completed successfully, and I'll update it soon. I'm looking "
            "forward to seeing what happens next!",
            OUT,
        ),
        ("No one has responded to this request yet.", OUT),  # SmolLM2's, kept (pol-21)
        ("I support this request for a new park.", None),
        ("I worked on this task all morning.", None),
        ("I sent my request to the council this morning.", None),
    ],
)
def test_an_answer_that_speaks_of_its_prompt_as_a_request_is_the_model(text, kind):
    assert answer_failure(text, DID) == kind


def test_a_shop_line_about_an_order_is_a_persons():
    assert line_failure("The order has been completed successfully.") is None
    assert line_failure("I'll handle your request right away.") is None
