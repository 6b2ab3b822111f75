"""One group's memory: every agent's KV state and stream, batched over one embedder and store.

The runtime (or any caller) batches a tick's work through `add_many` / `search_many` /
`update_many`; the per-agent views (`group.agent(id).stream.add(...)`) go through
micro-batchers so agents stepping concurrently share those batched calls.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from societas.memory import tiering
from societas.memory.agent import AgentMemory
from societas.memory.batching import MicroBatcher
from societas.memory.citizen import CITIZEN_MEMORY_CONFIG
from societas.memory.clock import SimClock
from societas.memory.cold import ColdStore, cold_relevance
from societas.memory.config import GroupMemoryConfig, MemoryConfig, check_value
from societas.memory.embedding import Embedder, TextVectors, build_embedder
from societas.memory.hot_store import HotStore
from societas.memory.policies import default_summary, initial_layer
from societas.memory.records import (
    AddRequest,
    KVHit,
    KVSearchRequest,
    MemoryHit,
    MemoryRecord,
    SearchRequest,
    record_from_payload,
)
from societas.memory.scoring import mmr_select, retrieval_score
from societas.memory.vectorstores import (
    MemoryPoint,
    PointFilter,
    ScoredPoint,
    VectorQuery,
    VectorStore,
    build_vector_store,
)

UpdateMode = Literal["replace", "merge"]
_ID_BITS = 40  # point id = group_id << 40 | sequence: unique across groups of one run
TIE_MARGIN = 16  # results fetched beyond top_k so exact score ties are ordered here


class KVUpdate(BaseModel):
    """One KV write, already checked against the config."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    agent_id: int
    key: str
    value: Any
    mode: UpdateMode = "replace"


