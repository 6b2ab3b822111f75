"""Economy block: work hours, wages, consumption and policy payments (monthly amounts; a
month is 30 days of 22 working days). A transfer such as a basic income raises `income` by
its amount, is paid out daily, and lowers the hours worked by an elasticity."""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.agents.scenario import ScenarioConfig

if TYPE_CHECKING:
    from societas.agents.agent import AgentContext
    from societas.agents.scenario import Intervention

WORK_DAYS, DAYS = 22, 30


class EconomyBlock:
    """Earn at work, spend daily, receive transfers."""

    name = "economy"

    def __init__(self, scenario: ScenarioConfig) -> None:
        self.cfg = scenario.economy

    def labour_income(self, ctx: AgentContext) -> float:
        """Nominal monthly labour income (0 without a workplace)."""
        return ctx.agent.profile.income if ctx.agent.profile.work else 0.0

    def hours_today(self, ctx: AgentContext) -> float:
        """Planned work hours: the base, reduced by transfers relative to total income."""
        labour = self.labour_income(ctx)
        if labour <= 0:
            return 0.0
        transfers = ctx.state["transfers"]
        share = transfers / (labour + transfers) if transfers > 0 else 0.0
        return round(self.cfg.work_hours * max(0.0, 1.0 - self.cfg.ubi_work_elasticity * share), 4)

    async def forward(self, ctx: AgentContext) -> None:
        agent, s, cfg = ctx.agent, ctx.state, self.cfg
        for ev in ctx.events:
            if ev.kind == "policy":
                await self._policy(ctx, ev)
        day = ctx.time.day
        if s.get("_econ_day") != day:
            if s.get("_econ_day") is not None:
                self._end_of_day(ctx)
            s["_econ_day"] = day
            agent.set("work_hours", self.hours_today(ctx))
            agent.set("worked_today", 0.0)
        h = ctx.tick_hours
        if s["category"] == "work" and s["work_hours"] > 0:
            wage = self.labour_income(ctx) / (WORK_DAYS * cfg.work_hours)
            agent.set("currency", round(s["currency"] + wage * h, 4))
            agent.set("worked_today", round(s["worked_today"] + h, 4))
        elif s["category"] == "eat" and ctx.env.town.kind_of(s["position"]) in ("shop", "cafe"):
            agent.set("currency", round(s["currency"] - cfg.meal_cost, 4))

    def _end_of_day(self, ctx: AgentContext) -> None:
        agent, s = ctx.agent, ctx.state
        income = s["income"]
        liquidity = min(1.5, 0.5 + max(0.0, s["currency"]) / (income + 1.0))
        spend = max(0.0, self.cfg.consumption_propensity * income / DAYS * liquidity)
        currency = s["currency"] - spend + s["transfers"] / DAYS
        agent.set("currency", round(currency, 4))
        agent.set("consumption", round(spend * DAYS, 2))
        if s["transfers"] > 0:
            ctx.event("payment", f"{s['transfers'] / DAYS:.2f}")

    async def _policy(self, ctx: AgentContext, ev: Intervention) -> None:
        agent, s = ctx.agent, ctx.state
        amount = float(ev.amount or 0.0)
        agent.set("transfers", round(s["transfers"] + amount, 4))
        agent.set("income", round(s["income"] + amount, 4))
        ctx.event("policy", f"{ev.policy} {amount:+.2f}")
        await ctx.remember(
            "event",
            f"I now receive a basic income of {amount:.0f} per month",
            ev.importance,
            location=s["position"],
        )
