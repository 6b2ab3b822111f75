"""AgentSociety's memory API (seed 000) on the group memory: seed-style code runs unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from time import gmtime, strftime
from typing import Any

from societas.memory.agent import AgentMemory, StatusMemory, StreamMemory
from societas.memory.embedding import Embedder, EmbeddingConfig, build_embedder
from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.group import GroupMemory
from societas.memory.model.citizen import CITIZEN_ATTRIBUTES
from societas.memory.model.config import GroupMemoryConfig, MemoryAttribute, MemoryConfig
from societas.memory.model.records import MemoryHit, MemoryRecord
from societas.memory.retrieval.scoring import RetrievalConfig
from societas.memory.store.kv_columns import KVColumn

NOTHING = "Nothing"
TOPICS = ("cognition", "social", "economy", "mobility", "event", "other")
AGENT_ID = 0  # the one agent of a seed-style Memory's own group
SEED_RETRIEVAL = RetrievalConfig(recency_weight=0.0, importance_weight=0.0, candidates="relevant")
_A = MemoryAttribute
_SOCIETY_EXTRA = [  # the seed's society-agent fields the citizen config lacks or types apart
    _A(name="position", type="dict", default_or_value={}, description="aoi/lane position"),
    _A(name="consumption", type="str", default_or_value="", description="Consumption level"),
    _A(name="firm_id", type="int", default_or_value=0, description="Employer firm id"),
    _A(name="work_hour_month", type="float", default_or_value=160.0, description="Work hours"),
    *(
        _A(name=k, type="str", default_or_value="", description=k.replace("_", " "))
        for k in ("race", "religion", "marriage_status", "residence", "skill", "family_consumption")
    ),
]


def memory_config_societyagent(
    distributions: Mapping[str, Any] | None = None,
    class_config: Iterable[MemoryAttribute] | None = None,
) -> MemoryConfig:
    """The seed's society-agent memory, values drawn from `distributions`, plus `class_config`."""
    attributes = {a.name: a for a in [*CITIZEN_ATTRIBUTES, *_SOCIETY_EXTRA, *(class_config or ())]}
    chosen: dict[str, Any] = {"name": "unknown", "age": 20}
    for key, source in (distributions or {}).items():
        if key not in attributes:
            raise KeyError(f"distributions: no society-agent attribute {key!r}")
        sample = getattr(source, "sample", None)
        chosen[key] = sample() if callable(sample) else source() if callable(source) else source
    return MemoryConfig.from_list(
        MemoryAttribute(**{**a.model_dump(), "default_or_value": chosen[k]}) if k in chosen else a
        for k, a in attributes.items()
    )


def default_memory_config_citizen() -> MemoryConfig:
    """The seed's default citizen memory: the society agent's, unsampled."""
    return memory_config_societyagent()


def _type_of(value: Any) -> str:
    """The memory attribute type of a Python value (bool before int: bool is an int)."""
    kinds = (bool, int, float, str, list | tuple | set, dict)
    for name, kind in zip(("bool", "int", "float", "str", "list", "dict"), kinds, strict=True):
        if isinstance(value, kind):
            return name
    raise TypeError(f"status.update: cannot store a {type(value).__name__} ({value!r:.60})")


def add_attribute(group: GroupMemory, key: str, value: Any) -> None:
    """Add `key` to the group's status schema, typed after `value` (no default)."""
    attr = MemoryAttribute(name=key, type=_type_of(value), description="added at run time")
    group.memory_config = MemoryConfig(attributes={**group.memory_config.attributes, key: attr})
    group.kv_by_key.setdefault(key, KVColumn(group.kv_slots))


def format_records(records: Sequence[MemoryRecord]) -> str:
    """The seed's search text, newest first (ties keep rank order), or "Nothing"."""
    lines = [
        f"- [{r.topic}]: {r.text} [day: {r.day}, time: {strftime('%H:%M:%S', gmtime(r.t))}, "
        f"location: {r.location or 'unknown'}]"
        for r in sorted(records, key=lambda r: (r.day, r.t), reverse=True)
    ]
    return "\n".join(lines) or NOTHING


class _FastEmbedSparse:
    """A fastembed sparse model (the seed's `SparseTextEmbedding`) as an Embedder."""

    dense_size: int | None = None
    has_sparse = True

    def __init__(self, model: Any) -> None:
        self.model, self.name = model, type(model).__name__

    async def embed_documents(self, texts: Sequence[str], query: bool = False) -> list[TextVectors]:
        found = (self.model.query_embed if query else self.model.embed)(list(texts))
        return [TextVectors(sparse=SparseVector.of(e.indices, e.values)) for e in found]

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        return await self.embed_documents(texts, query=True)


