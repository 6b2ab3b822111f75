"""Meaning checks: answers that parse but copy the prompt's example, echo the schema, count
instead of rate, repeat a line, contradict the task or name unknown places are never
accepted as the model's answer; a scripted parrot server proves it end to end."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import pytest

from societas.agents.cognition import decompose_hour, plan_day, rate_importance, speak
from societas.agents.cognition.persona import persona
from societas.agents.cognition.relationships import Relation
from societas.agents.cognition.thought import update_thought
from societas.agents.llm.errors import LLMFallbackRateExceeded
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.meaning import CORRECTIONS, Prompt, check, is_counting, repeated_cycle
from societas.agents.llm.structured import schema_of
from societas.agents.llm.tasks import (
    DailyPlan,
    DialogueTurn,
    HourlyPlan,
    Summary,
    ThoughtUpdate,
)
from societas.memory import GroupMemory, GroupMemoryConfig

from .parrot import endpoint, parrot

EXAMPLE = (
    'Say it. Reply with ONLY a JSON object like this example: {"utterance": "example words '
    'said here", "end": false}'
)


def prompt_of(
    text: str, schema: type | None = None, task: str | None = None, **context: object
) -> Prompt:
    msgs = [{"role": "system", "content": "You are Ann, a person living in a simulated town."}]
    msgs.append({"role": "user", "content": text})
    return Prompt.of(msgs, schema_of(schema) if schema else None, dict(context), task)


def thought_failure(thought: str, asked: str = "Your thought?") -> str | None:
    """The kind of check Gia Diaz's thought `thought` fails, asked so; None when kept."""
    from societas.agents.llm.tasks import ThoughtUpdate

    ctx = {"name": "Gia Diaz", "thought": "nothing in particular", "recent": []}
    value = ThoughtUpdate(thought=thought, emotion="Joy", intensity=0.4)
    failure = check("thought_update", value, prompt_of(asked), ctx)
    return failure.kind if failure else None


def turn(text: str) -> DialogueTurn:
    return DialogueTurn(utterance=text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("example words said here", "copied_example"),
        ("Example words, said here!", "copied_example"),
        ("One utterance in a conversation and whether the speaker ends it.", "echoed_schema"),
        ("I am a person living in a simulated town", "copied_prompt"),
        ("Reply with only a JSON object like this example", "copied_prompt"),
    ],
)
def test_copies_of_the_prompt_are_caught(text: str, kind: str) -> None:
    failure = check("dialogue_turn", turn(text), prompt_of(EXAMPLE, DialogueTurn), {})
    assert failure is not None and failure.kind == kind


@pytest.mark.parametrize(
    ("questions", "kind"),
    [
        (["day 0,12:30", "morning morning"], "empty"),  # SmolLM2's own, kept first try
        (["What stood out to me lately?", "the bakery"], "empty"),  # ("12:05": filler, dropped)
        (["What goes on at home-0?", "How are things between me and Ada?"], None),
        (["Who waters?"], None),  # short, and asks
        (  # SmolLM2's own, kept first try: the instruction put back
            [
                "What is the most salient high-level question we can answer about Umar Adams?",
                "Is there a way to find out what is the most salient high-level question "
                "you're asked your questions?",
            ],
            "copied_prompt",
        ),
        (["What does Umar Adams fear most about the storm?"], None),
    ],
)
def test_a_reflection_question_must_ask_of_the_person(questions, kind) -> None:
    from societas.agents.llm.tasks import ReflectionQuestions

    value = ReflectionQuestions(questions=questions)
    failure = check("reflection_questions", value, prompt_of("Questions?"), {})
    assert (failure.kind if failure else None) == kind, failure


def ben_to_olga(text: str) -> str | None:
    """The kind of check Ben Moore's line `text` to Olga Lopez fails; None when it is kept."""
    ctx = {"speaker": "Ben Moore", "listener": "Olga Lopez", "people": ["Liam Lopez"]}
    prompt = prompt_of(
        "Ben Moore is talking with Olga Lopez.", DialogueTurn, "dialogue_turn", **ctx
    )
    failure = check("dialogue_turn", turn(text), prompt, ctx)
    return failure.kind if failure else None


@pytest.mark.parametrize(
    ("text", "kind", "history"),
    [
        ("Soccer", "empty", []),  # SmolLM2's openers, kept first try (hur-22, pol-22)
        ("Lasenada", "empty", []),
        ("Soccer?", None, []),  # an invitation
        ("Hurricane!", None, []),
        ("Hello.", None, []),
        ("Storm.", None, []),  # a word of what the speaker remembers
        ("Soccer.", None, [["Olga Lopez", "What do you play on Sundays?"]]),  # an answer
    ],
)
def test_an_opening_line_of_one_stray_word_says_nothing(
    text: str, kind: str | None, history: list[list[str]]
) -> None:
    ctx = {
        "speaker": "Ben Moore",
        "listener": "Olga Lopez",
        "memories": ["The hurricane hits the town: storm, flooding and emergency sirens."],
        "history": history,
    }
    prompt = prompt_of(
        "Ben Moore is talking with Olga Lopez.", DialogueTurn, "dialogue_turn", **ctx
    )
    failure = check("dialogue_turn", turn(text), prompt, ctx)
    assert (failure.kind if failure else None) == kind, failure


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Lets do it again, Ben Moore.", "not_first_person"),  # SmolLM2's form, to its speaker
        ("The last time I met you, Ben", "not_first_person"),
        ("The last time I met you, Olga", None),  # the listener, called by name
        ("I met my cousin, Liam Lopez.", None),  # another, named after him
        ("Ben here, how are you?", None),  # the speaker naming himself, not called
        # SmolLM2's, kept first try: the speaker called at the start of his own line
        ("Ben, I'm really looking forward to your lunch tomorrow.", "not_first_person"),
        ("Hi Ben! Would you mind cooking something for me?", "not_first_person"),
        ("Olga, I'm really looking forward to your lunch tomorrow.", None),
    ],
)
def test_a_line_calling_its_own_speaker_by_name_is_not_theirs(text: str, kind: str | None) -> None:
    assert ben_to_olga(text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Liam Lopez", "empty"),  # SmolLM2's own line, to Olga Lopez: a name, nothing said
        ("Olga Lopez, Ben Moore.", "empty"),
        ("9:20 Olga", "empty"),  # SmolLM2's own lines: a clock and a name, kept first try
        ("2014-07-31 9:56 Olga", "garbled_time"),  # a date the town's clock never shows
        ("Olga, at 5?", None),
        ("Olga!", None),  # a first name called out is something said
        ("Liam Lopez is at the market.", None),
        ("Olga, I saw Liam Lopez.", None),
    ],
)
def test_a_line_that_is_only_names_says_nothing(text: str, kind: str | None) -> None:
    assert ben_to_olga(text) == kind


@pytest.mark.parametrize(
    "text", ["The bakery burned down this morning.", "Hi Bob, how was the market?", "Yes."]
)
def test_own_answers_pass(text: str) -> None:
    assert check("dialogue_turn", turn(text), prompt_of(EXAMPLE, DialogueTurn), {}) is None


def test_an_example_value_that_is_the_agents_own_is_no_copy() -> None:
    text = 'Re-plan. Like: {"items": [{"start_hour": 9, "activity": "help at the shelter"}]}'
    plan = DailyPlan(items=[{"start_hour": 9, "activity": "help at the shelter", "location": "x"}])
    assert check("replan", plan, prompt_of(text, new_activity="help at the shelter"), {}) is None
    failure = check("replan", plan, prompt_of(text), {})
    assert failure is not None and failure.kind == "copied_example"


