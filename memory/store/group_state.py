"""A group memory's own state beside its stores (ids, agents, KV, counts, cadence).

`get_state` / `set_state` are what a checkpoint saves and a restore puts back, so
`memory.store.checkpoint` never reaches into the group's private attributes; the hot columns,
the cognitive layers and FinMem's boosts have pairs of their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from societas.memory.store.kv_columns import IntColumn
from societas.memory.store.slot_map import SlotMap

if TYPE_CHECKING:
    from societas.memory.model.clock import SimClock
    from societas.memory.model.config import GroupMemoryConfig
    from societas.memory.store.hot_store import HotStore
    from societas.memory.store.kv_columns import AgentSlots, KVColumn


class GroupState:
    """get_state / set_state of GroupMemory's scalars and KV columns; mixed into it."""

    config: GroupMemoryConfig
    clock: SimClock
    hot: HotStore
    counters: dict[str, int]
    warm_counts: dict[int, int]
    max_importance: dict[int, float]
    ticks_since_migration: int
    ticks_since_policies: int
    kv_by_key: dict[str, KVColumn]
    kv_slots: AgentSlots
    kv_point: SlotMap[int]
    known_agents: set[int]
    _next_seq: int

    def get_state(self) -> dict[str, Any]:
        """The group's scalars as JSON-ready values (sorted: a checkpoint is deterministic).
        The KV points' ids are not among them: kv_points.parquet holds them (six an agent)."""
        return {
            "group_id": self.config.group_id,
            "clock": {"day": self.clock.day, "t": self.clock.t},
            "next_seq": self._next_seq,
            "agents": sorted(self.known_agents),
            "warm_counts": sorted([a, n] for a, n in self.warm_counts.items()),
            # the ranker's bounds on warm-only memories: a resumed run ranks by the same path
            "max_importance": sorted([a, v] for a, v in self.max_importance.items()),
            "newest_evicted": sorted([a, v] for a, v in self.hot.newest_evicted.items()),
            "counters": dict(self.counters),
            # the tier-migration and policy cadence: a restored group moves memories to cold
            # at the same ticks as the run it continues (else its searches diverge)
            "cadence": {
                "ticks_since_migration": self.ticks_since_migration,
                "ticks_since_policies": self.ticks_since_policies,
            },
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Put back what `get_state` returned (older checkpoints: missing keys default)."""
        self.known_agents = set(state["agents"])
        self._next_seq = state["next_seq"]
        if "kv_points" in state:  # older checkpoints: the KV point ids were kept here
            self.kv_point = SlotMap(self.kv_slots, IntColumn)
            for a, k, i in state["kv_points"]:
                self.kv_point[(a, k)] = i
        self.warm_counts = {a: n for a, n in state["warm_counts"]}
        self.max_importance = {a: v for a, v in state.get("max_importance", [])}
        self.hot.newest_evicted = {a: v for a, v in state.get("newest_evicted", [])}
        self.counters.update(state["counters"])
        cadence = state.get("cadence", {})
        self.ticks_since_migration = int(cadence.get("ticks_since_migration", 0))
        self.ticks_since_policies = int(cadence.get("ticks_since_policies", 0))
        self.clock.set(state["clock"]["day"], state["clock"]["t"])

    def kv_row_iter(self) -> Iterator[tuple[int, str, str]]:
        """Every agent's KV values as (agent_id, key, sorted-key JSON), attribute by
        attribute, agents ascending (a checkpoint writes them a page at a time)."""
        for key, column in self.kv_by_key.items():
            for agent_id in sorted(column):
                yield agent_id, key, json.dumps(column[agent_id], sort_keys=True)

    def kv_rows(self) -> dict[str, list[Any]]:
        """Every agent's KV values as columns (agent_id, key, JSON value)."""
        rows: dict[str, list[Any]] = {"agent_id": [], "key": [], "value": []}
        for agent_id, key, value in self.kv_row_iter():
            rows["agent_id"].append(agent_id)
            rows["key"].append(key)
            rows["value"].append(value)
        return rows

    def set_kv_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        """Put back KV values written by `kv_rows` (keys not in the config: a clear error)."""
        for row in rows:
            column = self.kv_by_key.get(row["key"])
            if column is None:
                raise KeyError(f"checkpoint has KV attribute {row['key']!r}, not in the config")
            column[row["agent_id"]] = json.loads(row["value"])
