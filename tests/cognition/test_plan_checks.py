"""Plans from a model: placeholder text is dropped (too much of it: the answer is invalid and
the gateway re-asks, then falls back, counted), an hour's steps are never re-tiled, and the rules
policy's plans pass through unchanged."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from pydantic import ValidationError

from societas.agents.cognition import plan_day
from societas.agents.cognition.persona import persona_of
from societas.agents.cognition.planning import default_plan
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.meaning import tiles_hour
from societas.agents.llm.plan_checks import is_placeholder, not_an_action
from societas.agents.llm.rules import answer
from societas.agents.llm.tasks import DailyPlan, HourlyPlan, Reaction
from tests.chat_server import chat_server

PLACEHOLDERS = [
    "",
    "   ",
    "...",
    "…",
    ". . .",
    "going to ...",
    "... or null",
    "eat ...",
    "activity",
    "Location",
    "action.",
    "<activity>",
    "{location}",
    "go to [place]",
    "null",
    None,
    7,
]
REAL = ["have breakfast", "work at the bakery", "wait...what", "home-3", "go to the cafe"]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_placeholder_text_is_recognised(text) -> None:
    assert is_placeholder(text)


@pytest.mark.parametrize("text", REAL)
def test_real_text_is_not_a_placeholder(text) -> None:
    assert not is_placeholder(text)


@pytest.mark.parametrize("text", ["work-9},{", 'eat"', "[cook]", "school-1283554672", "home-1"])
def test_json_debris_and_place_ids_are_no_action(text) -> None:
    assert not_an_action(text)
    assert not not_an_action("work at home-1") and not not_an_action("have a 5-min break")


def item(hour, activity="have breakfast", location="home-1"):
    return {"start_hour": hour, "activity": activity, "location": location}


def test_placeholder_items_are_dropped_and_counted_the_rest_sorted_one_per_hour() -> None:
    plan = DailyPlan.model_validate(
        {
            "items": [
                item(12, "have lunch"),
                item(7),
                item(9, "going to ..."),
                item(7, "a second item at seven"),
                item(30, "out of range"),
                item(22, "sleep", "..."),
                item(18, "meet friends", ""),
            ]
        }
    )
    assert [(i.start_hour, i.activity) for i in plan.items] == [
        (7, "have breakfast"),
        (12, "have lunch"),
        (18, "meet friends"),
        (22, "sleep"),
    ]
    assert plan.dropped == 2
    # a placeholder or empty location becomes a word the mobility block resolves to home
    assert [i.location for i in plan.items] == ["home-1", "home-1", "home", "home"]


@pytest.mark.parametrize(
    "items",
    [
        [item(7, "..."), item(8, "...", "Home")],
        [item(7, "..."), item(9, "going to ..."), item(12, "have lunch")],
        [item(7, "activity"), item(40)],
        [item(7), item(9, "work-9},{")],  # one good item left of two
    ],
)
def test_a_plan_of_mostly_placeholders_is_invalid(items) -> None:
    with pytest.raises(ValidationError, match="placeholders"):
        DailyPlan.model_validate({"items": items})


def test_a_clean_one_item_plan_stays_valid() -> None:
    assert DailyPlan.model_validate({"items": [item(8, "rest")]}).items[0].activity == "rest"


def steps_of(plan: HourlyPlan) -> list[tuple[int, int, str]]:
    return [(s.minute, s.duration_min, s.action) for s in plan.steps]


def assert_tiles(steps: list[tuple[int, int, str]]) -> None:
    assert steps[0][0] == 0 and steps[-1][0] + steps[-1][1] == 60
    for (m, d, _), (nxt, _, _) in itertools.pairwise(steps):
        assert m + d == nxt and d >= 5


def test_steps_are_sorted_never_re_tiled_and_the_tiling_is_a_meaning_check() -> None:
    raw = [
        {"minute": 30, "duration_min": 10, "action": "read"},
        {"minute": 0, "duration_min": 8, "action": "wake"},
        {"minute": 8, "duration_min": 23, "action": "wash"},
    ]
    steps = steps_of(HourlyPlan.model_validate({"steps": raw}))
    assert steps == [(0, 8, "wake"), (8, 23, "wash"), (30, 10, "read")]  # as the model said
    assert not tiles_hour([(m, d) for m, d, _ in steps])
    assert tiles_hour([(0, 15), (30, 30), (15, 15)])
    assert not tiles_hour([(0, 15), (15, 15), (30, 15)])  # ends at minute 45
    assert not tiles_hour([(5, 55)])


def test_placeholder_steps_are_dropped_and_too_many_make_the_hour_invalid() -> None:
    ok = HourlyPlan.model_validate(
        {
            "steps": [
                {"minute": 0, "duration_min": 15, "action": "get dressed"},
                {"minute": 15, "duration_min": 15, "action": "..."},
                {"minute": 30, "duration_min": 30, "action": "walk to work"},
            ]
        }
    )
    assert steps_of(ok) == [(0, 15, "get dressed"), (30, 30, "walk to work")]  # not re-tiled
    assert ok.dropped == 1
    with pytest.raises(ValidationError, match="placeholders"):
        HourlyPlan.model_validate(
            {
                "steps": [
                    {"minute": 6, "duration_min": 10, "action": "..."},
                    {"minute": 7, "duration_min": 25, "action": "..."},
                    {"minute": 8, "duration_min": 30, "action": "Meal"},
                ]
            }
        )


def test_placeholder_reaction_fields_count_as_not_given() -> None:
    r = Reaction.model_validate(
        {"react": True, "reaction": "...", "new_activity": "... or null", "location": "<place>"}
    )
    assert (r.reaction, r.new_activity, r.location) == ("", None, None)


def test_rules_plans_pass_through_unchanged() -> None:
    """The rules policy already tiles the hour and plans one item an hour: normalising its
    answers must not change them (runs on rules stay as they were)."""
    for seed in range(40):
        ctx = {"activity": "bake bread", "profile": {"home": "home-1", "workplace": "bakery-1"}}
        raw = answer("hourly_plan", ctx, seed)
        assert isinstance(raw, dict)
        assert [s.model_dump() for s in HourlyPlan.model_validate(raw).steps] == raw["steps"]
        raw = answer("daily_plan", {**ctx, "needs": {"social": 0.2, "hunger": 0.2}}, seed)
        assert isinstance(raw, dict)
        plan = DailyPlan.model_validate(raw)
        assert [i.model_dump() for i in plan.items] == raw["items"] and plan.dropped == 0


@asynccontextmanager
async def canned(replies: list[str]) -> AsyncIterator[str]:
    """A real OpenAI-style server on loopback answering with `replies` in turn (the last
    one repeated): a model that keeps copying the prompt's placeholders."""
    served: list[str] = []

    def answer(body: dict[str, Any]) -> str:
        last = body["messages"][-1]["content"]
        if not last.startswith(("Plan ", "That ")):  # importance of a memory
            text = json.dumps({"score": 5, "results": [{"score": 5}] * 8})
        else:
            text = replies[min(len(served), len(replies) - 1)]
        served.append(text)
        return text

    async with chat_server(answer, model="canned") as (url, _):
        yield url


