"""Needs block: hunger, energy, safety and social satisfaction (0..1) decaying with simulated
time and restored by what the agent does; the most urgent one is the agent's current need."""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.agents.scenario import NeedsConfig, ScenarioConfig

if TYPE_CHECKING:
    from societas.agents.agent import AgentContext

NEED_KEYS = {
    "safety": "safety_satisfaction",
    "hunger": "hunger_satisfaction",
    "energy": "energy_satisfaction",
    "social": "social_satisfaction",
}
# Restoration per simulated hour of the matching activity.
EAT_RESTORE, SLEEP_RESTORE, SHELTER_RESTORE, SAFE_DRIFT = 0.9, 0.12, 0.4, 0.05
SAFE_LEVEL = 0.7


def current_need(values: dict[str, float], threshold: float) -> str:
    """The first urgent need in priority order (safety, hunger, energy, social), or 'none'."""
    for need in NEED_KEYS:
        if values[need] < threshold:
            return need
    return "none"


def _clip(x: float) -> float:
    return round(min(1.0, max(0.0, x)), 6)


class NeedsBlock:
    """Decay and restore needs after the agent chose its activity and place."""

    name = "needs"

    def __init__(self, scenario: ScenarioConfig) -> None:
        self.cfg: NeedsConfig = scenario.needs

    async def forward(self, ctx: AgentContext) -> None:
        s, cfg, h = ctx.state, self.cfg, ctx.tick_hours
        category = s["category"]
        kind = ctx.env.town.kind_of(s["position"])
        hunger = s["hunger_satisfaction"] - cfg.hunger_decay * h
        if category == "eat":
            hunger += EAT_RESTORE * h
        energy = s["energy_satisfaction"]
        if category == "sleep":
            energy += SLEEP_RESTORE * h
        else:
            energy -= cfg.energy_decay * h
        social = s["social_satisfaction"] - cfg.social_decay * h
        safety = s["safety_satisfaction"]
        if kind == "shelter":
            safety += SHELTER_RESTORE * h
        elif ctx.env.danger and s["alert"]:
            safety -= cfg.safety_decay * h
        else:
            safety += SAFE_DRIFT * h if safety < SAFE_LEVEL else 0.0
        values = {
            "hunger": _clip(hunger),
            "energy": _clip(energy),
            "social": _clip(social),
            "safety": _clip(safety),
        }
        for need, key in NEED_KEYS.items():
            ctx.agent.set(key, values[need])
        ctx.agent.set("current_need", current_need(values, cfg.threshold))