class GroupMemory:
    """KV + stream memory of all agents in one group, over one embedder and vector store."""

    def __init__(
        self,
        config: GroupMemoryConfig | None = None,
        memory_config: MemoryConfig = CITIZEN_MEMORY_CONFIG,
        *,
        root: Path | None = None,
        clock: SimClock | None = None,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        kv_store: VectorStore | None = None,
    ) -> None:
        self.config = config or GroupMemoryConfig()
        self.memory_config = memory_config
        self.clock = clock or SimClock()
        self.embedder: Embedder = embedder or build_embedder(self.config.embedding)
        dense, sparse = self.embedder.dense_size, self.embedder.has_sparse
        group_id = self.config.group_id
        if root is None:
            root = Path(tempfile.mkdtemp(prefix="societas-memory-"))
        self.root = root
        base = self.config.vector_store.path or root
        shard_dir = base / f"group-{group_id}" if base else None
        self.store: VectorStore = store or build_vector_store(
            self.config.vector_store, group_id, dense, sparse, shard_dir, "stream"
        )
        self.kv_store: VectorStore = kv_store or build_vector_store(
            self.config.vector_store, group_id, dense, sparse, shard_dir, "kv"
        )
        self.normalization = self.config.retrieval.resolved_normalization(dense is not None, sparse)
        self.hot = HotStore()
        self.cold = ColdStore(root / "cold", group_id, self.config.tiers.cold_day_window)
        self.journal = tiering.MigrationJournal(self.cold.dir)
        self.warm_counts: dict[int, int] = {}
        self.ticks_since_migration = 0
        self.ticks_since_policies = 0
        # Writes consolidation summaries; replace with an LLM-backed callable (sync or async).
        self.summarizer: Callable[[list[str]], str | Awaitable[str]] = default_summary
        self._kv: dict[str, dict[int, Any]] = {key: {} for key in memory_config.attributes}
        self._kv_point: dict[tuple[int, str], int] = {}
        self._agents: set[int] = set()
        self._next_seq = 0
        self.counters = {
            "adds": 0,
            "searches": 0,
            "kv_updates": 0,
            "kv_searches": 0,
            "embedded_texts": 0,
            "vector_upserts": 0,
            "vector_queries": 0,
            "migrated_to_cold": 0,
            "forgotten": 0,
            "cleaned_up": 0,
            "promoted": 0,
            "demoted": 0,
            "consolidated": 0,
            "accesses": 0,
        }
        yields = self.config.batch_yields
        self._add_batcher = MicroBatcher(self.add_many, yields)
        self._search_batcher = MicroBatcher(self.search_many, yields)
        self._kv_update_batcher = MicroBatcher(self.update_many, yields)
        self._kv_search_batcher = MicroBatcher(self.kv_search_many, yields)

    # ------------------------------------------------------------------ agents
    @property
    def agent_ids(self) -> list[int]:
        return sorted(self._agents)

    def require_agent(self, agent_id: int) -> None:
        """KeyError naming `agent_id` if this group does not own it."""
        if agent_id not in self._agents:
            raise KeyError(f"unknown agent {agent_id!r} in group {self.config.group_id}")

    def agent(self, agent_id: int) -> AgentMemory:
        """The per-agent view (`.status`, `.stream`) of one agent of this group."""
        self.require_agent(agent_id)
        return AgentMemory(self, agent_id)

    async def add_agents(self, profiles: Mapping[int, Mapping[str, Any]]) -> None:
        """Register agents with their initial KV values (defaults for the rest), embedded."""
        checked: dict[int, dict[str, Any]] = {}
        for agent_id, profile in profiles.items():
            if isinstance(agent_id, bool) or not isinstance(agent_id, int) or agent_id < 0:
                raise ValueError(f"agent_id must be a non-negative int, got {agent_id!r}")
            if agent_id in self._agents:
                raise ValueError(f"agent {agent_id} is already in group {self.config.group_id}")
            values: dict[str, Any] = {}
            for key, value in profile.items():
                attr = self.memory_config.attribute(key)
                values[key] = check_value(key, attr.type, copy.deepcopy(value))
            checked[agent_id] = values
        embedded = [
            (agent_id, attr.name, values.get(attr.name, attr.default_or_value))
            for agent_id, values in checked.items()
            for attr in self.memory_config.embedded
        ]
        await self._embed_kv([e for e in embedded if e[2] not in (None, "", [], {})])
        for agent_id, values in checked.items():
            for key, value in values.items():
                self._kv[key][agent_id] = value
            self._agents.add(agent_id)

    # ------------------------------------------------------------------ KV
    def kv_get(self, agent_id: int, key: str, default: Any = ...) -> Any:
        """Current value (a copy) of `key`; KeyError naming it unless `default` is given."""
        self.require_agent(agent_id)
        attr = self.memory_config.attributes.get(key)
        if attr is None:
            if default is ...:
                raise KeyError(f"unknown memory attribute {key!r}")
            return default
        column = self._kv[key]
        if agent_id in column:
            value = column[agent_id]
            return copy.deepcopy(value) if isinstance(value, list | dict) else value
        return attr.default()

    def check_update(self, agent_id: int, key: str, value: Any, mode: str) -> KVUpdate:
        """Validate one KV write (agent, key, mode, type) without applying it."""
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
        if isinstance(value, list | dict):
            value = copy.deepcopy(value)  # the caller may keep mutating its object
        # Validated just above: skip pydantic's second pass (this runs per value per tick).
        return KVUpdate.model_construct(agent_id=agent_id, key=key, value=value, mode=mode)

    async def update_many(self, updates: Sequence[KVUpdate]) -> list[None]:
        """Apply checked KV writes in order; embedded attributes are re-embedded, in place."""
        staged: dict[tuple[int, str], Any] = {}
        for update in updates:
            slot = (update.agent_id, update.key)
            if update.mode == "replace":
                staged[slot] = update.value
                continue
            current = staged[slot] if slot in staged else self.kv_get(*slot)
            if isinstance(current, dict):
                staged[slot] = {**current, **update.value}
            else:
                extra = update.value if isinstance(update.value, list) else [update.value]
                staged[slot] = [*current, *extra]
        embedded = {a.name for a in self.memory_config.embedded}
        await self._embed_kv([(a, k, v) for (a, k), v in staged.items() if k in embedded])
        for (agent_id, key), value in staged.items():
            self._kv[key][agent_id] = value
        self.counters["kv_updates"] += len(updates)
        return [None] * len(updates)

    async def _embed_kv(self, items: Sequence[tuple[int, str, Any]]) -> None:
        """Embed attribute texts and upsert them, reusing each (agent, key)'s point id."""
        if not items:
            return
        texts = [self.memory_config.attributes[k].embedding_text(v) for _, k, v in items]
        vectors = await self.embedder.embed_documents(texts)
        points = []
        new_ids: dict[tuple[int, str], int] = {}
        for (agent_id, key, _), text, vec in zip(items, texts, vectors, strict=True):
            point_id = self._kv_point.get((agent_id, key)) or new_ids.get((agent_id, key))
            if point_id is None:
                point_id = new_ids[(agent_id, key)] = self._allocate_ids(1)[0]
            payload = {"agent_id": agent_id, "key": key, "text": text}
            points.append(MemoryPoint(point_id, vec, payload))
        await self.kv_store.upsert(points)
        self._kv_point.update(new_ids)
        self.counters["embedded_texts"] += len(texts)
        self.counters["vector_upserts"] += len(points)

    async def kv_search_many(self, requests: Sequence[KVSearchRequest]) -> list[list[KVHit]]:
        """Search each agent's embedded attributes by relevance to a query."""
        for r in requests:
            self.require_agent(r.agent_id)
            for key in r.keys or ():
                self.memory_config.attribute(key)
        vectors = await self.embedder.embed_queries([r.query for r in requests])
        queries = [
            VectorQuery(
                vectors=v,
                filter=PointFilter(r.agent_id, keys=r.keys),
                limit=r.top_k,
                with_payload=True,
            )
            for r, v in zip(requests, vectors, strict=True)
        ]
        results = await self.kv_store.query_batch(queries)
        self.counters["kv_searches"] += len(requests)
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

    def export(self, agent_id: int, keys: Iterable[str] | None = None) -> dict[str, Any]:
        """Copies of the agent's KV values (all attributes, or `keys`)."""
        names = list(keys) if keys is not None else list(self.memory_config.attributes)
        return {key: self.kv_get(agent_id, key) for key in names}

    # ------------------------------------------------------------------ stream
    def _allocate_ids(self, n: int) -> list[int]:
        base = self.config.group_id << _ID_BITS
        start = self._next_seq
        self._next_seq += n
        return [base | seq for seq in range(start, start + n)]

    async def add_many(self, requests: Sequence[AddRequest]) -> list[int]:
        """Write many agents' memories: one embedding batch, one upsert; returns their ids."""
        if not requests:
            return []
        for r in requests:
            self.require_agent(r.agent_id)
        default = self.config.default_importance
        importances = [default if r.importance is None else r.importance for r in requests]
        texts = [r.description for r in requests]
        vectors = await self.embedder.embed_documents(texts)
        ids = self._allocate_ids(len(requests))
        clock = self.clock
        day, t, now = clock.day, clock.t, clock.abs_seconds
        # Payload fields cost ~6 µs each to hand to the engine, so absent ones are left out:
        # the group is in the point id (id >> 40), links and location are set when they exist.
        layered = self.config.policies.forgetting.enabled
        layers = [initial_layer(r.topic) for r in requests]
        points = []
        # Each memory gets a distinct time (+ id's low bits × 0.1 µs, < 0.11 s): ties in
        # recency would otherwise be broken at random by the engine, and runs must replay.
        times = [now + (point_id & 0xFFFFF) * 1e-7 for point_id in ids]
        for point_id, r, vec, imp, layer, stamp in zip(
            ids, requests, vectors, importances, layers, times, strict=True
        ):
            payload = {
                "agent_id": r.agent_id,
                "topic": r.topic,
                "t": t,
                "time": stamp,
                "importance": imp,
                "text": r.description,
            }
            if r.location is not None:
                payload["location"] = r.location
            if layered:
                payload["layer"], payload["layer_since"] = layer, stamp
            points.append(MemoryPoint(point_id, vec, payload))
        await self.store.upsert(points)
        self.hot.append_many(
            ids,
            [r.agent_id for r in requests],
            [r.topic for r in requests],
            texts,
            [r.location for r in requests],
            importances,
            day,
            t,
            times,
            layers,
        )
        for r in requests:
            self.warm_counts[r.agent_id] = self.warm_counts.get(r.agent_id, 0) + 1
        self.counters["adds"] += len(requests)
        self.counters["embedded_texts"] += len(texts)
        self.counters["vector_upserts"] += len(points)
        return ids

    async def search_many(self, requests: Sequence[SearchRequest]) -> list[list[MemoryHit]]:
        """Rank many agents' memories by α·recency + β·importance + γ·relevance.

        hot + warm (the default) are searched inside Qdrant in one batch; `tiers` with
        "cold" adds a Parquet scan of the agent's cold memories, rescored the same way.
        """
        if not requests:
            return []
        for r in requests:
            self.require_agent(r.agent_id)
        retrieval = self.config.retrieval
        mmr = retrieval.mmr_lambda
        vectors = await self.embedder.embed_queries([r.query for r in requests])
        now = self.clock.abs_seconds
        engine = [
            (i, r, v)
            for i, (r, v) in enumerate(zip(requests, vectors, strict=True))
            if "warm" in r.tiers or "hot" in r.tiers
        ]
        queries = [
            VectorQuery(
                vectors=v,
                filter=self._point_filter(r),
                # Room beyond top_k: the engine breaks exact score ties at random, so the
                # final order (score, then newest id) is decided here, reproducibly.
                limit=r.top_k + TIE_MARGIN if mmr is None else max(r.top_k * 4, r.top_k + 8),
                now=now,
                scoring=retrieval,
                normalization=self.normalization,
                with_payload=False,
                with_vectors=mmr is not None,
                layer_decay=self._layer_decay(),
            )
            for _, r, v in engine
        ]
        found = await self.store.query_batch(queries)
        found = [sorted(hits, key=lambda p: (-p.score, -p.id)) for hits in found]
        if mmr is None:
            found = [hits[: r.top_k] for (_, r, _), hits in zip(engine, found, strict=True)]
        else:
            found = [
                self._diversify(hits, r.top_k, mmr)
                for (_, r, _), hits in zip(engine, found, strict=True)
            ]
        records = await self._records([p.id for hits in found for p in hits])
        results: list[list[MemoryHit]] = [[] for _ in requests]
        for (i, _, _), hits in zip(engine, found, strict=True):
            results[i] = [
                _hit(records[p.id], p.score, "hot" if p.id in self.hot else "warm")
                for p in hits
                if p.id in records
            ]
        for i, (r, v) in enumerate(zip(requests, vectors, strict=True)):
            if "cold" in r.tiers:
                cold_hits = await asyncio.to_thread(self._cold_search, r, v, now)
                merged = results[i] + cold_hits
                results[i] = sorted(merged, key=lambda h: (-h.score, -h.id))[: r.top_k]
            if r.expand:
                results[i] = await self._spread(r, results[i])
        if self.config.policies.forgetting.enabled:
            await self._record_access([h for hits in results for h in hits if h.tier != "cold"])
        self.counters["searches"] += len(requests)
        self.counters["vector_queries"] += len(queries)
        return results

    def _layer_decay(self) -> dict[str, float] | None:
        forgetting = self.config.policies.forgetting
        if not forgetting.enabled:
            return None
        return {name: p.importance_decay_per_day for name, p in forgetting.layers.items()}

    async def _record_access(self, hits: Sequence[MemoryHit]) -> None:
        """Forgetting on: a retrieved memory gains importance and its decay clock restarts."""
        forgetting = self.config.policies.forgetting
        now = self.clock.abs_seconds
        for hit in {h.id: h for h in hits}.values():
            current = forgetting.effective_importance(
                hit.importance, hit.layer, hit.layer_since, now
            )
            boosted = min(1.0, current + forgetting.access_boost)
            await self.store.set_payload(
                [hit.id], {"importance": boosted, "layer_since": now, "layer": hit.layer}
            )
            self.hot.set_layer(hit.id, hit.layer, boosted, now)
        self.counters["accesses"] += len(hits)

    async def _spread(self, r: SearchRequest, hits: list[MemoryHit]) -> list[MemoryHit]:
        """Spreading activation: linked memories get a hit's score × decay per hop."""
        policy = self.config.policies.associations
        scores = {h.id: h for h in hits}
        frontier = [(h.id, h.score) for h in hits]
        for _ in range(policy.max_hops):
            ids = [i for i, _ in frontier]
            records = {rec.id: rec for rec in await self.get_by_ids(ids, r.agent_id)}
            spread: dict[int, float] = {}
            for memory_id, score in frontier:
                rec = records[memory_id]
                for neighbour in (*rec.cognition_ids, *rec.evidence_ids):
                    activation = score * policy.decay
                    if neighbour not in scores and activation > spread.get(neighbour, 0.0):
                        spread[neighbour] = activation
            if not spread:
                break
            found = await self.get_by_ids(list(spread), r.agent_id)
            tiers = await self.store.retrieve([rec.id for rec in found])
            for rec in found:
                tier = "hot" if rec.id in self.hot else "warm" if rec.id in tiers else "cold"
                scores[rec.id] = _hit(rec, spread[rec.id], tier)
            frontier = list(spread.items())
        return sorted(scores.values(), key=lambda h: (-h.score, -h.id))[: r.top_k]

    def _point_filter(self, r: SearchRequest) -> PointFilter:
        hot_only = "warm" not in r.tiers
        return PointFilter(
            agent_id=r.agent_id,
            topic=r.topic,
            day_range=r.day_range,
            time_range=r.time_range,
            location=r.location,
            ids=self.hot.memory_ids(r.agent_id) if hot_only else None,
        )

    def _cold_search(self, r: SearchRequest, query: TextVectors, now: float) -> list[MemoryHit]:
        """Score the agent's cold memories with the same formula (IDF over those rows)."""
        table = self.cold.scan(dataclasses.replace(self._point_filter(r), ids=None))
        if table.num_rows == 0:
            return []
        rows = table.to_pylist()
        vectors = self.cold.vectors((row["id"] for row in rows), r.agent_id)
        relevance = cold_relevance(
            query,
            [vectors.get(row["id"]) for row in rows],
            self.normalization,
            self.config.retrieval,
        )
        cfg = self.config.retrieval
        recent = {
            row["id"] for row in sorted(rows, key=lambda x: -x["time"])[: cfg.recency_candidates]
        }
        hits = []
        for row, rel in zip(rows, relevance, strict=True):
            if rel <= 0.0 and row["id"] not in recent:
                continue
            score = retrieval_score(
                age_seconds=now - row["time"],
                importance=row["importance"],
                relevance=rel,
                config=cfg,
            )
            hits.append(_hit(record_from_payload(row["id"], row), score, "cold"))
        return sorted(hits, key=lambda h: (-h.score, -h.id))[: r.top_k]

    @staticmethod
    def _diversify(hits: list[ScoredPoint], top_k: int, lambda_: float) -> list[ScoredPoint]:
        vectors = [
            p.vectors.dense
            if p.vectors and p.vectors.dense is not None
            else (p.vectors.sparse if p.vectors else None)
            for p in hits
        ]
        if any(v is None for v in vectors):
            return hits[:top_k]
        order = mmr_select([p.score for p in hits], vectors, top_k, lambda_)
        return [hits[i] for i in order]

    async def _records(self, memory_ids: Iterable[int]) -> dict[int, MemoryRecord]:
        """Records for ids from the hot tier, else from the vector store's payload."""
        found: dict[int, MemoryRecord] = {}
        missing: list[int] = []
        for memory_id in memory_ids:
            if memory_id in self.hot:
                found[memory_id] = self.hot.record(memory_id)
            elif memory_id not in found:
                missing.append(memory_id)
        if missing:
            for memory_id, payload in (await self.store.retrieve(missing)).items():
                found[memory_id] = record_from_payload(memory_id, payload)
        return found

    def _cold_records(self, memory_ids: Iterable[int]) -> dict[int, MemoryRecord]:
        rows = self.cold.scan(ids=memory_ids).to_pylist()
        return {row["id"]: record_from_payload(row["id"], row) for row in rows}

    async def get_by_ids(
        self, memory_ids: Iterable[int], agent_id: int | None = None
    ) -> list[MemoryRecord]:
        """Memories by id from any tier, in the order asked; KeyError naming an id that is
        not there (or not the agent's)."""
        ids = list(memory_ids)
        records = await self._records(ids)
        missing = [i for i in ids if i not in records]
        if missing:
            records.update(self._cold_records(missing))
        out = []
        for memory_id in ids:
            record = records.get(memory_id)
            if record is None or (agent_id is not None and record.agent_id != agent_id):
                owner = "" if agent_id is None else f" of agent {agent_id}"
                raise KeyError(f"unknown memory id {memory_id!r}{owner}")
            out.append(record)
        return out

    async def link_cognition(
        self, agent_id: int, memory_ids: Sequence[int], cognition_id: int
    ) -> None:
        """Link memories to the cognition (thought, reflection) they led to; both the agent's."""
        self.require_agent(agent_id)
        records = await self.get_by_ids([*memory_ids, cognition_id], agent_id)
        warm = await self.store.retrieve([r.id for r in records])
        frozen = [r.id for r in records if r.id not in warm]
        if frozen:
            raise ValueError(
                f"memories {frozen} are in the cold tier (read-only); link hot or warm memories"
            )
        *sources, cognition = records
        self.hot.link(memory_ids, cognition_id)
        for record in sources:
            links = list(dict.fromkeys([*record.cognition_ids, cognition_id]))
            await self.store.set_payload([record.id], {"links": links})
        evidence = list(dict.fromkeys([*cognition.evidence_ids, *memory_ids]))
        await self.store.set_payload([cognition_id], {"evidence": evidence})

    async def related_cognition(self, agent_id: int, memory_id: int) -> list[MemoryRecord]:
        """The cognition memories `memory_id` is linked to."""
        (record,) = await self.get_by_ids([memory_id], agent_id)
        return await self.get_by_ids(record.cognition_ids, agent_id)

    # ------------------------------------------------------------------ batching entry points
    async def submit_add(self, request: AddRequest) -> int:
        self.require_agent(request.agent_id)
        return await self._add_batcher.submit(request)

    async def submit_search(self, request: SearchRequest) -> list[MemoryHit]:
        self.require_agent(request.agent_id)
        return await self._search_batcher.submit(request)

    async def submit_update(self, update: KVUpdate) -> None:
        await self._kv_update_batcher.submit(update)

    async def submit_kv_search(self, request: KVSearchRequest) -> list[KVHit]:
        self.require_agent(request.agent_id)
        return await self._kv_search_batcher.submit(request)

    # ------------------------------------------------------------------ tiers
    async def end_tick(self) -> dict[str, int]:
        """Tier migration at the end of a tick (hot eviction, warm → cold moves)."""
        return await tiering.end_tick(self)

    async def tier_counts(self) -> dict[str, int]:
        """Memories per tier: hot ⊂ warm (RAM copy), cold apart; total = warm + cold."""
        await tiering.recover(self)
        return {"hot": len(self.hot), "warm": await self.store.count(), "cold": self.cold.count()}

    async def checkpoint(self, directory: Path) -> dict[str, Any]:
        """Write this group's memory to `directory` atomically (see memory.checkpoint)."""
        from societas.memory.checkpoint import checkpoint

        return await checkpoint(self, Path(directory))

    @classmethod
    async def restore(cls, directory: Path, root: Path, **kwargs: Any) -> GroupMemory:
        """A group under a fresh `root` rebuilt from a checkpoint directory."""
        from societas.memory.checkpoint import restore

        return await restore(Path(directory), Path(root), **kwargs)

    # ------------------------------------------------------------------ lifecycle
    async def memory_count(self, agent_id: int | None = None) -> int:
        """Stream memories in the vector store (all agents, or one)."""
        return await self.store.count(agent_id=agent_id)

    async def flush(self) -> None:
        await self.store.flush()
        await self.kv_store.flush()

    async def close(self) -> None:
        await self.store.close()
        await self.kv_store.close()


def _hit(record: MemoryRecord, score: float, tier: str) -> MemoryHit:
    return MemoryHit(**record.model_dump(), score=score, tier=tier)
