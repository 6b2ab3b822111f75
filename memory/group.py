"""One group's memory: every agent's KV state and stream, batched over one embedder and store."""

from __future__ import annotations

import asyncio
import copy
import functools
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from societas.memory.agent import AgentMemory, StatusMemory, StreamMemory
from societas.memory.architectures.cognitive_group import CognitiveMemory
from societas.memory.architectures.finmem import BoostLedger
from societas.memory.architectures.profiles import AgentProfiles
from societas.memory.embedding import Embedder, build_embedder
from societas.memory.model.associations import AssociationIndex
from societas.memory.model.citizen import CITIZEN_MEMORY_CONFIG
from societas.memory.model.clock import SimClock
from societas.memory.model.config import GroupMemoryConfig, MemoryConfig, check_value
from societas.memory.model.records import (
    AddRequest,
    KVHit,
    KVSearchRequest,
    MemoryHit,
    SearchRequest,
)
from societas.memory.model.records_meta import AccessLedger
from societas.memory.policies.contradictions import ContradictionJudge, rule_judge
from societas.memory.policies.forgetting import default_summary
from societas.memory.policies.habits import HabitTracker
from societas.memory.policies.state import PolicyState
from societas.memory.policies.temporal import TemporalLinker
from societas.memory.retrieval import group_search
from societas.memory.retrieval.batching import MicroBatcher
from societas.memory.retrieval.ranking import TIE_MARGIN, Ranker
from societas.memory.retrieval.sparse_index import SparseIndex
from societas.memory.store.deferred_store import DeferredStore
from societas.memory.store.group_kv import GroupKV, KVUpdate, UpdateMode
from societas.memory.store.hot_store import HotStore
from societas.memory.store.id_map import IdMap
from societas.memory.store.stream_write import write_memories
from societas.memory.store.write_queue import OwnedLock, WriteQueue
from societas.memory.tiers import tiering
from societas.memory.tiers.access_log import AccessLog
from societas.memory.tiers.cold import ColdStore
from societas.memory.vectorstores import VectorStore, build_vector_store

ID_BITS = 40  # point id = group_id << 40 | sequence: unique across groups of one run
COUNTERS = (  # the group's operation counts, reported in its stats
    "adds",
    "searches",
    "kv_updates",
    "kv_searches",
    "embedded_texts",
    "vector_upserts",
    "vector_queries",
    "migrated_to_cold",
    "forgotten",
    "cleaned_up",
    "promoted",
    "demoted",
    "consolidated",
    "accesses",
    "retrieval_candidates",  # memories the ranking covered (all hot + warm)
    "retrieval_scored",  # of which scored exactly (the rest ruled out by bound)
    "retrieval_exhaustive",  # searches rescored in the engine over all memories
    "expired",  # memories removed at their expires_at (hot and warm)
)
__all__ = ["ID_BITS", "TIE_MARGIN", "GroupMemory", "KVUpdate", "UpdateMode"]