@pytest.mark.parametrize(
    ("scores", "counting"),
    [
        ([1, 2, 3, 4, 5], True),
        ([10, 1, 2, 3, 4, 5], True),
        ([3, 4, 5, 6], True),
        ([2, 7, 3, 3, 8], False),
        ([1, 2, 3], False),  # too few to tell
        ([4, 5, 6, 2, 8, 1], False),
        ([10, 9, 8, 7, 6, 5], True),  # counting down, as SmolLM2-135M answers
        ([9, 8, 7, 6], True),
        ([8, 7, 7, 6], False),  # a tie is a rating
        ([1, 2, 1, 2, 1], False),
        ([2, 1, 3, 4, 5, 6, 7, 8, 9, 10], True),  # SmolLM2-135M: one rating out of the count
        ([6, 5, 9, 4, 3, 2], True),
        ([2, 1, 3, 4, 6], False),  # five: too few to leave one out
        ([1, 3, 4, 5, 6, 8], False),  # two left out: a rating
        # SmolLM2-135M's own, kept first try: seven in a row count down in a batch of 14
        ([10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1, 8, 7, 6], True),
        ([3, 9, 8, 7, 6, 5, 4, 2, 8, 1, 5, 2, 7, 3], False),  # six in a row: may be ratings
        ([2, 3, 4, 5, 6, 7, 8, 1, 9, 2, 6], True),
    ],
)
def test_counting_sequences_are_not_ratings(scores: list[int], counting: bool) -> None:
    assert is_counting(scores) is counting


def test_ratings_repeating_a_cycle_the_items_do_not_are_a_pattern() -> None:
    """SmolLM2-135M's own batch, kept first try with both anchors met: its nine ratings
    start over at item 10, the divorce, rated as the plan of item 1."""
    people = ["Jon Jones", "Paul Owens", "Cleo Quinn", "Kim Rossi", "Zed Adams", "Umar Ito"]
    items = []
    for name in people:
        items += [f"{name}'s plan for 21:00: 21:00 relax at home (60 min)"]
        items += [f"{name} thinks: Currently nothing good or bad is happening"]
    items[9:9] = ["marriage ended in a divorce; cried all night"]
    items[11:11] = ["ate breakfast and had a coffee"]
    items = items[:14]
    scores = [10, 4, 2, 9, 3, 5, 6, 7, 8, 10, 4, 2, 9, 3]
    assert repeated_cycle(scores, items) == 9
    from societas.agents.llm.batching import batch_schema
    from societas.agents.llm.tasks import ImportanceScore

    batch = batch_schema(ImportanceScore, len(scores))(
        results=[ImportanceScore(score=x) for x in scores]
    )
    ctx = {"items": items, "anchors": [11, 9]}
    found = check("importance", batch, prompt_of("Rate."), ctx)
    assert found is not None and found.kind == "counting", found
    # Items that repeat two by two, rated two by two: ratings, not a pattern.
    pairs = [f"{n}'s plan for 21:00: relax at home" for n in people[:3]]
    alike = [x for p in pairs for x in (p, p.replace("plan", "walk").replace("relax", "stroll"))]
    assert repeated_cycle([2, 3, 2, 3, 2, 3], alike) is None  # two values: no cycle of three
    mixed = ["a walk", "a divorce", "a coffee"] * 3
    assert repeated_cycle([2, 9, 1, 2, 9, 1, 2], mixed[:7]) is None  # the items repeat too
    other = [*mixed[:3], "a fire", "a nap", "a bus", "a wedding"]
    assert repeated_cycle([2, 9, 1, 2, 9, 1, 2], other) == 3
    assert repeated_cycle([2, 9, 1, 2, 9, 1], other[:6]) is None  # three repeated: too few
    assert repeated_cycle([2, 9, 1, 3, 9, 1, 2], other) is None


def test_the_frame_of_a_prompt_is_no_utterance_but_its_news_may_be_passed_on() -> None:
    topic = "there is a summer festival in the park on Saturday"
    text = (
        "Say the next line. Reply with ONLY a JSON object.\n\n"
        f"Ada Adams is talking with Finn Adams about {topic}.\n"
        "Ada Adams's relationship with Finn Adams: closeness 0.2.\n"
        f"What Ada Adams remembers:\n- {topic}\nConversation so far:\n(nothing said yet)"
    )
    ctx = {"speaker": "Ada Adams", "listener": "Finn Adams", "topic": topic, "history": []}
    prompt = prompt_of(text, DialogueTurn, "dialogue_turn", **ctx)
    framed = turn(f"Ada Adams is talking with Finn Adams about {topic}.")
    assert check("dialogue_turn", framed, prompt, ctx).kind == "copied_prompt"  # type: ignore[union-attr]
    summary = Summary(summary=f"Ada Adams is talking with Finn Adams about {topic}.")
    said = prompt_of(text, Summary, "conversation_summary", **ctx)  # restating is a summary
    assert check("conversation_summary", summary, said, ctx) is None
    news = turn("There is a summer festival in the park on Saturday!")
    assert check("dialogue_turn", news, prompt, ctx) is None
    system = {"role": "system", "content": "You are Ada Adams, a person living in a town."}
    named = Prompt.of([system, {"role": "user", "content": text}], None, ctx, "dialogue_turn")
    assert check("dialogue_turn", turn("I am Ada Adams."), named, ctx) is None  # introduced
    told = check("dialogue_turn", turn("I am Ada Adams, a person living in a town."), named, ctx)
    assert told is not None and told.kind == "copied_prompt"  # the frame told as "I"
    labelled = turn("Finn Adams: Sinister Finn Adams")
    assert check("dialogue_turn", labelled, prompt, ctx).kind == "copied_prompt"  # type: ignore[union-attr]


def test_the_prompts_data_about_the_speaker_is_no_utterance_but_the_transcript_is_data() -> None:
    """Lines of the frame shaped like a transcript's ("Ann's mood: calm") are frame, not what
    someone said: a reply restating them is a copy; the other's earlier line is not."""
    text = (
        "Write the next line. Reply with ONLY a JSON object.\n\n"
        "Quin Chen is talking with Ines Nagy.\n"
        "Quin Chen's relationship with Ines Nagy: closeness 0.9, sentiment +0.0, talked 0 times.\n"
        "Quin Chen's mood: calm; needs: hunger 0.4, energy 0.8.\n"
        "What Quin Chen remembers about Ines Nagy and the topic:\n- Ines Nagy runs the bakery\n"
        "Conversation so far:\nInes Nagy: The river is rising near the old mill tonight."
    )
    history = [["Ines Nagy", "The river is rising near the old mill tonight."]]
    ctx = {"speaker": "Quin Chen", "listener": "Ines Nagy", "history": history}
    prompt = prompt_of(text, DialogueTurn, "dialogue_turn", **ctx)
    for copied in (
        "Quin Chen's relationship with Ines Nagy: closeness 0.9, sentiment +0.0, talked 0 times.",
        "Quin Chen's mood: calm; needs: hunger 0.4, energy 0.8.",
    ):
        found = check("dialogue_turn", turn(copied), prompt, ctx)
        assert found is not None and found.kind == "copied_prompt", copied
    echoed = turn("The river is rising near the old mill tonight, you say?")
    found = check("dialogue_turn", echoed, prompt, ctx)
    assert found is not None and found.kind == "repeated_line"  # the transcript, not the frame
    assert check("dialogue_turn", turn("Ines, you run the bakery, right?"), prompt, ctx) is None


def test_a_repeated_line_is_caught() -> None:
    history = [["Bob", "The market opens at nine today."], ["Ann", "Good to know."]]
    failure = check(
        "dialogue_turn",
        turn("The market opens at nine today!"),
        prompt_of("x"),
        {"history": history},
    )
    assert failure is not None and failure.kind == "repeated_line"
    fresh = turn("I will go there after work.")
    assert check("dialogue_turn", fresh, prompt_of("x"), {"history": history}) is None


