"""Per-agent views of a group's memory: `memory.status`, `memory.stream`, validated at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from societas.memory.model.associations import Association
from societas.memory.model.records import (
    AddRequest,
    KVHit,
    KVSearchRequest,
    MemoryHit,
    MemoryRecord,
    SearchRequest,
)

if TYPE_CHECKING:
    from societas.memory.architectures.cognitive_group import CognitiveMemory
    from societas.memory.model.clock import SimClock
    from societas.memory.store.group_kv import GroupKV


@dataclass(slots=True, eq=False, repr=False)  # one per agent: no instance dict
class StatusMemory:
    """The agent's KV state: typed attributes from the memory config."""

    _kv: GroupKV
    _search: Callable[[KVSearchRequest], Awaitable[list[KVHit]]]
    agent_id: int

    async def get(self, key: str, default: Any = ...) -> Any:
        """The value of `key` (a copy); KeyError naming it if unknown and no default given."""
        return self._kv.kv_get(self.agent_id, key, default)

    def peek(self, key: str, default: Any = ...) -> Any:
        """The stored value of `key` now, synchronously and without a copy (do not mutate it)."""
        return self._kv.kv_peek(self.agent_id, key, default)

    async def update(self, key: str, value: Any, mode: str = "replace") -> None:
        """Set (`replace`) or extend (`merge`: dict update / list append) an attribute, at once."""
        self._kv.kv_update_now(self.agent_id, key, value, mode)

    async def search(
        self, query: str, top_k: int = 3, filter: Mapping[str, Any] | None = None
    ) -> list[KVHit]:
        """Embedded attributes most relevant to `query`; `filter={"key": name or [names]}`."""
        keys: tuple[str, ...] | None = None
        if filter:
            unknown = set(filter) - {"key"}
            if unknown:
                raise ValueError(f"filter supports only 'key', got {sorted(unknown)!r}")
            wanted = filter["key"]
            keys = (wanted,) if isinstance(wanted, str) else tuple(wanted)
            for key in keys:
                self._kv.memory_config.attribute(key)
        request = KVSearchRequest(agent_id=self.agent_id, query=query, top_k=top_k, keys=keys)
        return await self._search(request)

    async def export(self, keys: Iterable[str] | None = None) -> dict[str, Any]:
        """Copies of all (or the given) attributes."""
        return self._kv.export(self.agent_id, keys)


class StreamHost(Protocol):
    """What a stream view uses of its group (`GroupMemory` is one)."""

    clock: SimClock

    def queue_add(self, request: AddRequest) -> int: ...
    def join_search(self, request: SearchRequest) -> Awaitable[list[MemoryHit]]: ...
    async def get_by_ids(self, ids: list[int], agent_id: int, /) -> list[MemoryRecord]: ...
    async def associate(self, associations: list[Association]) -> None: ...
    async def link_cognitions(self, links: list[tuple[int, list[int], int]], /) -> None: ...
    async def related_cognition(self, agent_id: int, memory_id: int) -> list[MemoryRecord]: ...


@dataclass(slots=True, eq=False, repr=False)  # one per agent: no instance dict
class StreamMemory:
    """The agent's time-stamped memories, ranked by recency, importance and relevance."""

    _group: StreamHost
    agent_id: int

    async def add(
        self,
        topic: str,
        description: str,
        importance: float | None = None,
        location: str | None = None,
        **record: Any,
    ) -> int:
        """Remember `description`; `record`: type, tags, related_agents, metadata, expires_at."""
        request = AddRequest(
            agent_id=self.agent_id,
            topic=topic,
            description=description,
            importance=importance,
            location=location,
            **record,
        )
        return self._group.queue_add(request)  # returns at once: no coroutine to await

    async def search(
        self,
        query: str,
        topic: str | None = None,
        top_k: int = 3,
        day_range: tuple[int, int] | None = None,
        time_range: tuple[float, float] | None = None,
        location: str | None = None,
        tiers: Sequence[str] | None = None,
        expand: bool = False,
        types: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        layers: Sequence[str] | None = None,
        involving: int | None = None,
    ) -> list[MemoryHit]:
        """Best memories for `query` within the filters; `expand=True` adds linked ones."""
        given: dict[str, Any] = {"topic": topic, "day_range": day_range, "time_range": time_range}
        given |= {"location": location, "involving": involving, "expand": expand or None}
        listed = {"tiers": tiers, "types": types, "tags": tags, "layers": layers}
        given |= {k: tuple(v) for k, v in listed.items() if v is not None}
        filters = {k: v for k, v in given.items() if v is not None}  # unset: the defaults
        request = SearchRequest(agent_id=self.agent_id, query=query, top_k=top_k, **filters)
        return await self._group.join_search(request)

    async def search_today(
        self, query: str, topic: str | None = None, top_k: int = 3
    ) -> list[MemoryHit]:
        """`search` restricted to the current simulated day."""
        day = self._group.clock.day
        return await self.search(query, topic=topic, top_k=top_k, day_range=(day, day))

    async def associate(self, source: int, target: int, type: str, strength: float = 1.0) -> None:
        """Link two of this agent's memories by a typed association (for `expand=True`)."""
        association = Association(source=source, target=target, type=type, strength=strength)
        await self._group.get_by_ids([source, target], self.agent_id)  # KeyError: not its own
        await self._group.associate([association])

    async def get_by_ids(self, memory_ids: int | Sequence[int]) -> list[MemoryRecord]:
        """This agent's memories by id, in any tier; KeyError for an id that is not its own."""
        ids = [memory_ids] if isinstance(memory_ids, int) else list(memory_ids)
        return await self._group.get_by_ids(ids, self.agent_id)

    async def add_cognition_to_memory(
        self, memory_ids: int | Sequence[int], cognition: int | str
    ) -> int:
        """Link memories to a cognition memory (an id, or a text to store); returns its id."""
        ids = [memory_ids] if isinstance(memory_ids, int) else list(memory_ids)
        await self._group.get_by_ids(ids, self.agent_id)  # validate before writing anything
        cognition_id = (
            await self.add("cognition", cognition) if isinstance(cognition, str) else cognition
        )
        await self._group.link_cognitions([(self.agent_id, ids, cognition_id)])
        return cognition_id

    async def get_related_cognition(self, memory_id: int) -> list[MemoryRecord]:
        """The cognition memories linked to `memory_id`."""
        return await self._group.related_cognition(self.agent_id, memory_id)


@dataclass(slots=True, eq=False, repr=False)  # one per agent: no instance dict
class AgentMemory:
    """`agent.memory`: `status` (KV) and `stream`, views onto the group's columnar store."""

    agent_id: int
    clock: SimClock  # the group's simulated clock (day, t)
    status: StatusMemory
    stream: StreamMemory
    _layers: CognitiveMemory | None  # the group's cognitive layers, if any agent runs them

    @property
    def cognition(self) -> CognitiveMemory | None:
        """The group's cognitive layers when this agent runs the `cognitive` profile."""
        layers = self._layers
        return layers if layers is not None and layers.runs(self.agent_id) else None