def _embedder_of(embedding: Any) -> Embedder:
    """An Embedder from the seed's `embedding` (an Embedder, config, fastembed model or None)."""
    if embedding is None or isinstance(embedding, EmbeddingConfig):
        return build_embedder(embedding or EmbeddingConfig())
    if isinstance(embedding, Embedder):
        return embedding
    from fastembed import SparseTextEmbedding

    if isinstance(embedding, SparseTextEmbedding):
        return _FastEmbedSparse(embedding)
    raise TypeError(
        "embedding must be an Embedder, an EmbeddingConfig, a fastembed SparseTextEmbedding "
        f"or None, got {type(embedding).__name__} {embedding!r:.60}"
    )


class Status:
    """`memory.status`: the seed's KVMemory on the group's typed KV."""

    def __init__(self, memory: Memory) -> None:
        self._memory, self._group = memory, memory.group

    async def _status(self) -> StatusMemory:
        return (await self._memory.view()).status

    async def get(self, key: str, default_value: Any = None) -> Any:
        """A copy of `key`'s value; KeyError if the agent has none and no default is given."""
        status = await self._status()
        if status.peek(key, None) is not None:
            return await status.get(key)
        if default_value is None:
            raise KeyError(f"No attribute `{key}` in memories!")
        return default_value

    async def update(
        self, key: str | Mapping[str, Any], value: Any = None, mode: str = "replace"
    ) -> None:
        """Set (`replace`) or extend (`merge`) one key, or each key of a mapping."""
        if not isinstance(key, str):  # a mapping alone
            for name, item in key.items():
                await self.update(name, item, mode)
            return
        status = await self._status()
        if isinstance(value, tuple | set):
            value = list(value)
        if key not in self._group.memory_config.attributes:
            add_attribute(self._group, key, value)
        elif status.peek(key, None) is None:
            mode = "replace"  # the agent had no value: stored as given, as in the seed
        await status.update(key, value, mode)

    async def search(self, query: str, top_k: int = 3, filter: dict | None = None) -> str:
        """Embedded attributes most like `query`: "- text" lines, or "Nothing"."""
        hits = await (await self._status()).search(query, top_k=top_k, filter=filter)
        return "\n".join(f"- {hit.text}" for hit in hits) or NOTHING


def _topic_add(topic: str, doc: str) -> Callable[[Stream, str], Awaitable[int]]:
    """A seed `Stream.add_<topic>` method: `add` under that topic."""

    async def add(self: Stream, description: str) -> int:
        return await self.add(topic, description)

    add.__name__, add.__doc__ = f"add_{topic}", doc
    return add


