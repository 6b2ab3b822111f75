"""What the memory policies keep per group, and their run on the tier schedule."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from societas.memory.policies.contradictions import contradiction_pass
from societas.memory.policies.habits import Habit, HabitTracker
from societas.memory.policies.importance import importance_pass
from societas.memory.policies.temporal import TemporalLinker

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory


class PolicyState:
    """Per-group state of the temporal, contradiction, habit and importance policies."""

    def __init__(self, episodes: TemporalLinker, habits: HabitTracker) -> None:
        self.episodes = episodes
        self.habits = habits
        self.contradiction_mark = -1  # memory ids up to this one were checked
        names = ("feedback", "contradiction_pairs", "contradiction_calls", "contradictions")
        self.counters = dict.fromkeys((*names, "importance_recomputed", "importance_writes"), 0)

    def get_state(self) -> dict[str, Any]:
        """What the policies hold in RAM only, so a resumed run forms the same habits and links."""
        habits = self.habits
        return {
            "habits": [
                [list(k), h.count, sorted(h.days), h.memory_id, h.importance]
                for k, h in habits.habits.items()
            ],
            "habits_due": [list(k) for k in habits.due],
            "habits_strengthened": sorted(list(k) for k in habits.strengthened),
            "episodes": [[a, e, ids] for (a, e), ids in self.episodes.open.items()],
            "linked": self.episodes.linked,
            "contradiction_mark": self.contradiction_mark,
            "counters": dict(self.counters),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Put back what `get_state` returned."""
        habits = self.habits
        for key, count, days, memory_id, importance in state["habits"]:
            habits.habits[tuple(key)] = Habit(count, set(days), memory_id, importance)
        habits.due = [tuple(k) for k in state["habits_due"]]
        habits.strengthened = {tuple(k) for k in state["habits_strengthened"]}
        habits.loaded = True  # the stored habits are among those just put back
        self.episodes.open = OrderedDict(((a, e), ids) for a, e, ids in state["episodes"])
        self.episodes.linked = state["linked"]
        self.contradiction_mark = state["contradiction_mark"]
        self.counters.update(state["counters"])


async def run_policies(group: GroupMemory, ticks: int) -> dict[str, int]:
    """Habits, contradiction check and importance recomputation when due (all off by default)."""
    policies = group.config.policies
    out: dict[str, int] = {}
    if policies.habits.enabled:
        out.update(await group.policy_state.habits.flush())
    if policies.contradiction.enabled and ticks % policies.contradiction.run_every_ticks == 0:
        out["contradictions"] = await contradiction_pass(group)
    if policies.importance.enabled and ticks % policies.importance.run_every_ticks == 0:
        out.update(await importance_pass(group))
    return out