async def test_a_placeholder_plan_is_reasked_then_falls_back_counted() -> None:
    bad = json.dumps({"items": [item(7, "..."), item(8, "going to ...", "...")]})
    good = json.dumps({"items": [item(7), item(9, "..."), item(12, "have lunch")]})
    async with canned([bad, good]) as url:
        gw = LLMGateway({"endpoints": [{"base_url": url, "model": "canned"}], "json_reasks": 1})
        async with gw:
            out = await gw.json([{"role": "user", "content": "plan"}], DailyPlan)
    assert [i.activity for i in out.items] == ["have breakfast", "have lunch"]
    assert out.dropped == 1
    assert gw.accounting.events["json.invalid"] == 1 and gw.accounting.events["json.reask"] == 1
    async with canned([bad]) as url:
        gw = LLMGateway({"endpoints": [{"base_url": url, "model": "canned"}], "json_reasks": 1})
        fallback = DailyPlan(items=[item(8, "rest")])
        async with gw:
            out = await gw.json([{"role": "user", "content": "plan"}], DailyPlan, fallback=fallback)
    assert out.items == fallback.items and out.answer_source == "fallback"
    assert gw.accounting.events["json.invalid"] == 2 and gw.accounting.events["json.fallback"] == 1


async def test_plan_day_counts_dropped_items_and_puts_unknown_places_at_home(group) -> None:
    answer = [
        item(7, "have breakfast", "..."),
        item(9, "going to ..."),
        item(10, "teach", "school"),
        item(12, "have lunch", "school"),
        item(20, "read a book", "flat 1"),
    ]
    async with canned([json.dumps({"items": answer})]) as url:
        gw = LLMGateway({"endpoints": [{"base_url": url, "model": "canned"}]})
        async with gw:
            plan = await plan_day(group.agent(1), gw, day=1)
    assert [(i.start_hour, i.location) for i in plan.items] == [
        (7, "flat 1"),
        (10, "school"),
        (12, "school"),
        (20, "flat 1"),
    ]
    stored = await group.agent(1).status.get("plan")
    assert [i["location"] for i in stored["items"]] == ["flat 1", "school", "school", "flat 1"]
    # Counted once: in the task's dropped_items (run.json's llm_tasks), not also as an event.
    assert gw.accounting.snapshot()["tasks"]["daily_plan"]["dropped_items"] == 1
    assert "plan.dropped_items" not in gw.accounting.events


def test_plan_texts_are_shared_across_parsed_answers() -> None:
    """Each parsed answer made its own copy of 'work' or a home's name; plans of thousands of
    agents now share one string each."""
    a = DailyPlan.model_validate(json.loads(json.dumps({"items": [item(9, "work", "office")]})))
    b = DailyPlan.model_validate(json.loads(json.dumps({"items": [item(10, "work", "office")]})))
    assert a.items[0].activity is b.items[0].activity
    assert a.items[0].location is b.items[0].location
    steps = [{"minute": 0, "duration_min": 30, "action": "check email"}] * 2
    x, y = (HourlyPlan.model_validate(json.loads(json.dumps({"steps": steps}))) for _ in "ab")
    assert x.steps[0].action is y.steps[0].action


def test_the_fallback_day_works_only_at_a_workplace_and_dines_for_an_hour() -> None:
    """A model's plan that never validates falls back to a plain day: no one works at home
    for want of a workplace, and dinner does not last until bedtime."""
    worker = persona_of(0, {"name": "Ann Lee", "home": "flat-1", "work": "school-1"}, {})
    idle = persona_of(1, {"name": "Bob Ray", "home": "flat-2", "work": ""}, {})
    for p, day in ((worker, ("work", "school-1")), (idle, ("look after things at home", "flat-2"))):
        plan = [(i.start_hour, i.activity, i.location) for i in default_plan(p).items]
        home = p.profile["home"]
        assert plan == [
            (7, "wake up and have breakfast", home),
            (9, *day),
            (18, "have dinner", home),
            (19, "relax at home", home),
            (22, "sleep", home),
        ]