def test_a_line_that_speaks_of_its_utterance_is_the_task_not_a_line() -> None:
    ctx = {"speaker": "Ines Nagy", "listener": "Quin Chen", "history": []}
    said = "Ines Nagy's next utterance is about the upcoming work schedule"  # SmolLM2's own
    found = check("dialogue_turn", turn(said), prompt_of("Say the next line."), ctx)
    assert found is not None and found.kind == "copied_prompt", found
    fine = turn("The work schedule is up, Quin.")
    assert check("dialogue_turn", fine, prompt_of("Say the next line."), ctx) is None


def test_a_line_stopping_on_an_open_bracket_stops_mid_sentence() -> None:
    ctx = {"speaker": "Leo Brown", "listener": "Ben Hill", "history": []}
    said = (  # SmolLM2's own, kept first try
        "The topic of carbon tax is now 3.5 of 10 and I am unsure about it, can't speak "
        "without giving a detailed answer to the ["
    )
    found = check("dialogue_turn", turn(said), prompt_of("Say the next line."), ctx)
    assert found is not None and found.kind == "empty", found
    fine = turn("I saw the tax notice at the bakery [the one on Main Street].")
    assert check("dialogue_turn", fine, prompt_of("Say the next line."), ctx) is None
    # SmolLM2's own talk reason, kept first try: it stops inside a bracket it opened
    cut = turn("She can talk to people she met in school with Cleo (8")
    found = check("dialogue_turn", cut, prompt_of("Say the next line."), ctx)
    assert found is not None and found.kind == "empty", found
    closed = turn("I met Cleo at school (in 2008) and we still talk.")
    assert check("dialogue_turn", closed, prompt_of("Say the next line."), ctx) is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [  # SmolLM2's own, kept first try: the plan's layout rejects it before the read-out
        ("Will Quinn's plan for 13:00: 13:00 work", "copied_prompt"),
        ("Will Quinn's talk with Xia Chen went well", "narrated"),
        ("My plan for 13:00 is work, until two.", None),  # the same memory, said as hers
        ("Will Quinn's bakery opens at nine.", None),  # her name, not a memory read out
        ("Paul Patel talked with Xia Chen, I heard.", None),  # someone else's memory line
    ],
)
def test_a_line_reading_out_the_speakers_own_memory_is_narration(text: str, kind) -> None:
    memories = [
        "Will Quinn's plan for 13:00: 13:00 work (60 min)",
        "Will Quinn's talk with Xia Chen went well (tone 0.6)",
        "Paul Patel talked with Xia Chen.",
    ]
    ctx = {"speaker": "Will Quinn", "listener": "Paul Patel", "history": [], "memories": memories}
    found = check("dialogue_turn", turn(text), prompt_of("Say the next line."), ctx)
    assert (found.kind if found else None) == kind, found


@pytest.mark.parametrize(
    ("text", "narrated"),
    [
        ("The end of the conversation. Ines Nagy is going to relax after the meal.", True),
        ("Ines Nagy smiles and waves at Quin.", True),
        ("I'm going to relax after the meal, Quin.", False),
        ("Hi, I am Ines Nagy, I run the bakery.", False),  # her name, said by her
        ("Quin Chen is going to the market, you said?", False),  # the listener, not herself
        ("Ines Nagy's bakery opens at nine.", False),
        ("What Ines Nagy believes about carbon tax", True),  # SmolLM2's own, kept first try
        ("Quin Chen knows the mayor, and so do I.", False),  # the listener
        # SmolLM2's, kept after a re-ask: the listener told of, to their face, from outside
        ("Quin Chen is going to work", True),
        ("Quin Chen went home early; Quin Chen will be tired.", True),
        # SmolLM2's, kept first try (as "Jon Khan sat down with Dan Hill", by Jon Khan)
        ("Sitting down in the kitchen, Ines Nagy sat down with Quin Chen.", True),
        ("Ines Nagy talked with Quin Chen about the storm.", True),  # any past tense
        ("I had a talk with Ines Nagy yesterday.", True),  # her own name, not introduced
        ("Quin, this is Ines Nagy speaking: the bridge is closed.", False),
        ("I, Ines Nagy, promise to help.", False),
        ("It's me, Ines Nagy. The bridge is closed.", False),
        ("See you at the festival! - Ines Nagy", False),  # a message, signed
        ("Ines Nagy's plan is going to be adjusted for the storm.", True),  # the prompt's label
    ],
)
def test_a_line_narrating_its_own_speaker_is_no_utterance(text: str, narrated: bool) -> None:
    ctx = {"speaker": "Ines Nagy", "listener": "Quin Chen", "history": []}
    found = check("dialogue_turn", turn(text), prompt_of("Say the next line."), ctx)
    assert (found is not None and found.kind == "narrated") is narrated, found


@pytest.mark.parametrize(
    ("text", "staged"),
    [
        ("The end of the conversation.", True),
        ("End of dialogue.", True),
        ("*waves goodbye*", True),
        # SmolLM2's, kept first try (hur-903): whom the line is said to, as a script
        ("Do you want to tell me about it? (to Olga Lopez) Come on.", True),
        ("I went to the shelter (to be safe) and waited.", False),
        ("(smiles)", True),
        ("Conversation over.", True),
        ("Well, that is the end of my shift, see you!", False),
        ("Let's talk over coffee at the cafe.", False),
        ("I have to go, bye!", False),
        ("I'm tired *yawns* but happy.", False),
        ("Sigh", True),  # SmolLM2's line, kept first try
        (  # SmolLM2's line, kept first try
            "The topic of the conversation is: What was said by me, and I'm going to tell you "
            "another thing.",
            True,
        ),
        ("What a storm! Let's change the subject, shall we?", False),
        ("Nods and smiles.", True),
        ("Sigh. Another rainy day at the bakery.", False),
        ("I laughed so hard at your joke!", False),
        ("Wave to Rosa for me.", False),
    ],
)
def test_a_stage_direction_is_no_utterance(text: str, staged: bool) -> None:
    ctx = {"speaker": "Ines Nagy", "listener": "Quin Chen", "history": []}
    found = check("dialogue_turn", turn(text), prompt_of("Say the next line."), ctx)
    assert (found is not None and found.kind == "stage_direction") is staged, found
    assert found is None or staged


def test_daytime_sleep_when_rested_and_unknown_places_are_contradictions() -> None:
    def plan(*items: tuple[int, str, str]) -> DailyPlan:
        return DailyPlan(
            items=[{"start_hour": h, "activity": a, "location": loc} for h, a, loc in items]
        )

    ctx = {"needs": {"energy": 0.9}, "places": ["flat 1", "school", "home", "cafe"]}
    noon = plan((7, "have breakfast", "flat 1"), (12, "sleep", "flat 1"), (22, "sleep", "flat 1"))
    assert check("daily_plan", noon, prompt_of("x"), ctx).kind == "contradiction"  # type: ignore[union-attr]
    tired = {**ctx, "needs": {"energy": 0.1}}
    assert check("daily_plan", noon, prompt_of("x"), tired) is None
    away = plan(
        (7, "have breakfast", "flat 1"), (9, "teach", "the moon base"), (22, "sleep", "home")
    )
    assert check("daily_plan", away, prompt_of("x"), ctx).kind == "unknown_place"  # type: ignore[union-attr]
    fine = plan((7, "have breakfast", "flat 1"), (9, "teach", "school"), (17, "coffee", "the cafe"))
    assert check("daily_plan", fine, prompt_of("x"), ctx) is None
    short = plan((7, "have breakfast", "flat 1"), (9, "teach", "school"))
    assert check("daily_plan", short, prompt_of("x"), ctx).kind == "incomplete"  # type: ignore[union-attr]
    assert check("replan", short, prompt_of("x"), ctx) is None  # the rest of a day may be short
    night = plan((0, "food", "home"), (1, "meditation", "school"), (2, "exercise", "cafe"))
    assert check("daily_plan", night, prompt_of("x"), ctx).kind == "incomplete"  # type: ignore[union-attr]
    assert check("replan", night, prompt_of("x"), ctx) is None  # SmolLM2's, with no example
    for odd in ((0, "lunch", "flat 1"), (7, "energy", "flat 1"), (20, "have breakfast", "cafe")):
        bad = plan(odd, (9, "teach", "school"), (22, "sleep", "flat 1"))
        assert check("daily_plan", bad, prompt_of("x"), ctx) is not None, odd


