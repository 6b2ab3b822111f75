"""Plan block (Generative Agents): a daily plan at the start of each day (LLM), each waking
hour decomposed into 5-15 minute actions when the day reaches it (LLM; a routine hour that
continues the previous one with nothing observed since reuses its actions, no call), reactions to
observed events and to news heard in conversations that re-plan the rest of the day (LLM),
and urgent needs or an evacuation overriding the plan. Plans go to the `plans` table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.agents.blocks.mobility import resolve_place
from societas.agents.cognition import (
    activity_at,
    decompose_hour,
    plan_day,
    react,
    reusable_hour,
    reuse_hour,
)
from societas.agents.cognition.persona import Persona, persona_of
from societas.agents.cognition.short_term import note_task
from societas.agents.scenario import ScenarioConfig

if TYPE_CHECKING:
    from societas.agents.agent import AgentContext
    from societas.agents.llm.tasks import Reaction
    from societas.agents.scenario import Intervention

_CATEGORIES = (
    ("sleep", ("sleep", "nap", "bed")),
    ("evacuate", ("evacuat", "shelter", "safety")),
    ("eat", ("breakfast", "lunch", "dinner", "eat", "food", "cook", "meal", "snack")),
)
NEWS = "_heard_news"  # scratch: news believed in a conversation, reacted to next tick


def me(ctx: AgentContext) -> Persona:
    """The agent's persona from its profile and hot state (no memory reads)."""
    return persona_of(ctx.agent.id, ctx.agent.profile.kv(), ctx.state)


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
        writer = ctx.memory_writer()
        if (s.get("plan") or {}).get("day") != time.day:
            day = await plan_day(
                agent.memory, ctx.llm, time.day, writer, me(ctx), False, ctx.population.plain_names
            )
            items = [i.model_dump() for i in day.items]
            source = day.answer_source
            agent.set("plan", {"day": time.day, "items": items, "hourly": {}, "source": source})
            self._record(ctx, "day", items)
        observed = False
        for ev in ctx.events:
            if ev.kind == "event":
                observed = True
                await self._observe(ctx, ev)
        for news in s.pop(NEWS, None) or []:
            observed = True
            await self._react(ctx, news, None)
        if observed:  # the next routine hour is decomposed afresh, not reused
            agent.set("plan", {**s["plan"], "observed": True})
        hour = int(time.hour)
        if self.scenario.cognition.decompose_hours and self._awake_hour(ctx, hour):
            steps = reusable_hour(s["plan"], hour)
            if steps is not None:  # the earlier hour's actions, from the same answer
                source = s["plan"].get("hourly_source", "fallback")
                await reuse_hour(agent.memory, ctx.llm, hour, steps, writer, me(ctx))
            else:
                out = await decompose_hour(
                    agent.memory, ctx.llm, hour, writer, me(ctx), False, ctx.population.plain_names
                )
                steps = [step.model_dump() for step in out.steps] if out else []
                source = out.answer_source if out else "fallback"
            fresh = {k: v for k, v in s["plan"].items() if k != "observed"}
            agent.set("plan", {**fresh, "hourly": {str(hour): steps}, "hourly_source": source})
            where = (activity_at(s["plan"], hour) or {}).get("location", "")
            for step in steps:
                row = (hour, step["minute"], step["duration_min"], step["action"], where, source)
                ctx.results.add("plans", (time.tick, agent.id, "action", *row))
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
                    "activity", f"{agent.profile.name} is going to {activity}", location=place
                )
            policy = self.scenario.memory.policies.sessions
            await note_task(
                writer, agent.memory, policy, s["plan"], hour, activity, category, place
            )

    def _awake_hour(self, ctx: AgentContext, hour: int) -> bool:
        """Whether `hour` is planned, not yet decomposed, and not spent asleep."""
        plan = ctx.state.get("plan") or {}
        item = activity_at(plan, hour)
        if item is None or str(hour) in plan.get("hourly", {}):
            return False
        return categorize(item["activity"], "") != "sleep"

    def _record(self, ctx: AgentContext, level: str, items: list[dict], since: int = 0) -> None:
        """Plan items (from hour `since`) as rows of the `plans` table, with the source of
        the answer the plan in force came from."""
        source = (ctx.state.get("plan") or {}).get("source", "fallback")
        for i in items:
            if i["start_hour"] >= since:
                row = (i["start_hour"], 0, 0, i["activity"], i["location"], source)
                ctx.results.add("plans", (ctx.time.tick, ctx.agent.id, level, *row))

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
            await ctx.remember("event", text, ev.importance, location=s["position"])
            ctx.event("all_clear", text)
            return
        if ev.trust_gated and ctx.rng.random() >= s["trust_government"]:
            await ctx.remember(
                "event", f"I heard but do not believe it: {text}", location=s["position"]
            )
            ctx.event("ignored", text)
            return
        if ev.danger:
            agent.set("alert", True)
        reaction = await self._react(ctx, text, ev.importance)
        where = f"{reaction.new_activity or ''} {reaction.location or ''}".lower()
        if reaction.react and ev.danger and any(w in where for w in ("evacuat", "shelter")):
            agent.set("evacuating", True)

    async def _react(self, ctx: AgentContext, text: str, importance: float | None) -> Reaction:
        """React to an observation or news; the decision is a `reaction` event and a
        reaction re-plans the rest of the day (recorded), both with their answer_source."""
        agent, hour = ctx.agent, int(ctx.time.hour)
        reaction = await react(
            agent.memory,
            ctx.llm,
            text,
            ctx.time.day,
            hour,
            location=ctx.state["position"],
            writer=ctx.memory_writer(),
            importance=importance,
            p=me(ctx),
            people=ctx.population.plain_names,
        )
        await agent.refresh("plan")
        detail = reaction.new_activity or "no reaction" if reaction.react else "no reaction"
        ctx.event("reaction", detail, reaction.answer_source)
        if reaction.react and reaction.new_activity:
            self._record(ctx, "replan", ctx.state["plan"]["items"], since=hour)
            ctx.event("replan", reaction.new_activity, reaction.answer_source)
        return reaction