class GroupMemory:
    """KV + stream memory of one group: the KV and search parts, stream writes, tiers, lifecycle."""

    def __init__(
        self,
        config: GroupMemoryConfig | None = None,
        memory_config: MemoryConfig = CITIZEN_MEMORY_CONFIG,
        *,
        root: Path | str | None = None,
        clock: SimClock | None = None,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        kv_store: VectorStore | None = None,
    ) -> None:
        config = self.config = config or GroupMemoryConfig()
        clock = self.clock = clock or SimClock()
        self.embedder: Embedder = embedder or build_embedder(config.embedding)
        dense, sparse = self.embedder.dense_size, self.embedder.has_sparse
        group_id = config.group_id
        root = Path(tempfile.mkdtemp(prefix="societas-memory-")) if root is None else Path(root)
        self.root = root
        shard_dir = Path(config.vector_store.path or root) / f"group-{group_id}"
        store = store or build_vector_store(
            config.vector_store, group_id, dense, sparse, shard_dir, "stream"
        )
        kv_store = kv_store or build_vector_store(
            config.vector_store, group_id, dense, sparse, shard_dir, "kv"
        )
        self.normalization = config.retrieval.resolved_normalization(dense is not None, sparse)
        ram = dense is None and sparse and config.tiers.ram_index
        self.hot = HotStore()
        self.warm_rows = HotStore()  # warm memories still in RAM columns (tiers.warm_in_ram)
        self.access = AccessLedger()  # reads of memories, written to the store in batches
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.sparse_index: SparseIndex | None = None
        self.deferred: DeferredStore | None = None
        if ram:
            self.sparse_index = SparseIndex()
            store = self.deferred = DeferredStore(
                store,
                self.sparse_index,
                hot=self.hot,
                warm_rows=self.warm_rows,
                access=self.access,
                counters=self.counters,
                layered=lambda: self.profiles.any_forgetting,
            )
        keep = config.tiers.warm_in_ram
        on_edge = config.vector_store.backend == "edge"
        self.warm_in_ram = self.deferred is not None and (on_edge if keep is None else keep)
        self.cold = ColdStore(root / "cold", group_id, config.tiers.cold_day_window)
        self.journal = tiering.MigrationJournal(self.cold.dir)
        self.warm_counts: dict[int, int] = {}
        self.ticks_since_migration = 0
        self.evicted_since_trim = 0  # hot rows evicted since free pages went back (tiering)
        self.recovery_due = True  # end_tick looks for a half-done move or merge (tiering)
        self.ticks_since_policies = 0
        # Writes consolidation summaries; replace with an LLM-backed callable (sync or async).
        self.summarizer: Callable[[list[str]], str | Awaitable[str]] = default_summary
        # Judges contradictions (memory.policies.contradictions): rules by default, an LLM in runs.
        self.contradiction_judge: ContradictionJudge = rule_judge
        self.known_agents: set[int] = set()
        self._next_seq = 0
        self.op_lock: OwnedLock = OwnedLock()  # one batched operation at a time
        yields = config.batch_yields
        write = functools.partial(write_memories, self)
        self.writes = WriteQueue(write, self.embed_slots, self.op_lock, yields)
        kv = self.kv = GroupKV(
            memory_config,
            self.embedder,
            kv_store,
            ram=bool(ram),
            known_agents=self.known_agents,
            require_agent=self.require_agent,
            allocate_ids=self._allocate_ids,
            counters=self.counters,
            op_lock=self.op_lock,
            writes=self.writes,
        )
        self.kv_store, self.kv_index = kv.kv_store, kv.kv_index
        self.kv_slots, self.kv_by_key, self.kv_point = kv.kv_slots, kv.kv_by_key, kv.kv_point
        self.max_importance: dict[int, float] = {}  # per agent: bounds warm-only memories
        self.ranker = Ranker(self)
        self.associations = AssociationIndex()  # typed edges for spreading activation
        self.access_log = AccessLog(root, group_id) if config.access_log else None
        self.boosts = BoostLedger(self)  # read boosts, written on the tier schedule
        self.expiring: dict[int, float] = {}  # hot/warm memories with an expiry → expires_at
        self.search = group_search.GroupSearch(
            config.retrieval,
            config.policies.associations,
            clock=clock,
            embedder=self.embedder,
            store=store,
            hot=self.hot,
            cold=self.cold,
            ranker=self.ranker,
            sparse_index=self.sparse_index,
            search_cold=config.tiers.search_cold,
            normalization=self.normalization,
            profiles=AgentProfiles(config),  # each agent's profile, by its type
            associations=self.associations,
            access=self.access,
            access_log=self.access_log,
            expiring=self.expiring,
            unsent=self.unsent,
            counters=self.counters,
            known_agents=self.known_agents,
            require_agent=self.require_agent,
            op_lock=self.op_lock,
            writes=self.writes,
            sync_writes=self.sync_writes,
            warm_hits=functools.partial(group_search.waiting_warm_hits, self),
            boost=self.boosts.record,
        )
        policies = config.policies  # temporal episodes, habits (memory.policies.state)
        self.policy_state = PolicyState(
            TemporalLinker(policies.temporal, self.associations),
            HabitTracker(
                policies.habits,
                clock=clock,
                store=store,
                hot=self.hot,
                max_importance=self.max_importance,
                add_many=self.add_many,
            ),
        )
        self.cognition: CognitiveMemory | None = None  # the cognitive profile's layers
        if self.profiles.uses_cognitive:
            self.cognition = CognitiveMemory(
                clock=clock,
                profiles=lambda: self.profiles,
                kv=kv,
                hot=self.hot,
                boosts=self.boosts,
                habits=self.policy_state.habits,
                add_many=self.add_many,
            )
        self.kv_get, self.kv_peek, self.kv_column = kv.kv_get, kv.kv_peek, kv.kv_column
        self.set_kv_default, self.check_update = kv.set_kv_default, kv.check_update
        self.kv_update_now, self.kv_apply = kv.kv_update_now, kv.kv_apply
        self.embed_kv, self.update_many = kv.embed_kv, kv.update_many
        self.kv_search_many, self.export = kv.kv_search_many, kv.export
        self.kv_row_iter, self.kv_rows = kv.kv_row_iter, kv.kv_rows
        self.set_kv_rows = kv.set_kv_rows
        search = self.search
        self.search_many, self.point_filter = search.search_many, search.point_filter
        self.get_by_ids, self.link_cognitions = search.get_by_ids, search.link_cognitions
        self.associate, self.related_cognition = search.associate, search.related_cognition
        self._search_batcher = MicroBatcher(self.search_many, yields)
        self._kv_search_batcher = MicroBatcher(self.kv_search_many, yields)

    @property
    def memory_config(self) -> MemoryConfig:
        """The KV attributes' config (replaced when a seed adds an attribute at run time)."""
        return self.kv.memory_config

    @memory_config.setter
    def memory_config(self, memory_config: MemoryConfig) -> None:
        self.kv.memory_config = memory_config

    @property
    def store(self) -> VectorStore:
        """The stream's vector store (wrapped by the write-behind `deferred` when RAM-indexed)."""
        return self.search.store

    @store.setter
    def store(self, store: VectorStore) -> None:
        self.search.store = store

    @property
    def profiles(self) -> AgentProfiles:
        """Each agent's profile, by its type (a survey swaps in a quiet copy for a search)."""
        return self.search.profiles

    @profiles.setter
    def profiles(self, profiles: AgentProfiles) -> None:
        self.search.profiles = profiles

    @property
    def agent_ids(self) -> list[int]:
        return sorted(self.known_agents)

    @property
    def unsent(self) -> IdMap | None:
        """Memories not in the vector engine yet (deferred writes), else None."""
        return None if self.deferred is None else self.deferred.pending

    def require_agent(self, agent_id: int) -> None:
        """KeyError naming `agent_id` if this group does not own it."""
        if agent_id not in self.known_agents:
            raise KeyError(f"unknown agent {agent_id!r} in group {self.config.group_id}")

    def agent(self, agent_id: int) -> AgentMemory:
        """The per-agent view (`.status`, `.stream`) of one agent of this group."""
        self.require_agent(agent_id)
        status = StatusMemory(self.kv, self.submit_kv_search, agent_id)
        stream = StreamMemory(self, agent_id)
        return AgentMemory(agent_id, self.clock, status, stream, self.cognition)

    async def add_agents(self, profiles: Mapping[int, Mapping[str, Any]]) -> None:
        """Register agents with their initial KV values (defaults for the rest), embedded."""
        checked: dict[int, dict[str, Any]] = {}
        for agent_id, profile in profiles.items():
            if isinstance(agent_id, bool) or not isinstance(agent_id, int) or agent_id < 0:
                raise ValueError(f"agent_id must be a non-negative int, got {agent_id!r}")
            if agent_id in self.known_agents:
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
        await self.embed_kv([e for e in embedded if e[2] not in (None, "", [], {})])
        for agent_id, values in checked.items():
            for key, value in values.items():
                self.kv_by_key[key][agent_id] = value
            self.known_agents.add(agent_id)
            self.profiles.assign(agent_id, values.get("type"))

    def issued_count(self) -> int:
        """How many memory ids the group has handed out: sequences 0 to n - 1 of its prefix."""
        return self._next_seq

    def _allocate_ids(self, n: int) -> list[int]:
        base = self.config.group_id << ID_BITS
        start = self._next_seq
        self._next_seq += n
        return [base | seq for seq in range(start, start + n)]

    async def add_many(self, requests: Sequence[AddRequest]) -> list[int]:
        """Write many agents' memories: one embedding batch, one upsert; returns their ids."""
        async with self.op_lock:
            await self.writes.apply(kv=False)  # queued adds hold smaller ids: written first
            if not requests:
                return []
            for r in requests:
                self.require_agent(r.agent_id)
            ids = self._allocate_ids(len(requests))
            await write_memories(self, requests, ids)
            return ids

    async def embed_slots(self, slots: Sequence[tuple[int, str]]) -> None:
        """Embed the current values of (agent, key) slots, stale since they changed."""
        await self.embed_kv([(a, k, self.kv_peek(a, k)) for a, k in slots])

    def queue_add(self, request: AddRequest) -> int:
        """Queue one validated memory and return its id at once; written with the others queued."""
        if request.agent_id not in self.known_agents:
            self.require_agent(request.agent_id)  # raises, naming it
        seq = self._next_seq  # as _allocate_ids(1), inline: every agent adds every tick
        self._next_seq = seq + 1
        memory_id = (self.config.group_id << ID_BITS) | seq
        clock = self.clock
        self.writes.add(request, memory_id, (clock.day, clock.t))
        return memory_id

    def join_search(self, request: SearchRequest) -> Awaitable[list[MemoryHit]]:
        """Join this loop turn's search batch; KeyError for an agent not of this group."""
        if request.agent_id not in self.known_agents:
            self.require_agent(request.agent_id)  # raises, naming it
        return self._search_batcher.enqueue(request)

    async def sync_writes(self, kv: bool = False) -> None:
        """Write queued adds (and, with `kv`, stale KV embeddings) before a read."""
        writes = self.writes
        if not writes.adds and not (kv and writes.kv):
            return
        lock = self.op_lock
        if lock.owner is not None and lock.owner is asyncio.current_task():
            await writes.apply(kv)
            return
        async with lock:
            await writes.apply(kv)

    async def submit_kv_search(self, request: KVSearchRequest) -> list[KVHit]:
        self.require_agent(request.agent_id)
        return await self._kv_search_batcher.submit(request)

    def get_state(self) -> dict[str, Any]:
        """The group's scalars as sorted JSON-ready values, saved by a checkpoint."""
        return {
            "group_id": self.config.group_id,
            "clock": {"day": self.clock.day, "t": self.clock.t},
            "next_seq": self._next_seq,
            "agents": sorted(self.known_agents),
            "warm_counts": sorted([a, n] for a, n in self.warm_counts.items()),
            "max_importance": sorted([a, v] for a, v in self.max_importance.items()),
            "newest_evicted": sorted([a, v] for a, v in self.hot.newest_evicted.items()),
            "counters": dict(self.counters),
            # a restored group migrates and runs policies at the same ticks as the run it continues
            "cadence": {
                "ticks_since_migration": self.ticks_since_migration,
                "ticks_since_policies": self.ticks_since_policies,
            },
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Put back what `get_state` returned (older checkpoints: missing keys default)."""
        self.known_agents.clear()
        self.known_agents.update(state["agents"])
        self._next_seq = state["next_seq"]
        for a, k, i in state.get("kv_points", ()):  # older checkpoints kept KV point ids here
            self.kv_point[(a, k)] = i
        self.warm_counts.clear()
        self.warm_counts.update(state["warm_counts"])
        self.max_importance.clear()
        self.max_importance.update(state.get("max_importance", []))
        self.hot.newest_evicted = {a: v for a, v in state.get("newest_evicted", [])}
        self.counters.update(state["counters"])
        cadence = state.get("cadence", {})
        self.ticks_since_migration = int(cadence.get("ticks_since_migration", 0))
        self.ticks_since_policies = int(cadence.get("ticks_since_policies", 0))
        self.clock.set(state["clock"]["day"], state["clock"]["t"])

    async def end_tick(self) -> dict[str, int]:
        """Tier migration at the end of a tick (hot eviction, warm → cold moves)."""
        await self.sync_writes()
        return await tiering.end_tick(self)

    async def tier_counts(self) -> dict[str, int]:
        """Memories per tier: hot ⊂ warm (RAM copy), cold apart; total = warm + cold."""
        await self.sync_writes()
        await tiering.recover(self)
        warm, cold = await self.store.count(), await asyncio.to_thread(self.cold.count)
        return {"hot": len(self.hot), "warm": warm, "cold": cold}

    async def checkpoint(self, directory: Path) -> dict[str, Any]:
        """Write this group's memory to `directory` atomically (see memory.store.checkpoint)."""
        from societas.memory.store.checkpoint import checkpoint

        await self.sync_writes(kv=True)
        return await checkpoint(self, Path(directory))

    @classmethod
    async def restore(cls, directory: Path, root: Path, **kwargs: Any) -> GroupMemory:
        """A group under a fresh `root` rebuilt from a checkpoint directory."""
        from societas.memory.store.checkpoint import restore

        return await restore(Path(directory), Path(root), **kwargs)

    async def memory_count(self, agent_id: int | None = None) -> int:
        """Stream memories in the vector store (all agents, or one)."""
        await self.sync_writes()
        return await self.store.count(agent_id=agent_id)

    async def flush(self) -> None:
        await self.sync_writes(kv=True)
        await self.store.flush()
        await self.kv_store.flush()

    async def close(self) -> None:
        await self.sync_writes(kv=True)
        await self.store.close()
        await self.kv_store.close()