def test_steps_that_do_not_tile_the_hour_are_caught_not_re_tiled() -> None:
    raw = [
        {"minute": 0, "duration_min": 8, "action": "wake"},
        {"minute": 8, "duration_min": 23, "action": "wash"},
    ]
    failure = check("hourly_plan", HourlyPlan(steps=raw), prompt_of("x"), {})
    assert failure is not None and failure.kind == "not_tiled"


def test_corrections_hold_nothing_to_copy() -> None:
    for text in CORRECTIONS.values():
        assert "{" not in text and '"' not in text and len(text) < 160


@pytest.fixture
async def group(tmp_path, bm25_embedder) -> AsyncIterator[GroupMemory]:
    g = GroupMemory(GroupMemoryConfig(), root=tmp_path / "mem", embedder=bm25_embedder)
    await g.add_agents({1: {"name": "Ann Lee", "home": "flat 1", "work": "school"}})
    g.clock.set(1, 8 * 3600.0)
    yield g
    await g.close()


@pytest.mark.parametrize("mode", ["example", "schema"])
async def test_a_parrot_never_lands_as_a_model_answer(group, mode: str) -> None:
    """Every cognition call on a server that copies the example or echoes the schema ends
    in a counted fallback, marked as such; nothing it said is accepted."""
    async with parrot(mode) as (url, served):  # type: ignore[arg-type]
        gw = LLMGateway({"endpoints": [endpoint(url)], "fallback_stop": {"enabled": False}})
        async with gw:
            ann = group.agent(1)
            plan = await plan_day(ann, gw, day=1)
            p = await persona(ann)
            hour = await decompose_hour(ann, gw, 9, p=p)
            line = await speak(gw, ann, p, "Bob Ray", Relation(), "the fire", [], 0, 4)
            thought = await update_thought(ann, gw)
            scores = await rate_importance(gw, [f"memory {i}" for i in range(6)], "Ann Lee")
    assert served, "the parrot was asked"
    for value in (plan, hour, line, thought):
        assert value.answer_source == "fallback", value
    planned = next(i for i in reversed(plan.items) if i.start_hour <= 9)
    assert hour is not None  # the hour as planned, one action, not four made-up quarters
    assert [s.model_dump() for s in hour.steps] == [
        {"minute": 0, "duration_min": 60, "action": planned.activity}
    ]
    remembered = [h.text for h in await ann.stream.search("plan for 9:00", top_k=20)]
    assert f"Ann Lee's plan for 9:00: 9:00 {planned.activity} (60 min)" in remembered
    assert scores == [0.3] * 6  # the fallback rating, not 10, 1, 2, 3...
    said = {json.dumps(v) for v in served}
    assert line.utterance not in said and thought.thought not in said
    tasks = gw.accounting.snapshot()["tasks"]
    for task in ("daily_plan", "hourly_plan", "dialogue_turn", "thought_update"):
        counts = tasks[task]
        assert counts.get("source.first_try", 0) == 0 and counts["source.fallback"] >= 1, task
        assert counts["valid_first_try"] == 0, task
        assert counts["reasks"] >= 1, task  # a meaning check or the schema's filler check
    assert tasks["importance"]["meaning.counting"] >= 1
    kinds = {k for c in tasks.values() for k in c if k.startswith("meaning.")}
    wanted = "meaning.copied_example" if mode == "example" else "meaning.echoed_schema"
    assert wanted in kinds


async def test_the_run_stops_loudly_past_the_fallback_limit(group) -> None:
    async with parrot("example") as (url, _):
        stop = {"max_rate": 0.2, "min_calls": 3, "window": 10}
        gw = LLMGateway({"endpoints": [endpoint(url)], "fallback_stop": stop})
        async with gw:
            ann = group.agent(1)
            p = await persona(ann)
            for i in range(4):
                await speak(gw, ann, p, "Bob Ray", Relation(), "", [], i, 8)
    assert isinstance(gw.stop, LLMFallbackRateExceeded)
    text = str(gw.stop)
    assert "task 'dialogue_turn' on endpoint parrot" in text and '"utterance"' in text


async def test_a_rules_answer_is_marked_rules_and_counted() -> None:
    gw = LLMGateway({"provider": "rules"})
    thought = await gw.json(
        [{"role": "user", "content": "think"}],
        ThoughtUpdate,
        task="thought_update",
        context={"name": "Ann", "thought": "", "needs": {}, "recent": []},
    )
    assert thought.answer_source == "rules"
    assert gw.accounting.snapshot()["tasks"]["thought_update"]["source.rules"] == 1


@pytest.mark.parametrize(
    ("reason", "declined"),
    [
        ("I am not sure how to answer, but I will give you the details", True),
        ("As an AI language model, I have no feelings.", True),
        ("I cannot respond to this question.", True),
        # SmolLM2's own, kept as a decision to talk to nobody
        ("Not enough information to provide a list of details (I'm not allowed to answer)", True),
        ("I have no idea how to respond.", True),  # SmolLM2's own, kept as talking to person 1
        ("I have no idea what Ines thinks, so I will ask her.", False),
        ("I can't help thinking of Ines, so I talk to her.", False),
        ("I don't know Noah well enough to decide.", False),
        ("Ines and I are close and I have news for her.", False),
        ("I don't know Noah well, so I'd rather not.", False),  # a reason, about the person
        ("", False),
    ],
)
def test_a_talk_decision_whose_reason_declines_is_no_decision(reason: str, declined: bool) -> None:
    from societas.agents.cognition.talk import TalkChoice

    ctx = {"name": "Gia Diaz", "n": 1, "candidates": [{"name": "Noah Adams"}]}
    found = check("talk_decision", TalkChoice(talk_to=0, reason=reason), prompt_of("x"), ctx)
    assert (found is not None and found.kind == "no_answer") is declined, found
    assert found is None or declined
    said = {"name": "Gia Diaz", "other": "Noah Adams", "lines": ["Hello.", "Nice weather."]}
    text = reason or "We talked about the weather."
    summary = check("conversation_summary", Summary(summary=text), prompt_of("x"), said)
    assert (summary is not None and summary.kind == "no_answer") is declined, summary


