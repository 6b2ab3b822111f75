"""Scheduled surveys: answers through the LLM gateway (rules policy: from status) in the
`surveys` results table; asking changes nothing unless the survey says remember."""

from __future__ import annotations

import asyncio

import pyarrow.compute as pc

from societas.agents.runtime.results import read_table
from societas.agents.scenario import load_scenario
from societas.cluster.experiments.arms import run_checkpointed
from societas.cluster.report.memories import agent_memories
from tests.experiments.conftest import scenario

SETS = [
    {"tick": 0, "kind": "set", "values": {"mood": 0.9}, "select": {"ids": [0, 1]}},
    {"tick": 0, "kind": "set", "values": {"mood": 0.1}, "select": {"ids": [2, 3]}},
]
SURVEY = {
    "id": "morning",
    "day": 0,
    "hour": 8,  # start 07:00, 30-minute ticks: tick 2
    "select": {"ids": [0, 1, 2, 3, 4]},
    "questions": [
        {
            "id": "life",
            "kind": "likert",
            "scale": 5,
            "attribute": "mood",
            "text": "How satisfied are you?",
        },
        {
            "id": "cash",
            "kind": "number",
            "min": 0,
            "attribute": "currency",
            "text": "Money at hand?",
        },
        {"id": "feel", "kind": "choice", "options": ["good", "bad"], "text": "Is your mood good?"},
        {"id": "day", "kind": "open", "text": "How is your day going?"},
    ],
}


def run(tmp_path, name, **over):
    cfg = load_scenario(scenario(ticks=6, interventions=SETS, **over))
    out = tmp_path / name
    asyncio.run(run_checkpointed(cfg, out))
    return out


def rows(out, table="surveys"):
    return read_table(out, table).to_pylist()


def test_survey_answers_reflect_status_values(tmp_path):
    out = run(tmp_path, "with", surveys=[SURVEY])
    answers = {(r["agent_id"], r["question_id"]): r for r in rows(out)}
    assert len(answers) == 5 * 4
    assert {r["tick"] for r in rows(out)} == {2}
    assert {(r["day"], r["time"], r["survey"]) for r in rows(out)} == {(0, "08:00", "morning")}
    # likert from mood: 0.9 -> 5 of 5, 0.1 -> 1 of 5; choice: high mood picks the first option
    for agent, point, option in ((0, 5, "good"), (1, 5, "good"), (2, 1, "bad"), (3, 1, "bad")):
        assert answers[(agent, "life")]["value"] == point
        assert answers[(agent, "life")]["answer_text"] == f"{point} of 5"
        assert answers[(agent, "feel")]["answer_text"] == option
    # number: the agent's money at that tick, as the agent_state table recorded it
    state = read_table(out, "agent_state")
    state = state.filter(pc.equal(state["tick"], 2)).to_pylist()
    currency = {r["agent_id"]: r["currency"] for r in state}
    for agent in range(5):
        assert answers[(agent, "cash")]["value"] == currency[agent]
    assert answers[(0, "day")]["value"] is None and answers[(0, "day")]["answer_text"]


def test_asking_changes_nothing_unless_remembered(tmp_path):
    plain = run(tmp_path, "plain")
    asked = run(tmp_path, "asked", surveys=[SURVEY])
    for table in ("agent_state", "needs", "dialogues", "events", "attitudes"):
        assert rows(plain, table) == rows(asked, table), table
    assert not any(m["topic"] == "survey" for m in agent_memories(asked, 0))
    remembered = run(tmp_path, "remembered", surveys=[{**SURVEY, "remember": True}])
    texts = [m["text"] for m in agent_memories(remembered, 0) if m["topic"] == "survey"]
    assert any("How satisfied are you?" in t and "5 of 5" in t for t in texts)


