"""The AgentSociety memory API on top of the group memory, for code written against that
design: `Memory(group, agent_id)` with `.status` and `.stream`.

`status.get` / `status.update` (a key the config lacks is added with the value's type);
`stream.add_cognition` / `add_social` / `add_economy` / `add_mobility` / `add_event` /
`add_other` store under that topic; `stream.search` and `search_today` return the lines
"- [topic]: text", best first, or "Nothing".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from societas.memory.model.config import MemoryAttribute, MemoryConfig
from societas.memory.store.kv_columns import KVColumn

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory
    from societas.memory.model.records import MemoryRecord

NOTHING = "Nothing"
TOPICS = ("cognition", "social", "economy", "mobility", "event", "other")


def _type_of(value: Any) -> str:
    """The memory attribute type of a Python value (bool before int: bool is an int)."""
    for name, kind in (("bool", bool), ("int", int), ("float", float), ("str", str)):
        if isinstance(value, kind):
            return name
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "dict"
    raise TypeError(f"status.update: cannot store a {type(value).__name__} ({value!r:.60})")


def add_attribute(group: GroupMemory, key: str, value: Any) -> MemoryAttribute:
    """Add `key` to the group's status schema, typed after `value` (no default)."""
    attr = MemoryAttribute(name=key, type=_type_of(value), description="added at run time")
    group.memory_config = MemoryConfig(attributes={**group.memory_config.attributes, key: attr})
    group.kv_by_key.setdefault(key, KVColumn(group.kv_slots))
    return attr


def format_records(records: Sequence[MemoryRecord]) -> str:
    """AgentSociety's search text: one "- [topic]: text" line per memory, or "Nothing"."""
    if not records:
        return NOTHING
    return "\n".join(f"- [{r.topic}]: {r.text}" for r in records)


class Status:
    """`memory.status`: AgentSociety's profile/state store on the group's typed KV."""

    def __init__(self, group: GroupMemory, agent_id: int) -> None:
        self._group, self.agent_id = group, agent_id
        group.require_agent(agent_id)

    async def get(self, key: str, default_value: Any = None) -> Any:
        """The value of `key`, or `default_value` if the agent has none."""
        return self._group.kv_get(self.agent_id, key, default_value)

    async def update(self, key: str, value: Any, mode: str = "replace") -> None:
        """Set (`replace`) or extend (`merge`: list append / dict update); new keys allowed."""
        if mode not in ("replace", "merge"):
            raise ValueError(f"mode must be 'replace' or 'merge', got {mode!r}")
        if key not in self._group.memory_config.attributes:
            merging_item = mode == "merge" and not isinstance(value, list | dict)
            add_attribute(self._group, key, [value] if merging_item else value)
        if isinstance(value, tuple):
            value = list(value)
        update = self._group.check_update(self.agent_id, key, value, mode)
        await self._group.submit_update(update)

    async def export(self) -> dict[str, Any]:
        """Every attribute of the agent."""
        return self._group.export(self.agent_id)


class Stream:
    """`memory.stream`: AgentSociety's tagged memory stream with text search results."""

    def __init__(self, group: GroupMemory, agent_id: int) -> None:
        self._group, self.agent_id = group, agent_id
        self._view = group.agent(agent_id).stream

    async def add(self, topic: str, description: str, importance: float | None = None) -> int:
        """Remember `description` under `topic` now; returns its id."""
        return await self._view.add(topic, description, importance=importance)

    async def add_cognition(self, description: str) -> int:
        """A thought or insight."""
        return await self.add("cognition", description)

    async def add_social(self, description: str) -> int:
        """Something about other people (a chat, a message)."""
        return await self.add("social", description)

    async def add_economy(self, description: str) -> int:
        """Money, work, prices."""
        return await self.add("economy", description)

    async def add_mobility(self, description: str) -> int:
        """Moving from place to place."""
        return await self.add("mobility", description)

    async def add_event(self, description: str) -> int:
        """Something that happened."""
        return await self.add("event", description)

    async def add_other(self, description: str) -> int:
        """Anything else."""
        return await self.add("other", description)

    async def search(
        self,
        query: str,
        tag: str | None = None,
        top_k: int = 3,
        day_range: tuple[int, int] | None = None,
        time_range: tuple[float, float] | None = None,
    ) -> str:
        """Best memories for `query` (recency, importance, relevance) as "- [topic]: text"."""
        hits = await self._view.search(
            query, topic=tag, top_k=top_k, day_range=day_range, time_range=time_range
        )
        return format_records(hits)

    async def search_today(self, query: str = "", tag: str | None = None, top_k: int = 100) -> str:
        """Today's memories: best for `query`, or without one the latest `top_k` in order."""
        day = self._group.clock.day
        if query.strip():
            return await self.search(query, tag=tag, top_k=top_k, day_range=(day, day))
        hot = self._group.hot
        records = [hot.record(i) for i in hot.memory_ids(self.agent_id)]
        today = [r for r in records if r.day == day and (tag is None or r.topic == tag)]
        today.sort(key=lambda r: (r.time, r.id))
        return format_records(today[-top_k:])

    async def get_by_ids(self, memory_ids: int | Sequence[int]) -> str:
        """Memories by id, as search text."""
        return format_records(await self._view.get_by_ids(memory_ids))

    async def add_cognition_to_memory(
        self, memory_ids: int | Sequence[int], cognition: int | str
    ) -> int:
        """Link memories to a cognition (an id, or a text stored as topic 'cognition')."""
        return await self._view.add_cognition_to_memory(memory_ids, cognition)

    async def get_related_cognition(self, memory_id: int) -> str:
        """The cognitions linked to a memory, as search text."""
        return format_records(await self._view.get_related_cognition(memory_id))


class Memory:
    """AgentSociety's `agent.memory` for one agent of a group: `.status` and `.stream`."""

    def __init__(self, group: GroupMemory, agent_id: int) -> None:
        self.agent_id = agent_id
        self.status = Status(group, agent_id)
        self.stream = Stream(group, agent_id)