@pytest.mark.parametrize(
    ("insights", "failed"),
    [
        ([{"text": "What worries Ada?", "evidence": [1, 3]}], True),  # SmolLM2's own reply
        ([{"text": "Ben", "evidence": []}], True),  # SmolLM2's own reply
        ([{"text": "Ada fears the river", "evidence": [7]}], True),  # no statement 7
        ([{"text": "Ada fears the river", "evidence": [1, 3]}], False),
        ([{"text": "Ada trusts Ben", "evidence": [2]}, {"text": "Why?", "evidence": [1]}], True),
        ([{"text": "A very important point", "evidence": [1, 3]}], True),  # SmolLM2's own
        ([{"text": "Ada is anxious about the weather", "evidence": [2]}], False),  # names her
        ([{"text": "She keeps an eye on rising water", "evidence": [1]}], False),
        ([{"text": "Quiet mornings calm me down", "evidence": [2]}], False),  # as "I"
        ([{"text": "Rivers rise after storms", "evidence": [1]}], False),  # of statement 1
        ([{"text": "Rivers rise after storms", "evidence": [2]}], True),  # not of statement 2
        ([{"text": "1. Ben called.", "evidence": [2]}], True),  # statement 2, numbered
        ([{"text": "Ben called.", "evidence": [2]}], False),  # an earlier insight, again
        ([{"text": "Ben calls when the river rises", "evidence": [1, 2]}], False),
        ([{"text": "A new insight about Ada Adams", "evidence": [1, 2]}], True),  # SmolLM2's
        # SmolLM2's, kept after a re-ask: an answer named, none given
        ([{"text": "A detailed answer to the question about Ben.", "evidence": [2]}], True),
        (
            [
                {
                    "text": "The answer about Ben is that he calls when the river rises",
                    "evidence": [2],
                }
            ],
            False,
        ),
        ([{"text": "An insight about Ben: he calls when the river rises", "evidence": [2]}], False),
        # SmolLM2's own, kept first try: a question, and then a numbered line
        (
            [{"text": "When this moment happens? 1. I'm going to work tomorrow.", "evidence": [1]}],
            True,
        ),
    ],
)
def test_a_reflection_insight_states_something_and_cites_its_statements(
    insights: list[dict], failed: bool
) -> None:
    from societas.agents.llm.tasks import ReflectionInsights

    statements = ["the river rose", "Ben called"]
    ctx = {"name": "Ada Adams", "question": "What worries Ada?", "statements": statements}
    value = ReflectionInsights.model_validate({"insights": insights})
    failure = check("reflection_insights", value, prompt_of("Insights?", **ctx), ctx)
    assert (failure is not None and failure.kind == "not_an_insight") == failed, failure


@pytest.mark.parametrize(
    ("reason", "kind", "alone"),  # alone: with nothing recent, the topic must ground it
    [  # the first four and the next two are SmolLM2's own reasons, each with attitude 5.0
        (
            "This is your story: You can choose how you want to present it.",
            "unfounded",
            "unfounded",
        ),
        (
            "adabia's attitude against christianity is a contradiction to your beliefs.",
            "unfounded",
            "unfounded",
        ),
        ("support", "unfounded", "unfounded"),
        ("Ada Adams feels better now.", "unfounded", "unfounded"),  # her name grounds nothing
        (
            "You are a female and you have the ability to choose your own perspective.",
            "unfounded",
            "unfounded",
        ),
        ("Your emotions are not good or bad; your mood is mixed.", "unfounded", "unfounded"),
        ("I cannot answer that.", "no_answer", "no_answer"),
        ("The flood barrier.", "unfounded", "unfounded"),  # names the topic, says nothing of it
        ("Flood barriers!", "unfounded", "unfounded"),
        ("Ada and the flood barrier", "unfounded", "unfounded"),
        ("The flood reached the bakery, so a barrier makes sense.", None, None),  # what she saw
        ("Nothing new about the flood barrier changed my mind.", None, None),  # the topic
        ("Floods keep coming, so I back it.", None, None),  # 'floods' is 'flood
        ("", None, None),  # no reason: the attitude stands on its own
        (  # SmolLM2's (on the carbon tax), kept as first_try: the prompt's voice, to "you"
            "Your attitude is against the flood barrier",
            "not_first_person",
            "not_first_person",
        ),
        ("It would raise your rent, and the flood may never come back.", None, None),
        # SmolLM2's (on the carbon tax), kept first try: "you" with no "I", the prompt's voice
        (
            "You oppose the flood barrier: it is bad and harmful",
            "not_first_person",
            "not_first_person",
        ),
        ("You need to know about the flood barrier.", "not_first_person", "not_first_person"),
        ("You could see the flood coming, so I back the barrier.", None, None),
        ("You never know when the next flood comes.", None, None),  # a generic "you"
    ],
)
def test_an_attitude_reason_speaks_of_the_topic_or_what_was_seen(reason: str, kind, alone) -> None:
    from societas.agents.llm.tasks import AttitudeUpdate

    recent = ["Ada saw the river flood the bakery", "Ada talked with Ben about the storm"]
    ctx = {"name": "Ada Adams", "topic": "the flood barrier", "attitude": 5.0, "recent": recent}
    value = AttitudeUpdate(attitude=6.5, reason=reason)
    failure = check("attitude_update", value, prompt_of("Your attitude?", **ctx), ctx)
    assert (failure.kind if failure else None) == kind, failure
    failure = check("attitude_update", value, prompt_of("x"), {**ctx, "recent": []})
    assert (failure.kind if failure else None) == alone, failure


@pytest.mark.parametrize("prior", [7.5, 5.0])
def test_an_attitude_copied_from_the_prompts_example_is_no_answer(prior: float) -> None:
    """The prompt's example shows the stance held so far (a copy moves nothing, where a
    fixed example would pull every copied stance to its value); copied with its reason slot
    emptied by the schema, it is still no answer of the model's own."""
    from societas.agents.cognition.prompts import messages
    from societas.agents.llm.tasks import AttitudeUpdate

    fields = {"name": "Ada", "topic": "the flood barrier", "attitude": f"{prior:.1f}"}
    system = {"name": "Ada", "profile": "age: 58"}
    msgs = messages("attitude_update", system, self_description="", memories="", **fields)
    example = json.loads(re.search(r"\{\"attitude\".*\}", msgs[-1]["content"]).group())
    copied = AttitudeUpdate.model_validate(example)  # "<why, in one sentence>" is no reason
    assert copied.reason == "" and copied.attitude == example["attitude"] == prior
    ctx = {"name": "Ada", "topic": "the flood barrier", "attitude": prior, "recent": ["rain"]}
    found = check("attitude_update", copied, prompt_of(msgs[-1]["content"]), ctx)
    assert found is not None and found.kind == "copied_example", found
    own = AttitudeUpdate(attitude=5.5, reason="")  # a number of its own needs no reason
    assert check("attitude_update", own, prompt_of(msgs[-1]["content"]), ctx) is None


def test_a_copied_example_number_is_caught_whatever_the_template_shows() -> None:
    """A scenario's own template may show another example: its number, given with no words,
    is the copy, and the default template's 5.0 is then an answer like any other."""
    from societas.agents.llm.tasks import AttitudeUpdate

    own = 'Reply with ONLY a JSON object: {"attitude": 7.0, "reason": "<why>"}'
    ctx = {"name": "Ada", "topic": "the flood barrier", "attitude": 6.0, "recent": ["rain"]}
    copied = AttitudeUpdate(attitude=7.0, reason="")
    found = check("attitude_update", copied, prompt_of(own), ctx)
    assert found is not None and found.kind == "copied_example", found
    assert check("attitude_update", AttitudeUpdate(attitude=5.0), prompt_of(own), ctx) is None
    grounded = AttitudeUpdate(attitude=7.0, reason="The flood barrier held in the rain.")
    assert check("attitude_update", grounded, prompt_of(own), ctx) is None


