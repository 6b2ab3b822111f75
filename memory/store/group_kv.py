"""The KV (status) part of a group's memory: typed attribute columns, embedded on change."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from societas.memory.embedding.base import SparseVector
from societas.memory.model.config import check_value, private_copy
from societas.memory.model.records import KVHit, KVSearchRequest
from societas.memory.store.kv_columns import NO_VALUE, AgentSlots, IntColumn, KVColumn, SlotMap
from societas.memory.store.kv_index import KVDeferredStore, KVIndex
from societas.memory.vectorstores import MemoryPoint, PointFilter, VectorQuery

if TYPE_CHECKING:
    from societas.memory.embedding import Embedder
    from societas.memory.embedding.base import TextVectors
    from societas.memory.model.config import MemoryConfig
    from societas.memory.store.write_queue import OwnedLock, WriteQueue
    from societas.memory.vectorstores import VectorStore

UpdateMode = Literal["replace", "merge"]
_NOT_SET: Any = object()
_SCALARS = frozenset({str, int, float, bool})


@dataclass(frozen=True, slots=True)
class KVUpdate:
    """One KV write, already checked against the config (`check_update` makes them)."""

    agent_id: int
    key: str
    value: Any
    mode: UpdateMode = "replace"


class GroupKV:
    """KV columns (attribute → agent → value) of a group's agents, embedded on change."""

    def __init__(
        self,
        memory_config: MemoryConfig,
        embedder: Embedder,
        kv_store: VectorStore,
        *,
        ram: bool,
        known_agents: set[int],
        require_agent: Callable[[int], None],
        allocate_ids: Callable[[int], list[int]],
        counters: dict[str, int],
        op_lock: OwnedLock,
        writes: WriteQueue,
    ) -> None:
        self.memory_config = memory_config
        self.embedder = embedder
        self.known_agents = known_agents
        self.require_agent = require_agent
        self._allocate_ids = allocate_ids
        self.counters = counters
        self.op_lock = op_lock
        self.writes = writes
        self.kv_slots = AgentSlots()  # agent → slot, shared by the KV columns
        self.kv_by_key = {key: KVColumn(self.kv_slots) for key in memory_config.attributes}
        self._kv_derived: dict[str, Callable[[int], Any]] = {}  # set_kv_default
        self.kv_point: SlotMap[int] = SlotMap(self.kv_slots, IntColumn)  # → engine point id
        self.kv_index = KVIndex(self.kv_slots) if ram else None
        self.kv_store: VectorStore = kv_store
        if self.kv_index is not None:  # embedded attributes searched from RAM, writes batched
            point = self.kv_point
            self.kv_store = KVDeferredStore(
                kv_store, self.kv_index, lambda a, k: point[(a, k)], counters
            )

    def kv_get(self, agent_id: int, key: str, default: Any = ...) -> Any:
        """Current value (a copy) of `key`; KeyError naming it unless `default` is given."""
        column = self.kv_by_key.get(key)  # the usual read, a stored str (nothing to copy): inline
        if column is not None and agent_id in self.known_agents:
            slot = column.slots.slot_of.get(agent_id)
            values = column.cells
            if slot is not None and slot < len(values):
                value = values[slot]
                if type(value) is str:
                    return value
        self.require_agent(agent_id)
        return self.kv_peek(agent_id, key, default, copy_value=True)

    def kv_peek(self, agent_id: int, key: str, default: Any = ..., copy_value: bool = False) -> Any:
        """The stored value of `key` without a copy, synchronously (do not mutate it)."""
        attr = self.memory_config.attributes.get(key)
        if attr is None:
            if default is ...:
                raise KeyError(f"unknown memory attribute {key!r}")
            return default
        value = self.kv_by_key[key].get(agent_id, _NOT_SET)
        if value is not _NOT_SET:
            if copy_value and isinstance(value, list | dict):
                return private_copy(value)
            return value
        derived = self._kv_derived.get(key)
        return attr.default() if derived is None else derived(agent_id)

    def set_kv_default(self, key: str, value_of: Callable[[int], Any]) -> None:
        """Give non-embedded `key` a per-agent default `value_of(agent_id)` until written."""
        attr = self.memory_config.attribute(key)
        if attr.whether_embedding:
            raise ValueError(f"{key!r} is embedded: its values must be stored, not derived")
        self._kv_derived[key] = value_of

    def kv_column(self, key: str) -> KVColumn:
        """The live column of one attribute (absent: the default or derived value), read-only."""
        self.memory_config.attribute(key)
        return self.kv_by_key[key]

    def check_update(self, agent_id: int, key: str, value: Any, mode: str) -> KVUpdate:
        """Validate one KV write (agent, key, mode, type) without applying it."""
        attr = self.memory_config.attributes.get(key)
        if (  # the usual write, a number or str of the attribute's own type: checked inline
            mode == "replace"
            and attr is not None
            and attr.type == type(value).__name__
            and agent_id in self.known_agents
            and type(value) in _SCALARS
        ):
            return KVUpdate(agent_id, key, value)
        value = self._checked(agent_id, key, value, mode)
        return KVUpdate(agent_id, key, value, "merge" if mode == "merge" else "replace")

    def _checked(self, agent_id: int, key: str, value: Any, mode: str) -> Any:
        """The value of one KV write once checked (a private copy of a list or dict)."""
        self.require_agent(agent_id)
        if mode not in ("replace", "merge"):
            raise ValueError(f"mode must be 'replace' or 'merge', got {mode!r}")
        attr = self.memory_config.attribute(key)
        if mode == "replace":
            value = check_value(key, attr.type, value)
        elif attr.type == "dict":
            check_value(key, "dict", value)
        elif attr.type != "list":
            raise ValueError(f"mode 'merge' needs a list or dict attribute; {key!r} is {attr.type}")
        if isinstance(value, list | dict):  # the caller may keep mutating its object
            value = private_copy(value, self.kv_by_key[key].get(agent_id))
        return value

    def kv_update_now(self, agent_id: int, key: str, value: Any, mode: str = "replace") -> None:
        """Validate and apply one KV write at once; an embedded attribute is re-embedded lazily."""
        attr = self.memory_config.attributes.get(key)
        if (  # the usual write, a str into a str attribute: `_checked`'s checks, inline
            type(value) is str
            and mode == "replace"
            and attr is not None
            and attr.type == "str"
            and agent_id in self.known_agents
        ):
            # `kv_apply` inline for a value replacing a stored one (its engine point taken).
            column = self.kv_by_key[key]
            slot = column.slots.slot_of.get(agent_id)
            values = column.cells
            if slot is not None and slot < len(values) and values[slot] is not NO_VALUE:
                embedded = attr.whether_embedding
                points = self.kv_point.columns().get(key) if embedded else None
                if not embedded or (
                    points is not None and slot < len(points.cells) and points.cells[slot] >= 0
                ):
                    values[slot] = value
                    self.counters["kv_updates"] += 1
                    if embedded:
                        self.writes.touch_kv((agent_id, key))
                    return
            self.kv_apply(agent_id, key, value, mode)
            return
        self.kv_apply(agent_id, key, self._checked(agent_id, key, value, mode), mode)

    def kv_apply(self, agent_id: int, key: str, value: Any, mode: str) -> None:
        """Apply one checked KV write: the value now, its embedding queued."""
        if mode == "merge":
            current = self.kv_get(agent_id, key)
            if isinstance(current, dict):
                value = {**current, **value}
            else:
                value = [*current, *(value if isinstance(value, list) else [value])]
        self.kv_by_key[key][agent_id] = value
        self.counters["kv_updates"] += 1
        if self.memory_config.attributes[key].whether_embedding:
            slot = (agent_id, key)
            if slot not in self.kv_point:  # ids in call order, as stream adds take theirs
                self.kv_point[slot] = self._allocate_ids(1)[0]
            self.writes.touch_kv(slot)

    async def update_many(self, updates: Sequence[KVUpdate]) -> list[None]:
        """Apply checked KV writes in order; embedded attributes are re-embedded, in place."""
        async with self.op_lock:
            for update in updates:
                self.kv_apply(update.agent_id, update.key, update.value, update.mode)
            await self.writes.apply()
            return [None] * len(updates)

    async def embed_kv(self, items: Sequence[tuple[int, str, Any]]) -> None:
        """Embed attribute texts and upsert them, reusing each (agent, key)'s point id."""
        texts = [self.memory_config.attributes[k].embedding_text(v) for _, k, v in items]
        if self.kv_index is not None:  # an unchanged text keeps its vector and engine point
            known = self.kv_index.texts
            kept = [(i, t) for i, t in zip(items, texts, strict=True) if known.get(i[:2]) != t]
            items, texts = [i for i, _ in kept], [t for _, t in kept]
        if not items:
            return
        vectors = await self.embedder.embed_documents(texts)
        self.counters["embedded_texts"] += len(texts)
        if self.kv_index is not None:  # RAM: searched there, written to the engine in batches
            for (agent_id, key, _), text, vec in zip(items, texts, vectors, strict=True):
                if (agent_id, key) not in self.kv_point:
                    self.kv_point[(agent_id, key)] = self._allocate_ids(1)[0]
                self.kv_index.put((agent_id, key), text, vec.sparse or SparseVector.of((), ()))
                self.kv_store.dirty[(agent_id, key)] = True  # type: ignore[attr-defined]
            return
        points = []
        new_ids: dict[tuple[int, str], int] = {}
        for (agent_id, key, _), text, vec in zip(items, texts, vectors, strict=True):
            point_id = self.kv_point.get((agent_id, key)) or new_ids.get((agent_id, key))
            if point_id is None:
                point_id = new_ids[(agent_id, key)] = self._allocate_ids(1)[0]
            payload = {"agent_id": agent_id, "key": key, "text": text}
            points.append(MemoryPoint(point_id, vec, payload))
        await self.kv_store.upsert(points)
        self.kv_point.update(new_ids)
        self.counters["vector_upserts"] += len(points)

    async def kv_search_many(self, requests: Sequence[KVSearchRequest]) -> list[list[KVHit]]:
        """Search each agent's embedded attributes by relevance to a query."""
        async with self.op_lock:
            await self.writes.apply()  # attributes changed since: embedded now, in one batch
            for r in requests:
                self.require_agent(r.agent_id)
                for key in r.keys or ():
                    self.memory_config.attribute(key)
            vectors = await self.embedder.embed_queries([r.query for r in requests])
            self.counters["kv_searches"] += len(requests)
            if self.kv_index is not None:
                return [self._kv_search_ram(r, v) for r, v in zip(requests, vectors, strict=True)]
            queries = [
                VectorQuery(v, PointFilter(r.agent_id, keys=r.keys), r.top_k)
                for r, v in zip(requests, vectors, strict=True)
            ]
            results = await self.kv_store.query_batch(queries)
            self.counters["vector_queries"] += len(queries)
            return [
                [
                    KVHit(
                        key=p.payload["key"],
                        value=self.kv_get(r.agent_id, p.payload["key"]),
                        text=p.payload["text"],
                        score=p.score,
                    )
                    for p in hits
                    if p.payload
                ]
                for r, hits in zip(requests, results, strict=True)
            ]

    def _kv_search_ram(self, r: KVSearchRequest, vectors: TextVectors) -> list[KVHit]:
        """One KV search scored from the RAM index (sparse embeddings)."""
        assert self.kv_index is not None
        keys = r.keys or [a.name for a in self.memory_config.embedded]
        if vectors.sparse is None:
            return []
        return [
            KVHit.model_construct(
                key=key, value=self.kv_get(r.agent_id, key), text=text, score=score
            )
            for key, text, score in self.kv_index.search(r.agent_id, keys, vectors.sparse, r.top_k)
        ]

    def export(self, agent_id: int, keys: Iterable[str] | None = None) -> dict[str, Any]:
        """Copies of the agent's KV values (all attributes, or `keys`)."""
        names = list(keys) if keys is not None else list(self.memory_config.attributes)
        return {key: self.kv_get(agent_id, key) for key in names}

    def kv_row_iter(self) -> Iterator[tuple[int, str, str]]:
        """Every agent's KV values as (agent_id, key, sorted-key JSON), by attribute."""
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
