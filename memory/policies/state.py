"""What the memory policies keep per group (open temporal episodes, repeated actions, the
contradiction check's progress, counters) and their run on the tier schedule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.memory.policies.contradictions import contradiction_pass
from societas.memory.policies.habits import HabitTracker
from societas.memory.policies.importance import importance_pass
from societas.memory.policies.temporal import TemporalLinker

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory


class PolicyState:
    """Per-group state of the temporal, contradiction, habit and importance policies."""

    def __init__(self, group: GroupMemory) -> None:
        self.episodes = TemporalLinker(group)
        self.habits = HabitTracker(group)
        self.contradiction_mark = -1  # memory ids up to this one were checked
        self.counters = {
            "feedback": 0,
            "contradiction_pairs": 0,
            "contradiction_calls": 0,
            "contradictions": 0,
            "importance_recomputed": 0,
            "importance_writes": 0,
        }


async def run_policies(group: GroupMemory, ticks: int) -> dict[str, int]:
    """Habits, contradiction check and importance recomputation when due (all off by
    default); `ticks` is the group's policy tick counter."""
    policies = group.config.policies
    out: dict[str, int] = {}
    if policies.habits.enabled:
        out.update(await group.policy_state.habits.flush())
    if policies.contradiction.enabled and ticks % policies.contradiction.run_every_ticks == 0:
        out["contradictions"] = await contradiction_pass(group)
    if policies.importance.enabled and ticks % policies.importance.run_every_ticks == 0:
        out.update(await importance_pass(group))
    return out
