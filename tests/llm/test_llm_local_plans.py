"""Plans from a real language model (SmolLM2-135M on llama-cpp-python's server, loopback):
the planning prompts as cognition renders them, answered by the model; a plan it accepts has
no copied placeholder or example and its hourly steps tile the hour, and every answer is
accounted for by its source (a tiny model mostly copies the example: counted fallbacks)."""

from __future__ import annotations

import itertools

import pytest

from societas.agents.cognition.persona import fmt_needs, persona_of
from societas.agents.cognition.planning import default_plan
from societas.agents.cognition.prompts import messages
from societas.agents.llm.plan_checks import is_placeholder
from societas.agents.llm.tasks import DailyPlan, HourlyPlan

pytestmark = pytest.mark.llm

PEOPLE = [
    {"name": "Ada Adams", "age": 58, "occupation": "unemployed", "home": "home-1"},
    {"name": "Ben Brown", "age": 31, "occupation": "baker", "home": "home-2", "work": "work-3"},
    {"name": "Cy Cole", "age": 24, "occupation": "student", "home": "home-4", "work": "work-5"},
]


async def test_the_model_plans_without_placeholders_and_its_hours_tile(model_gateway) -> None:
    gw = model_gateway(max_tokens=256)
    async with gw:
        for aid, profile in enumerate(PEOPLE):
            p = persona_of(aid, profile, {})
            day = await gw.json(
                messages(
                    "daily_plan",
                    p.system(),
                    name=p.name,
                    day=1,
                    needs=fmt_needs(p.needs),
                    mood=p.mood(),
                    memories="(none)",
                    places=p.places(),
                ),
                DailyPlan,
                task="daily_plan",
                context={"places": p.known_places(), "needs": p.needs},
                seed=aid,
                fallback=lambda p=p: default_plan(p),
            )
            assert day.answer_source in ("first_try", "repaired", "re_asked", "fallback")
            assert not any("example" in i.activity for i in day.items), day
            hours = [i.start_hour for i in day.items]
            assert hours == sorted(set(hours)), day
            for i in day.items:
                assert not is_placeholder(i.activity) and not is_placeholder(i.location), day
            item = day.items[min(1, len(day.items) - 1)]
            hour = await gw.json(
                messages(
                    "hourly_plan",
                    p.system(),
                    name=p.name,
                    plan="; ".join(f"{i.start_hour}:00 {i.activity}" for i in day.items),
                    mood=p.mood(),
                    needs=fmt_needs(p.needs),
                    activity=item.activity,
                    location=item.location,
                    hour=item.start_hour,
                ),
                HourlyPlan,
                task="hourly_plan",
                seed=aid,
                fallback=lambda: HourlyPlan(
                    steps=[{"minute": 0, "duration_min": 60, "action": "carry on"}]
                ),
            )
            steps = [(s.minute, s.duration_min, s.action) for s in hour.steps]
            assert steps[0][0] == 0 and steps[-1][0] + steps[-1][1] == 60, steps
            for (m, d, _), (nxt, _, _) in itertools.pairwise(steps):
                assert m + d == nxt, steps  # sorted, no overlap, no gap
            assert not any(is_placeholder(a) for _, _, a in steps), steps
    tasks = gw.accounting.snapshot()["tasks"]
    for name in ("daily_plan", "hourly_plan"):
        t = tasks[name]
        sources = {k: v for k, v in t.items() if k.startswith("source.")}
        assert sum(sources.values()) == t["json_calls"] == len(PEOPLE), t
        assert t["requests"] >= t["json_calls"]  # the model itself was asked
        if t.get("source.fallback"):  # each fallback followed a counted failure
            failures = sum(v for k, v in t.items() if k.startswith("meaning."))
            assert failures + t["reasks"] >= t["source.fallback"], t
