"""A researcher's own block for the lab example: a `mood` that follows needs and money.

Any class with a `name` and `async def forward(self, ctx)` is a Block (agents.agent.Block);
if its constructor takes `scenario`, it gets the scenario; `params:` in the YAML are passed
as keyword arguments. Read and write status through `ctx.state` / `ctx.agent.set(...)`
(custom attributes declared under `attributes:` are there like built-in ones).
"""

from __future__ import annotations

from typing import Any

NEEDS = ("hunger_satisfaction", "energy_satisfaction", "social_satisfaction")


class MoodBlock:
    """Mood 0..1 drifts towards a mix of satisfied needs and money at hand."""

    name = "mood"

    def __init__(self, scenario: Any = None, sensitivity: float = 0.1) -> None:
        self.sensitivity = sensitivity

    async def forward(self, ctx: Any) -> None:
        s = ctx.state
        needs = sum(float(s[k]) for k in NEEDS) / len(NEEDS)
        money = min(1.0, max(0.0, float(s["currency"])) / 3000.0)
        target = 0.6 * needs + 0.4 * money
        mood = float(s["mood"]) + self.sensitivity * (target - float(s["mood"]))
        ctx.agent.set("mood", round(min(1.0, max(0.0, mood)), 4))