def test_a_talk_decision_copied_from_the_example_is_no_decision() -> None:
    """The talk prompt's example says talk_to 0 (nobody): copied with its reason slot left
    empty or restating the instructions, every agent would stay silent as its own choice;
    nobody, with a reason, is one."""
    from societas.agents.cognition.prompts import messages
    from societas.agents.cognition.talk import TalkChoice

    system = {"name": "Ada", "profile": "age: 58"}
    fields = {"name": "Ada", "place": "the park", "mood": "calm", "needs": "social 0.4"}
    msgs = messages("talk_decision", system, news="nothing", people="1. Ben (a friend)", **fields)
    text = msgs[-1]["content"]
    example = json.loads(re.search(r"\{\"talk_to\".*?\}", text).group())
    ctx = {"name": "Ada", "n": 1}
    copies = (  # the last: SmolLM2's reason, only words of the instructions ("talk to nobody")
        TalkChoice.model_validate(example),
        TalkChoice(talk_to=example["talk_to"]),
        TalkChoice(talk_to=example["talk_to"], reason="talking to nobody"),
        # SmolLM2's own, kept first try: nobody, and a reason saying there is none
        TalkChoice(talk_to=example["talk_to"], reason="no reason yet"),
        TalkChoice(talk_to=example["talk_to"], reason="Nothing in particular"),
        TalkChoice(talk_to=example["talk_to"], reason="No reason needed to be given"),
        # a code for a reason, then none (SmolLM2's "unrealistic-2.1; no details" is also
        # refused as copied_prompt, its number glued to a word)
        TalkChoice(talk_to=example["talk_to"], reason="R-2.1; no details"),
        TalkChoice(talk_to=example["talk_to"], reason="2.1"),
        TalkChoice(talk_to=example["talk_to"], reason="No details given."),
    )
    for copied in copies:
        found = check("talk_decision", copied, prompt_of(text), ctx)
        assert found is not None and found.kind == "copied_example", (copied, found)
    for own in (
        TalkChoice(talk_to=0, reason="I would rather read alone."),
        TalkChoice(talk_to=0, reason="Ben and I have never talked."),
        TalkChoice(talk_to=1),
        TalkChoice(talk_to=1, reason="no particular reason"),  # someone chosen: a decision
        TalkChoice(talk_to=0, reason="Nothing in particular to tell Ben today."),
        TalkChoice(talk_to=0, reason="It is 9 pm; too late to talk."),
        TalkChoice(talk_to=0, reason="Ben gave no details of the 2 fires, so I wait."),
    ):
        assert check("talk_decision", own, prompt_of(text), ctx) is None, own
    # The check reads the example's number from the prompt: with another example, nobody for
    # no reason is a decision and that example's person for no reason is the copy.
    other = text.replace('{"talk_to": 0,', '{"talk_to": 2,')
    assert other != text
    ctx = {"name": "Ada", "n": 2}
    assert (
        check("talk_decision", TalkChoice(talk_to=0, reason="none"), prompt_of(other), ctx) is None
    )
    found = check("talk_decision", TalkChoice(talk_to=2, reason="none"), prompt_of(other), ctx)
    assert found is not None and found.kind == "copied_example", found


@pytest.mark.parametrize(
    ("talk_to", "reason", "mismatch"),
    [
        # SmolLM2's own: nobody chosen, and a reason that talks to the one person listed
        (0, "She needs a moment to talk to Mia Brown.", True),
        (0, "To talk to Ben Nagy", True),  # as SmolLM2 wrote it of its one person
        (2, "Talk to Mia about the festival", True),  # the reason's person is number 1
        (1, "She needs a moment to talk to Mia Brown.", False),
        (2, "Mia is busy, so I'll talk to Ben", False),  # the clause after "so" decides
        (2, "I'd rather chat with Ben than Mia", False),
        (0, "I won't talk to Mia today", False),  # denied
        (0, "Too tired to talk to Ben.", False),
        (0, "I want to talk to Mia and then speak with Ben", False),  # two people: no one
        (2, "I'd like to talk to Mia, but she's busy; Ben then.", False),  # taken back
        (0, "I'm going to talk to Sam Quinn", False),  # not listed: unknown_person's to judge
        (0, "We were talking about Ben.", False),
    ],
)
def test_a_talk_reason_naming_another_person_than_the_number_is_a_mismatch(
    talk_to: int, reason: str, mismatch: bool
) -> None:
    """A reason that says whom the agent talks to ("She needs a moment to talk to Mia Brown")
    beside a number naming someone else or nobody says two things: no decision."""
    from societas.agents.cognition.talk import TalkChoice

    ctx = {
        "name": "Yara Rossi",
        "n": 2,
        "candidates": [{"name": "Mia Brown"}, {"name": "Ben Nagy"}],
    }
    found = check("talk_decision", TalkChoice(talk_to=talk_to, reason=reason), prompt_of("x"), ctx)
    assert (found is not None and found.kind == "value_mismatch") is mismatch, found
    assert found is None or mismatch


def test_a_reason_writing_back_a_label_of_the_prompt_is_copied() -> None:
    """A reason that writes one of the prompt's labels with its colon ("The people Cleo Adams
    meets: One of them is Paul Hill", SmolLM2's own, kept first try) lays the prompt out
    again; the same words without the colon, or a colon after words of its own, are speech."""
    from societas.agents.cognition.prompts import messages
    from societas.agents.cognition.talk import TalkChoice

    system = {"name": "Cleo Adams", "profile": "age: 31"}
    fields = {"name": "Cleo Adams", "place": "the cafe", "mood": "calm", "needs": "social 0.4"}
    people = "1. Paul Hill (a friend)"
    msgs = messages("talk_decision", system, news="the bridge is closed", people=people, **fields)
    ctx = {"name": "Cleo Adams", "n": 1, "candidates": [{"name": "Paul Hill", "memories": []}]}
    prompt = Prompt.of(msgs, None, ctx, "talk_decision")
    for copied in (
        "The people Cleo Adams meets: One of them is Paul Hill",  # SmolLM2's own
        "News Cleo Adams could tell: the bridge is closed",
        "Cleo Adams could tell: nothing in particular",  # the label's tail: SmolLM2's own
        "the people Cleo Adams meets",  # the label alone, as SmolLM2 gave it for Umar Lopez
    ):
        found = check("talk_decision", TalkChoice(talk_to=1, reason=copied), prompt, ctx)
        assert found is not None and found.kind == "copied_prompt", (copied, found)
    for own in (
        "The people Cleo Adams meets are all friends of hers.",
        "I want to tell Paul Hill: the bridge is closed.",  # the rules policy's form
    ):
        assert check("talk_decision", TalkChoice(talk_to=1, reason=own), prompt, ctx) is None


def test_an_example_number_with_words_of_its_own_is_an_answer() -> None:
    """Only numbers with no words of the answer's own are the example's: a thought of its
    own at the example's intensity is the person's."""
    from societas.agents.llm.tasks import ThoughtUpdate

    text = 'Reply with ONLY a JSON object: {"thought": "...", "emotion": "Hope", "intensity": 0.5}'
    own = ThoughtUpdate(thought="The river is rising fast.", emotion="Hope", intensity=0.5)
    assert check("thought_update", own, prompt_of(text), {"name": "Ann"}) is None


@pytest.mark.parametrize(
    ("triple", "failed"),
    [  # the first three are SmolLM2's own triples
        (("the bakery", "The Baker at the bakery.", "Ben"), True),
        (("The bakery", "the bakery", "Ben"), True),
        (("The market", "Businesses and shops that Ben works in and lives at", "ben"), True),
        (("Ben", "knows", "ben"), True),
        (("I", "went to", "the bakery"), False),
        (("Ada", "is worried about", "the river"), False),
    ],
)
def test_a_fact_is_a_triple_with_a_short_relation_of_its_own(triple, failed: bool) -> None:
    from societas.agents.cognition.attention import Facts

    fact = dict(zip(("subject", "relation", "object"), triple, strict=True))
    value = Facts.model_validate({"facts": [fact]})
    failure = check("facts", value, prompt_of("Facts?"), {})
    assert (failure is not None and failure.kind == "not_a_fact") == failed, failure


def test_a_facts_relation_may_end_on_its_preposition() -> None:
    """A fact's parts are phrases, not sentences: 'went to' and 'is worried about' end
    where a relation does."""
    from societas.agents.cognition.attention import Facts

    triples = [("I", "went to", "work-0"), ("Ada", "is worried about", "the river")]
    facts = [dict(zip(("subject", "relation", "object"), t, strict=True)) for t in triples]
    assert check("facts", Facts.model_validate({"facts": facts}), prompt_of("Facts?"), {}) is None


