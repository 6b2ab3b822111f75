"""Mobility block: move the agent to the place its activity needs (one tick is enough to get
anywhere in town); the new position is what the group reports to the driver."""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.agents.llm.plan_checks import PLACE_WORDS

if TYPE_CHECKING:
    from societas.agents.agent import AgentContext
    from societas.agents.environment import TownMap
    from societas.agents.population import Profile

_WORDS = PLACE_WORDS


def resolve_place(location: str | None, profile: Profile, town: TownMap, current: str) -> str:
    """A place id for a location named by a plan or a model: a known id, or a word that
    names one of the agent's own places (home, work, shelter, shop, leisure); else stay."""
    if location and location in town:
        return location
    low = (location or "").lower()
    for words, slot in _WORDS:
        if any(w in low for w in words):
            place = {
                "shelter": profile.shelter,
                "home": profile.home,
                "work": profile.work or profile.home,
                "shop": profile.shop,
                "leisure": profile.leisure,
            }[slot]
            return place
    return current


class MobilityBlock:
    """Move to `state['_target']` chosen by the plan block."""

    name = "mobility"

    async def forward(self, ctx: AgentContext) -> None:
        target = ctx.state.get("_target")
        if target and target != ctx.state["position"]:
            ctx.agent.set("position", target)
