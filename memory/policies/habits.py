"""Procedural habits: an action repeated at a similar time of day (and place) becomes a memory."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from societas.memory.model.clock import format_time_of_day
from societas.memory.model.records import AddRequest
from societas.memory.policies.configs import HabitPolicy
from societas.memory.vectorstores.base import stored_payloads

if TYPE_CHECKING:
    from societas.memory.model.clock import SimClock
    from societas.memory.store.hot_store import HotStore
    from societas.memory.vectorstores import VectorStore

HabitKey = tuple[int, str, str, int]  # agent, action, place ('' when not counted), bucket


@dataclass(slots=True)
class Habit:
    count: int = 0
    days: set[int] = field(default_factory=set)
    memory_id: int | None = None
    importance: float = 0.0


def action_of(text: str, policy: HabitPolicy) -> str | None:
    """The action a perceived text reports (after a marker), normalised; None if none."""
    for marker in policy.markers:
        at = text.find(marker)
        if at >= 0:
            action = " ".join(text[at + len(marker) :].split()).strip(" .,;:!?").lower()
            return action or None
    return None


class HabitTracker:
    """Repeated actions of a group's agents and the procedural memories they became."""

    def __init__(
        self,
        policy: HabitPolicy,
        *,
        clock: SimClock,
        store: VectorStore,
        hot: HotStore,
        max_importance: dict[int, float],
        add_many: Callable[[Sequence[AddRequest]], Awaitable[list[int]]],
    ) -> None:
        self.policy = policy
        self.clock, self.store, self.hot = clock, store, hot
        self.max_importance = max_importance  # the ranker's bound per agent, kept valid
        self.add_many = add_many  # writes the procedural memories
        self.habits: dict[HabitKey, Habit] = {}
        self.due: list[HabitKey] = []  # reached min_repeats: to write
        self.strengthened: set[HabitKey] = set()  # repeated after being written
        self.loaded = False  # habits already stored (a restored group) not yet read back

    async def _load(self) -> None:
        """Habits a restored group already holds (tagged, in the store): never written twice."""
        self.loaded = True
        tag = self.policy.tag
        async for memory_id, pl in stored_payloads(self.store):
            if pl.get("type") != "procedural" or tag not in (pl.get("tags") or ()):
                continue
            meta = json.loads(pl.get("metadata") or "{}")
            if "action" not in meta or "bucket" not in meta:
                continue
            place = (pl.get("location") or "") if self.policy.same_place else ""
            key = (pl["agent_id"], meta["action"], place, int(meta["bucket"]))
            habit = self.habits.setdefault(key, Habit())
            habit.memory_id, habit.importance = memory_id, float(pl["importance"])

    def observe(self, items: Iterable[tuple[int, str, str | None]]) -> int:
        """Count (agent, perceived text, place or None) now; returns how many were actions."""
        policy = self.policy
        if not policy.enabled:
            return 0
        clock = self.clock
        bucket = int(clock.t // (policy.time_window_minutes * 60))
        actions = 0
        for agent_id, text, place in items:
            action = action_of(text, policy)
            if action is None:
                continue
            actions += 1
            key = (agent_id, action, (place or "") if policy.same_place else "", bucket)
            habit = self.habits.setdefault(key, Habit())
            if policy.distinct_days and clock.day in habit.days:
                continue
            habit.days.add(clock.day)
            habit.count += 1
            if habit.memory_id is not None:
                self.strengthened.add(key)
            elif habit.count >= policy.min_repeats and key not in self.due:
                self.due.append(key)
        return actions

    def _text(self, key: HabitKey) -> str:
        _, action, place, bucket = key
        at = format_time_of_day(bucket * self.policy.time_window_minutes * 60.0)
        where = f" (at {place})" if place else ""
        return f"I usually {action} around {at}{where}."

    async def flush(self) -> dict[str, int]:
        """Write the habits that became due (one add_many) and re-strengthen repeated ones."""
        policy, hot, max_importance = self.policy, self.hot, self.max_importance
        out = {"habits_new": 0, "habits_strengthened": 0}
        if self.due and not self.loaded:
            await self._load()
        known = [k for k in self.due if self.habits[k].memory_id is not None]
        self.strengthened.update(known)  # stored before a restore: strengthened, not doubled
        due, self.due = [k for k in self.due if self.habits[k].memory_id is None], []
        if due:
            requests = [
                AddRequest(
                    agent_id=key[0],
                    topic="habit",
                    description=self._text(key),
                    importance=policy.importance,
                    location=key[2] or None,
                    type="procedural",
                    tags=(policy.tag,),
                    metadata={
                        "action": key[1],
                        "bucket": key[3],
                        "repeats": len(self.habits[key].days),
                    },
                )
                for key in due
            ]
            for key, memory_id in zip(due, await self.add_many(requests), strict=True):
                self.habits[key].memory_id = memory_id
                self.habits[key].importance = policy.importance
            out["habits_new"] = len(due)
        strengthened, self.strengthened = sorted(self.strengthened), set()
        writes: dict[float, list[int]] = {}
        written: list[tuple[HabitKey, Habit, int]] = []
        for key in strengthened:  # only written habits are strengthened: each has its id
            habit = self.habits[key]
            if habit.memory_id is not None:
                written.append((key, habit, habit.memory_id))
        ids = [memory_id for _, _, memory_id in written]
        alive = await self.store.retrieve(ids) if ids else {}
        for key, habit, memory_id in written:
            if memory_id not in alive and memory_id not in hot:
                continue  # moved to cold or forgotten: read-only now
            habit.importance = min(1.0, habit.importance + policy.strengthen_by)
            writes.setdefault(habit.importance, []).append(memory_id)
            if memory_id in hot:  # its layer and layer clock stay
                hot.importances[hot.row_of[memory_id]] = habit.importance
            if habit.importance > max_importance.get(key[0], -1.0):
                max_importance[key[0]] = habit.importance  # the ranker's bound
        await self.store.set_payloads(  # write-behind stores patch pending ones
            [(members, {"importance": value}) for value, members in sorted(writes.items())]
        )
        out["habits_strengthened"] = sum(len(v) for v in writes.values())
        return out