@pytest.mark.parametrize(
    ("reason", "unfinished"),
    [
        ("The people Gia Diaz meets:", True),  # SmolLM2's own reason: the prompt's heading
        ("Here is my reason: ", True),
        ("I want to tell Noah: the bridge is closed.", False),  # a colon with what it announces
        ("We meet at 9:30 every day.", False),
        ("I saw Noah at the bakery and,", True),  # a sentence that stops
        ("deprecated,", True),  # SmolLM2's own reason: one word, cut at its comma
        ("I saw Noah at the bakery. Then I went", True),
        ("I saw Noah. He looked tired.", False),
        ("Ask Noah about the bridge", False),  # one sentence, no full stop
        ("The river was rising due to ", True),  # SmolLM2's summary, closed by the model
        ("I was just about to pack up my things when I\u2019", True),
        ("We talked about the river and", True),
        ("Plans for the week - ", True),
        ("Bread, milk and eggs", False),
        ("I don't know what it was for.", False),
        # SmolLM2's stance reason, kept first try: the reason announced, not given
        ("Your status has been described as negative by me and I'm going to tell you why.", True),
        ("I'll tell you why I came.", False),
        (". I'm getting ready to go home.", True),  # SmolLM2's, kept: opens on a full stop
    ],
)
def test_a_text_that_stops_at_a_colon_or_mid_sentence_gives_nothing_in_any_task(
    reason: str, unfinished
) -> None:
    """A talk reason, a summary and a plan step each fail as `empty` when they end on what
    they announce; the task's own checks come first."""
    from societas.agents.cognition.talk import TalkChoice

    ctx = {"name": "Gia Diaz", "n": 1, "candidates": [{"name": "Noah Adams"}]}
    found = check("talk_decision", TalkChoice(talk_to=0, reason=reason), prompt_of("x"), ctx)
    assert (found is not None and found.kind == "empty") is unfinished, found
    assert found is None or unfinished
    step = {"minute": 0, "duration_min": 60, "action": reason}
    planned = check("hourly_plan", HourlyPlan(steps=[step]), prompt_of("x"), {})
    assert (planned is not None and planned.kind == "empty") is unfinished, planned
    torn = step | {"minute": 5, "duration_min": 55}
    untiled = check("hourly_plan", HourlyPlan(steps=[torn]), prompt_of("x"), {})
    assert untiled is not None and untiled.kind == "not_tiled"  # the task's own check first


def test_every_kind_of_failed_check_is_explained_in_the_docs() -> None:
    """docs/llm.md's table of kinds names each kind the checks and the gateway count, and no
    other: a researcher reading `meaning.KIND` in run.json finds what it means."""
    from pathlib import Path

    from societas.agents.llm.meaning import KINDS

    text = (Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.MULTILINE)
    assert sorted(documented) == sorted(KINDS), set(documented) ^ set(KINDS)


SELF_DESCRIPTION = (
    "You are a female, aged 45, belonging to the white race and identifying as no religion. "
    "Your marital status is single, and you currently reside in a suburban area."
)


@pytest.mark.parametrize(
    ("thought", "kind"),
    [  # the first is SmolLM2's own thought, which was kept as data
        (
            "You are a female, aged 45, belonging to the white race and identifying as no "
            "religion. Your marital status is single, &#",
            "copied_prompt",
        ),
        (
            "you currently reside in a suburban area and your marital status is single",
            "copied_prompt",
        ),
        (  # SmolLM2's, kept as first_try: the self-description told as "I", a fact made up
            "I am a female, aged 45. I currently reside in a suburban area and my marital "
            "status is single. I have a family of 12 children.",
            "copied_prompt",
        ),
        ("The river flooded the bakery and I am still shaken.", None),  # a listed memory
        ("Ben posted that the carbon tax is fair; I am not sure.", None),
        ("I am a female nurse, and I fear the river will flood the bakery.", None),
        ("At 45 I am still single, and the suburban quiet feels lonely tonight.", None),
    ],
)
def test_a_thought_is_not_the_self_description_read_back(thought: str, kind) -> None:
    """The thought prompt shows the seed's self-description: restated, it is no thought of
    the day's (the memories listed below it may be passed on)."""
    from societas.agents.cognition.prompts import messages
    from societas.agents.llm.tasks import ThoughtUpdate

    memories = "- the river flooded the bakery\n- Ben posted: the carbon tax is fair"
    fields = {"name": "Ann", "words": "Joy, Hope, Fear", "needs": "hunger 0.6"}
    msgs = messages(
        "thought_update",
        {"name": "Ann", "profile": "age: 45"},
        self_description=SELF_DESCRIPTION,
        memories=memories,
        **fields,
    )
    ctx = {"name": "Ann", "thought": "nothing in particular", "recent": memories.split("\n")}
    prompt = Prompt.of(msgs, schema_of(ThoughtUpdate), ctx, "thought_update")
    value = ThoughtUpdate(thought=thought, emotion="Fear", intensity=0.6)
    failure = check("thought_update", value, prompt, ctx)
    assert (failure.kind if failure else None) == kind, failure


@pytest.mark.parametrize(
    ("thought", "kind"),
    [  # SmolLM2's own first: kept as first_try
        (
            "Gia Diaz's emotional state now: calm, she is very happy to have nothing to fear.",
            "narrated",
        ),
        ("Gia Diaz is tired after work.", "narrated"),
        ("I woke at 3. Gia Diaz thought about the storm and decided to stay.", "narrated"),
        ("My name is Gia Diaz and I am tired.", None),
        (  # SmolLM2's, kept as first_try: the prompt's voice going on, to "you"
            "You are going to relax at home, 1:45 pm; 2 hours later, you will have breakfast.",
            "not_first_person",
        ),
        (  # SmolLM2's, kept first try: a second sentence telling "you" what comes
            "Nice job, kim. You are going to relax at home and have breakfast tomorrow.",
            "not_first_person",
        ),
        ("20:15:39, emotion", "echoed_schema"),  # SmolLM2's, kept first try: a field's name
        ("Emotions run high tonight.", None),
        ("Quiet evening. You know, the bakery smelled of bread.", None),
        ("You did well today, I tell myself.", None),  # self-talk, as "I"
        (  # SmolLM2's, kept after a re-ask: the model asking its prompt back
            "A new person has come to visit. What are you talking about?",
            "not_first_person",
        ),
        ("Why did you leave so early, Leo? I miss you already.", None),
        (  # SmolLM2's, kept after a re-ask: comfort for "you", an answer to someone
            "The pain of losing loved ones is too much to bear. I can only imagine how "
            "difficult it must be for you.",
            "not_first_person",
        ),
        ("I can only imagine how hard the winter will be.", None),
        (  # SmolLM2's, kept after a re-ask: a post with hashtags, not a thought
            "Pure Happiness and Love for Life, May You Live forever! #LoveMatters #FaithfulFamily",
            "out_of_character",
        ),
        ("My #1 worry is the rent.", None),
        (  # SmolLM2's, kept after a re-ask: the prompt's emotions, listed
            "Love, Hate, Reprehensure, Ignorance, Anger, Gratulation, Hope, Sorrow, Pride",
            "copied_prompt",
        ),
        ("Work, sleep, repeat.", None),
        (  # SmolLM2's, kept first try: the emotions listed, cut on a letter
            "Hope, Joy, Restore, Disappointment, Pride; Relief, Gratitude, Grativeness; Hope, E.",
            "copied_prompt",
        ),
        ("Love, hate, hope: what a day.", None),
        ("A new person in town. What could they want?", None),
        ("I keep thinking of Gia Diaz's party tomorrow.", None),
        ("Work was long; the bakery smelled of bread.", None),
    ],
)
def test_a_thought_told_of_the_thinker_by_name_is_no_thought_of_theirs(thought, kind) -> None:
    assert thought_failure(thought) == kind


