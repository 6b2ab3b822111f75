"""Blocks for the experiment tests (imported by path from scenarios, like a user's code)."""

from __future__ import annotations

import os
from typing import Any


class ProbeBlock:
    """Raises `mood` by `step` each tick and records the value and its process as an event."""

    name = "probe"

    def __init__(self, step: float = 0.01) -> None:
        self.step = step

    async def forward(self, ctx: Any) -> None:
        mood = round(float(ctx.state["mood"]) + self.step, 6)
        ctx.agent.set("mood", mood)
        ctx.event("probe", f"{mood:.4f} pid={os.getpid()}")


class NotABlock:
    """Has no forward: the scenario check must refuse it."""

    name = "broken"