class Stream:
    """`memory.stream`: the seed's StreamMemory on the group's ranked stream."""

    def __init__(self, memory: Memory) -> None:
        self._memory, self._group = memory, memory.group

    async def _stream(self) -> StreamMemory:
        """The agent's stream view, the group clock set from the environment if there is one."""
        view = await self._memory.view()
        environment = self._memory.environment
        if environment is not None:
            day, t = environment.get_datetime()
            self._group.clock.set(int(day), float(t))
        return view.stream

    @property
    def _vectorstore(self) -> Stream:
        """The seed's `stream._vectorstore` (its skeleton's `similarity_search`)."""
        return self

    async def similarity_search(self, query: str, k: int = 4) -> list[MemoryHit]:
        """The `k` best memories for `query`, best first (the seed's vector search)."""
        return await (await self._stream()).search(query, top_k=k)

    async def add_memory_node(
        self, text: str, topic: str = "other", importance: float | None = None
    ) -> int:
        """The seed skeleton's insert: `add` under `topic`."""
        return await self.add(topic, text, importance)

    def _location(self) -> str:
        """Where the agent is, as the seed reads it from status `position`."""
        position = self._group.kv_peek(self._memory.agent_id, "position", None)
        if isinstance(position, dict):
            for kind, key in (("aoi_position", "aoi_id"), ("lane_position", "lane_id")):
                if isinstance(position.get(kind), dict) and key in position[kind]:
                    return str(position[kind][key])
            return "unknown"
        return str(position) if position else "unknown"

    async def add(self, topic: str, description: str, importance: float | None = None) -> int:
        """Remember `description` under `topic` now, where the agent is; returns its id."""
        stream = await self._stream()
        return await stream.add(topic, description, importance, self._location())

    add_cognition = _topic_add("cognition", "A thought or insight.")
    add_social = _topic_add("social", "Something about other people (a chat, a message).")
    add_economy = _topic_add("economy", "Money, work, prices.")
    add_mobility = _topic_add("mobility", "Moving from place to place.")
    add_event = _topic_add("event", "Something that happened.")
    add_other = _topic_add("other", "Anything else.")

    async def search(
        self,
        query: str,
        topic: str | None = None,
        top_k: int = 3,
        day_range: tuple[int, int] | None = None,
        time_range: tuple[float, float] | None = None,
    ) -> str:
        """The `top_k` best memories for `query`, shown newest first."""
        stream = await self._stream()
        hits = await stream.search(
            query, topic=topic, top_k=top_k, day_range=day_range, time_range=time_range
        )
        return format_records(hits)

    async def search_today(
        self, query: str = "", topic: str | None = None, top_k: int = 100
    ) -> str:
        """Today's memories: the best for `query`, or without one the latest `top_k`."""
        await self._stream()
        day = self._group.clock.day
        if query.strip():
            return await self.search(query, topic=topic, top_k=top_k, day_range=(day, day))
        await self._group.sync_writes()
        hot = self._group.hot
        records = [hot.record(i) for i in hot.memory_ids(self._memory.agent_id)]
        today = [r for r in records if r.day == day and topic in (None, r.topic)]
        today.sort(key=lambda r: (r.t, r.id))
        return format_records(today[-top_k:][::-1])

    async def get_by_ids(self, memory_ids: int | Sequence[int]) -> str:
        """Memories by id, as search text."""
        return format_records(await (await self._stream()).get_by_ids(memory_ids))

    async def add_cognition_to_memory(
        self, memory_ids: int | Sequence[int], cognition: int | str
    ) -> int:
        """Link memories to a cognition (an id, or a text stored now); returns its id."""
        stream = await self._stream()
        await stream.get_by_ids(memory_ids)  # KeyError for an id not its own, before writing
        if isinstance(cognition, str):
            cognition = await self.add("cognition", cognition)
        return await stream.add_cognition_to_memory(memory_ids, cognition)

    async def get_related_cognition(self, memory_id: int) -> str:
        """The cognitions linked to a memory, as search text."""
        return format_records(await (await self._stream()).get_related_cognition(memory_id))


class Memory:
    """The seed's `Memory`: `.status` (KVMemory) and `.stream` (StreamMemory) of one agent."""

    def __init__(
        self,
        environment: Any = None,
        embedding: Any = None,
        memory_config: MemoryConfig | None = None,
        *,
        group: GroupMemory | None = None,
        agent_id: int = AGENT_ID,
    ) -> None:
        self.environment = environment  # anything with get_datetime() -> (day, seconds)
        self.owns_group = group is None
        if group is None:
            config = memory_config or memory_config_societyagent()
            attributes = {  # the seed's text for an embedded attribute without a template
                k: a.model_copy(update={"embedding_template": f"My {k} is {{}}"})
                if a.whether_embedding and a.embedding_template is None
                else a
                for k, a in config.attributes.items()
            }
            group = GroupMemory(
                GroupMemoryConfig(retrieval=SEED_RETRIEVAL),
                MemoryConfig(attributes=attributes),
                embedder=_embedder_of(embedding),
            )
        elif embedding is not None or memory_config is not None:
            raise ValueError("give either group= or embedding and memory_config, not both")
        else:
            group.require_agent(agent_id)
        self.group, self.agent_id = group, agent_id
        self._registering: asyncio.Future[None] | None = None
        self.status = Status(self)
        self.stream = Stream(self)

    async def view(self) -> AgentMemory:
        """The group memory's own view of this agent, registered on first use."""
        if self.owns_group:
            if self._registering is None:
                self._registering = asyncio.ensure_future(self.group.add_agents({AGENT_ID: {}}))
            await self._registering
        return self.group.agent(self.agent_id)

    async def initialize_embeddings(self) -> None:
        """Register the agent with its config's values and embed its embedded attributes."""
        await self.view()
        await self.group.sync_writes(kv=True)

    async def close(self) -> None:
        """Close the group this memory made for itself (a shared group is its owner's)."""
        if self.owns_group:
            await self.group.close()