def test_model_replies_are_checked_against_the_question():
    from societas.agents.experiments.schema import Question
    from societas.agents.experiments.survey import _checked
    from societas.agents.llm.tasks import SurveyAnswer

    likert = Question(id="l", kind="likert", scale=5, text="?")
    choice = Question(id="c", kind="choice", options=["Yes", "No"], text="?")
    number = Question(id="n", kind="number", min=0, max=100, text="?")
    assert _checked(likert, SurveyAnswer(answer="I'd say 4", value=None)) == ("I'd say 4", 4.0)
    assert _checked(likert, SurveyAnswer(answer="very", value=9)) == ("very", 5.0)
    assert _checked(likert, SurveyAnswer(answer="(no answer)", value=None)) == ("(no answer)", None)
    assert _checked(choice, SurveyAnswer(answer="no", value=None)) == ("no", 1.0)
    assert _checked(choice, SurveyAnswer(answer="maybe", value=None)) == ("maybe", None)
    assert _checked(choice, SurveyAnswer(answer="the second", value=1)) == ("the second", 1.0)
    strong = Question(id="s", kind="choice", options=["support", "strongly support"], text="?")
    reply = SurveyAnswer(answer="I strongly support it", value=None)
    assert _checked(strong, reply) == ("I strongly support it", 1.0)
    assert _checked(number, SurveyAnswer(answer="about 250", value=None)) == ("about 250", 100)
    assert _checked(number, SurveyAnswer(answer="none", value=None)) == ("none", None)
    by_then = SurveyAnswer(answer="By 10:35 I had talked to 3 people.", value=None)
    assert _checked(number, by_then) == (by_then.answer, 3.0)  # a clock time is no count
    move = Question(id="m", kind="choice", options=["yes", "no"], text="Would you move?")
    assert _checked(move, SurveyAnswer(answer="No idea", value=None)) == ("No idea", None)
    assert _checked(move, SurveyAnswer(answer="No, never", value=None)) == ("No, never", 1.0)
    denied = SurveyAnswer(answer="I do not support it", value=None)
    assert _checked(strong, denied) == (denied.answer, None)  # a negated option is no vote
    talked = Question(id="t", kind="number", min=0, max=100, text="How many people did you meet?")
    ago = SurveyAnswer(answer="3 days ago I met 2 people.", value=None)
    assert _checked(talked, ago) == (ago.answer, 2.0)  # a span of days is no count of people
    assert _checked(number, ago) == (ago.answer, 3.0)  # what the question counts is not said
    # SmolLM2's, re-asked and kept: a likert point was read from "2 days ago"
    log = SurveyAnswer(answer="12:04; 2 days ago; 5:36am. 2 people; 2 of my coworkers at work-1.")
    assert _checked(likert, log) == (log.answer, None)  # spans, counts and places: no point
    off = SurveyAnswer(answer="After 2 days off, 4.", value=None)
    assert _checked(likert, off) == (off.answer, 4.0)
    at_home = SurveyAnswer(answer="At home-9 I keep 50.", value=None)
    assert _checked(number, at_home) == (at_home.answer, 50.0)  # a place's number is its name


def test_rules_answers_quote_a_memory_in_the_persons_own_words():
    from societas.agents.llm.rules import answer, as_mine
    from societas.agents.llm.survey_checks import names_self

    name = "Gia Diaz"
    cases = {
        "Gia Diaz's plan for day 0: 8:00 work": "my plan for day 0: 8:00 work",
        "Gia Diaz is going to relax at home": "I am going to relax at home",
        "Gia Diaz has 3 friends": "I have 3 friends",
        "Gia Diaz thinks the storm is near": "I think the storm is near",
        "Gia Diaz talked with Ben Ito": "I talked with Ben Ito",
        "Ben Ito talked with Gia Diaz about Gia Diaz's job": "Ben Ito talked with me about my job",
        "Gia Diazes live here": "Gia Diazes live here",  # not the name: a longer word
    }
    for memory, mine in cases.items():
        assert as_mine(memory, name) == mine
        assert names_self(f"I remember: {as_mine(memory, name)}", name) is False
    assert as_mine("Dia's plan for day 2: 8:00 work", "Dia") == "my plan for day 2: 8:00 work"
    assert as_mine("Ben met Dia. Dia left", "Dia") == "Ben met me. I left"
    assert as_mine("Ben left. Dia's bag stayed", "Dia") == "Ben left. My bag stayed"
    assert as_mine("Dia Lopez talked with Dia", "Dia") == "Dia Lopez talked with me"  # another's
    assert as_mine("Ben met Gia Diaz Lopez", name) == "Ben met Gia Diaz Lopez"
    ben = {"name": "Ben Ito", "closeness": 0.9, "sentiment": 0.5, "memories": ["Gia Diaz met Ben"]}
    talk = answer("talk_decision", {"name": name, "candidates": [ben], "n": 1})
    assert talk == {"talk_to": 1, "reason": "I remember: I met Ben"}  # the talk rule's too