@pytest.mark.parametrize(
    ("thought", "kind"),
    [
        ("Likely: Love, Joy", "copied_prompt"),  # SmolLM2's, kept after a re-ask
        ("Hope, Fear.", "copied_prompt"),
        ("Fear and hope, all day.", None),
        ("Joy: the bakery sold out.", None),
    ],
)
def test_a_thought_of_the_prompts_emotion_words_alone_is_no_thought(thought, kind) -> None:
    from societas.agents.cognition.emotions import INTENSITIES, OCC_WORDS
    from societas.agents.llm.tasks import ThoughtUpdate

    ctx = {"name": "Gia Diaz", "thought": "nothing in particular", "recent": []}
    ctx["choices"] = {"emotion": [*OCC_WORDS, *INTENSITIES]}  # as update_thought passes them
    value = ThoughtUpdate(thought=thought, emotion="Joy", intensity=0.4)
    failure = check("thought_update", value, prompt_of("Your thought?"), ctx)
    assert (failure.kind if failure else None) == kind, failure


@pytest.mark.parametrize(
    ("task", "value"),
    [  # SmolLM2's talk reason, kept as 'repaired': the reply's JSON broken inside the value
        (
            "talk_decision",
            {
                "talk_to": 0,
                "reason": "The people Noah Adams meets: Ines Nagy (closeness 2.5), remembers "
                "nothing }\n{}\nAwesome, there is no one,",
            },
        ),
        ("dialogue_turn", {"utterance": 'Hello Ben! {"end": false}'}),
        # SmolLM2's talk reason, kept first try: the people list's line made a slot
        ("talk_decision", {"talk_to": 0, "reason": "[1. Leo Rossi, in another sentence]"}),
    ],
)
def test_a_text_of_json_or_markup_is_no_answer_in_any_task(task: str, value: dict) -> None:
    from societas.agents.cognition.talk import TalkChoice

    schema = TalkChoice if task == "talk_decision" else DialogueTurn
    ctx = {"name": "Noah Adams", "n": 1}
    failure = check(task, schema.model_validate(value), prompt_of("Reply."), ctx)
    assert failure is not None and failure.kind == "copied_prompt", failure
    plain = {
        **value,
        **{k: "Hello Ben, nice to see you." for k in ("utterance", "reason") if k in value},
    }
    assert check(task, schema.model_validate(plain), prompt_of("Reply."), ctx) is None


@pytest.mark.parametrize(
    ("thought", "held", "kind"),
    [  # SmolLM2's own, as kept first try (an insight, a survey answer)
        ("Ben's plan for 1:02:45 is to visit the hotel, which will be at 1:03:19.", "", "garbled"),
        ("My plan for 11:00:12:43 work was saved.", "", "garbled"),
        ("My plan for 1:02:45 is the hotel.", "- I wrote down: hotel at 1:02:45", None),
        ("The shelter opened at 9:30, so I went at 10:00.", "", None),
        ("I scored 3:2:1 in the game.", "", None),
        ("Myspace, 2015-10-30", "", "garbled"),  # SmolLM2's survey answer, kept: a made-up date
        ("I was very tired at 4:13.50 and went back to sleep.", "", "garbled"),  # SmolLM2's
        ("I came at 9:30. 50 people were there.", "", None),
        ("I can't wait for 2026-06-01, the fair!", "- the fair opens on 2026-06-01", None),
        (  # SmolLM2's survey answer, kept first try (hur-601): a date the town never has
            "I went to work on the 10th of January. I will be returning home tomorrow.",
            "",
            "garbled",
        ),
        ("The fair is on March 3, they say.", "- the fair opens on March 3", None),
        ("The 3rd of us arrived late.", "", None),
    ],
)
def test_a_time_finer_than_the_town_clock_the_prompt_never_gave_is_garbled(
    thought, held, kind
) -> None:
    assert thought_failure(thought, f"Your thought?\n{held}") == (kind and "garbled_time")


def test_a_time_only_the_reply_being_re_asked_gave_is_still_garbled() -> None:
    from societas.agents.llm.tasks import ThoughtUpdate

    said = "I'll be at work at 20:15:39."
    msgs = [
        {"role": "system", "content": "You are Gia Diaz, a person living in a simulated town."},
        {"role": "user", "content": "Your thought?"},
        {"role": "assistant", "content": json.dumps({"thought": said})},
        {"role": "user", "content": "Reply again."},
    ]
    value = ThoughtUpdate(thought=said, emotion="Joy", intensity=0.4)
    ctx = {"name": "Gia Diaz", "thought": "nothing in particular", "recent": []}
    failure = check("thought_update", value, Prompt.of(msgs, None, ctx, "thought_update"), ctx)
    assert failure is not None and failure.kind == "garbled_time", failure


@pytest.mark.parametrize(
    ("text", "kind"),
    [  # SmolLM2's own, as kept first try (an insight, a survey answer)
        ("Ben Tanaka is going to work at his new job, 13:00: 13:00.", "copied_prompt"),
        ("It was 11:00: 11:00 when a hurricane hit.", "copied_prompt"),
        ("1.0, mood: relief, need: hunger 3, energy 2, safety 4;", "copied_prompt"),  # SmolLM2's
        ("My mood: grim. The storm is coming.", None),
        ("Hunger 3 days in a row, and the shelter is full.", None),
        ("I am anxious about Jon Rossi's plan for 7:00: 10, as I'm not sure.", "copied_prompt"),
        ("I left at 12:00: 10 people were there.", None),
        ("I remember: my plan for 21:00: 21:00 relax at home.", None),  # as the rules say it
        ("I left at 12:00: the shelter was full by 13:00.", None),
        ("From 9:00 to 9:00 the next day I stayed home.", None),
        # SmolLM2's, kept first try to "How was your day?": the memory list's plan
        ("Bo's plan for 12:00 breakfast, and prepare; 13:16 continue", "copied_prompt"),
        ("I ate at 12:00 breakfast with Bo; 13:16 continue the same routine", "copied_prompt"),
        (  # SmolLM2's survey answer, re-asked and kept (pol-601): the layout, cut
            "I made the decision to reduce carbon emissions, which you completed at 8:00: 8:0",
            "copied_prompt",
        ),
        ("Ava's plan for 16:30 is set to prepare for the teacher at work.", "copied_prompt"),
        ("Ava's plan for the evening was dinner at home.", None),
        ("I had breakfast at 8:00; lunch was late.", None),
        ("We met at 10:00; by 11:00 the shelter was full.", None),
    ],
)
def test_a_plans_memory_layout_in_a_text_is_the_prompt_not_words(text, kind) -> None:
    assert thought_failure(text) == kind


@pytest.mark.parametrize(
    ("reason", "attitude", "kind"),
    [  # SmolLM2's, kept first try: against in words, 10 of 10 in the value
        ("I am strongly opposed to carbon tax and oppose it completely by far.", 10.0, "vm"),
        ("I am strongly opposed to carbon tax and oppose it completely by far.", 1.0, None),
        ("I support the carbon tax now.", 2.0, "vm"),
        ("I support the carbon tax, a little.", 5.5, None),  # near the middle: no lean to hold
        ("I hate how dear fuel is. The carbon tax may help, I think.", 8.0, None),  # not the tax
        ("I don't support the carbon tax.", 8.0, "vm"),
    ],
)
def test_an_attitude_leaning_the_other_way_than_its_reason_is_no_stance(
    reason: str, attitude: float, kind
) -> None:
    from societas.agents.llm.tasks import AttitudeUpdate

    recent = ["Dan posted: I support carbon tax: it is good and fair."]
    ctx = {"name": "Ada Adams", "topic": "carbon tax", "attitude": 5.0, "recent": recent}
    value = AttitudeUpdate(attitude=attitude, reason=reason)
    failure = check("attitude_update", value, prompt_of("Your attitude?", **ctx), ctx)
    assert (failure.kind if failure else None) == {"vm": "value_mismatch"}.get(kind), failure
