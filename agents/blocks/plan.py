"""Plan block (Generative Agents): a daily plan at the start of each day (LLM), the activity
of the current hour, reactions to observed events that re-plan the day (LLM), and urgent
needs or an evacuation overriding the plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.agents.blocks.mobility import resolve_place
from societas.agents.cognition import activity_at, plan_day, react
from societas.agents.scenario import ScenarioConfig

if TYPE_CHECKING:
    from societas.agents.agent import AgentContext
    from societas.agents.scenario import Intervention

_CATEGORIES = (
    ("sleep", ("sleep", "nap", "bed")),
    ("evacuate", ("evacuat", "shelter", "safety")),
    ("eat", ("breakfast", "lunch", "dinner", "eat", "food", "cook", "meal", "snack")),
)
ROUTINE_IMPORTANCE = 0.2


def categorize(activity: str, place_kind: str) -> str:
    """Activity kind for the activity-mix plot: sleep, evacuate, eat, work, social, shop,
    leisure or home."""
    low = activity.lower()
    for category, words in _CATEGORIES:
        if any(w in low for w in words):
            return category
    if place_kind == "work":
        return "work"
    if any(w in low for w in ("friend", "talk", "meet", "chat", "people")):
        return "social"
    if any(w in low for w in ("shop", "buy", "errand", "store")) or place_kind == "shop":
        return "shop"
    if place_kind in ("park", "cafe"):
        return "leisure"
    return "home" if place_kind == "home" else "leisure"


class PlanBlock:
    """Decide this tick's activity and target place."""

    name = "plan"

    def __init__(self, scenario: ScenarioConfig) -> None:
        self.scenario = scenario

    async def forward(self, ctx: AgentContext) -> None:
        agent, s, time = ctx.agent, ctx.state, ctx.time
        if (s.get("plan") or {}).get("day") != time.day:
            await plan_day(agent.memory, ctx.llm, time.day)
            await agent.refresh("plan")
        for ev in ctx.events:
            if ev.kind == "event":
                await self._observe(ctx, ev)
        activity, location = self._choose(ctx)
        place = resolve_place(location, agent.profile, ctx.env.town, s["position"])
        kind = ctx.env.town.kind_of(place)
        category = categorize(activity, kind)
        if category == "work" and s["worked_today"] >= s["work_hours"]:
            activity, place, category = "rest at home after work", agent.profile.home, "home"
            kind = "home"
        s["_target"] = place
        if activity != s["activity"]:
            agent.set("activity", activity)
            agent.set("category", category)
            if self.scenario.cognition.remember_activities:
                await ctx.remember(
                    "activity",
                    f"{agent.profile.name} is going to {activity}",
                    ROUTINE_IMPORTANCE,
                    location=place,
                )

    def _choose(self, ctx: AgentContext) -> tuple[str, str | None]:
        s, profile = ctx.state, ctx.agent.profile
        if s["evacuating"]:
            return "stay at the evacuation shelter", profile.shelter
        need = s["current_need"]
        hour = int(ctx.time.hour)
        item = activity_at(s.get("plan") or {}, hour) or {
            "activity": "sleep",
            "location": profile.home,
        }
        planned = categorize(item["activity"], ctx.env.town.kind_of(item["location"]))
        if need == "safety":
            return "seek safety", profile.shelter if ctx.env.danger else profile.home
        if need == "hunger" and planned != "eat":
            at_home = s["position"] == profile.home
            return ("get something to eat", profile.home if at_home else profile.shop)
        if need == "energy" and planned != "sleep":
            return "go home to sleep", profile.home
        if need == "social" and planned in ("home", "leisure", "shop"):
            return "meet friends", profile.leisure
        if planned == "eat" and s["hunger_satisfaction"] >= 0.95:
            return "relax after the meal", item["location"]
        return item["activity"], item["location"]

    async def _observe(self, ctx: AgentContext, ev: Intervention) -> None:
        agent, s, text = ctx.agent, ctx.state, ev.text or ""
        if ev.all_clear:
            agent.set("evacuating", False)
            agent.set("alert", False)
            await ctx.remember("event", text, ev.importance or 0.5, location=s["position"])
            ctx.event("all_clear", text)
            return
        if ev.trust_gated and ctx.rng.random() >= s["trust_government"]:
            await ctx.remember(
                "event", f"I heard but do not believe it: {text}", 0.2, location=s["position"]
            )
            ctx.event("ignored", text)
            return
        if ev.danger:
            agent.set("alert", True)
        reaction = await react(
            agent.memory, ctx.llm, text, ctx.time.day, int(ctx.time.hour), location=s["position"]
        )
        await agent.refresh("plan")
        ctx.reflector.note(agent.id, ev.importance or 0.5)
        where = f"{reaction.new_activity or ''} {reaction.location or ''}".lower()
        if reaction.react and ev.danger and any(w in where for w in ("evacuat", "shelter")):
            agent.set("evacuating", True)
        detail = reaction.new_activity or "no reaction" if reaction.react else "no reaction"
        ctx.event("reaction", detail)
