"""The rules policy's text a reader sees first (reflections, thoughts, dialogue, summaries)
is built from what the memories are about (who, what, where), never from question or stop
words, nor from the agent's own plans or name."""

from __future__ import annotations

import re

from societas.agents.cognition import rules_cognition as _registers  # noqa: F401
from societas.agents.cognition.persona import persona_of, plain_name
from societas.agents.llm.rules import answer, gist

STATEMENTS = [
    "I talked with Bob Ray at cafe-1. Bob Ray said: the bakery burned down last night.",
    "Ann Lee's plan for 9:00: 9:00 focus on work (15 min); 9:15 continue work (15 min)",
    "I noticed: smoke over the bakery near home-3",
    "Bob Ray told me the bakery will reopen after the festival.",
    "Ann Lee is going to have lunch",
]
NO_THEME = re.compile(r"\b(why|what|how|does|did|who|matter|plan|min|the and)\b[.?!]", re.I)


def test_gist_names_people_things_and_places_not_routine_or_question_words() -> None:
    g = gist([*STATEMENTS, "Why does it matter? What is happening?"], "Ann Lee")
    assert g.people[0] == "Bob Ray" and "Ann Lee" not in g.people
    assert g.things[0] == "bakery"
    assert {"why", "matter", "happening", "focus", "lunch"}.isdisjoint(g.things)
    assert g.places[0] in ("cafe-1", "home-3")


def test_a_thing_is_the_phrase_it_comes_in_and_never_a_first_name() -> None:
    said = [
        "Hi Rafa! Did you hear about the basic income?",
        "The basic income starts next week, Rafa said.",
        "I told Rafa the basic income is a good idea.",
        "The storm hit the harbour. The basic idea is to wait.",
    ]
    g = gist(said, "Ann Lee")
    assert g.things[0] == "basic income"  # not "basic" and "income" apart
    assert "rafa" not in " ".join(g.things)  # a name written alone is no thing
    assert "storm" in g.things or "harbour" in g.things
    line = answer("reflection_insights", {"name": "Ann Lee", "statements": said})
    assert line["insights"][-1]["text"] == "The basic income keeps coming up for me."  # type: ignore[index]


def test_reflections_speak_of_people_things_and_places() -> None:
    ctx = {"name": "Ann Lee", "statements": STATEMENTS, "n": 3}
    questions = answer("reflection_questions", ctx)["questions"]  # type: ignore[index]
    assert len(questions) == 3
    assert any("Bob Ray" in q for q in questions) and any("bakery" in q for q in questions)
    for q in questions:
        assert not NO_THEME.search(q), q
        ins = answer("reflection_insights", {**ctx, "question": q})["insights"]  # type: ignore[index]
        for i in ins:
            text = i["text"]
            assert not NO_THEME.search(text) and "attention to" not in text, text
            assert "Ann Lee" not in text and i["evidence"], i
    first = answer("reflection_insights", {**ctx, "question": questions[0]})["insights"]  # type: ignore[index]
    assert first[0]["text"] == "I spend a lot of time with Bob Ray at cafe-1."
    assert first[0]["evidence"] == [1, 4]


def test_a_thought_is_about_the_world_not_the_own_name_or_a_quoted_memory() -> None:
    ctx = {
        "name": "Hugo Adams",
        "recent": ["I talked with Bob Ray at cafe-1.", "Hugo Adams's plan for 9:00: work"],
        "needs": {"energy": 0.2, "hunger": 0.8},
    }
    thought = answer("thought_update", ctx)["thought"]  # type: ignore[index]
    assert thought == "I keep thinking about Bob Ray; I need rest."
    ctx["recent"] = ["The hurricane is two days away, said the radio."]
    assert "worried about the hurricane" in answer("thought_update", ctx)["thought"]  # type: ignore[index]


def test_dialogue_shares_news_not_plans_and_summaries_speak_in_the_first_person() -> None:
    ctx = {
        "speaker": "Ann Lee",
        "listener": "Bob Ray",
        "memories": [STATEMENTS[1], "I noticed: smoke over the bakery near home-3"],
        "history": [],
        "turn": 0,
        "max_turns": 4,
    }
    line = answer("dialogue_turn", ctx)["utterance"]  # type: ignore[index]
    assert "plan for" not in line and "noticed" not in line and "smoke over the bakery" in line
    ctx = {"name": "Ann Lee", "other": "Bob Ray", "heard": ["hi"], "place": "cafe-1"}
    summary = answer("conversation_summary", ctx)["summary"]  # type: ignore[index]
    assert summary.startswith("I talked with Bob Ray at cafe-1.") and "Ann Lee" not in summary


def test_names_in_prompts_carry_no_ids() -> None:
    assert plain_name("Hugo Adams 7") == "Hugo Adams" and plain_name("Ann Lee") == "Ann Lee"
    p = persona_of(7, {"name": "Hugo Adams 7", "home": "home-1"}, {})
    assert p.name == "Hugo Adams" and "7" not in p.system()["profile"].split("home")[0]
