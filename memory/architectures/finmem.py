"""The `finmem` profile's per-layer retrieval and access boost (FinMem, Yu et al. 2023)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from societas.memory.policies.forgetting import LAYERS

if TYPE_CHECKING:
    from societas.memory.architectures.profiles import AgentProfiles
    from societas.memory.model.clock import SimClock
    from societas.memory.model.records import MemoryHit, SearchRequest
    from societas.memory.retrieval.sparse_index import SparseIndex
    from societas.memory.store.hot_store import HotStore
    from societas.memory.store.id_map import IdMap
    from societas.memory.vectorstores import VectorStore


def _split(profiles: AgentProfiles, r: SearchRequest) -> bool:
    """Whether `r`'s agent retrieves per layer and `r` is not one layer's request already."""
    policy = profiles.forgetting(r.agent_id)
    if not (policy.enabled and policy.per_layer_retrieval):
        return False
    return not (r.layers is not None and len(r.layers) == 1)


def layered_requests(
    profiles: AgentProfiles, requests: Sequence[SearchRequest]
) -> tuple[list[SearchRequest], list[int]] | None:
    """One request per (request, layer) for per-layer agents, and how many each became; or None."""
    split = [_split(profiles, r) for r in requests]
    if not any(split):
        return None
    flat: list[SearchRequest] = []
    spans: list[int] = []
    for r, per_layer in zip(requests, split, strict=True):
        layers = (r.layers or LAYERS) if per_layer else ()
        parts = [r.model_copy(update={"layers": (layer,)}) for layer in layers] or [r]
        flat.extend(parts)
        spans.append(len(parts))
    return flat, spans


def merge_layers(results: Sequence[list[MemoryHit]], spans: Sequence[int]) -> list[list[MemoryHit]]:
    """Each request's per-layer hits merged, best first (every layer's top_k kept)."""
    merged, start = [], 0
    for span in spans:
        hits = {h.id: h for chunk in results[start : start + span] for h in chunk}
        merged.append(sorted(hits.values(), key=lambda h: (-h.score, -h.id)))
        start += span
    return merged


class BoostSources(Protocol):
    """What the ledger reads of a group, at each call (a survey swaps the profiles)."""

    clock: SimClock
    profiles: AgentProfiles
    hot: HotStore
    sparse_index: SparseIndex | None  # the RAM index, ranking by importance (None: the engine)
    store: VectorStore
    max_importance: dict[int, float]
    counters: dict[str, int]

    @property
    def unsent(self) -> IdMap | None: ...


class BoostLedger:
    """Payload changes made by reads, kept in RAM and written to the store on the tier schedule."""

    def __init__(self, group: BoostSources) -> None:
        self.group = group
        self.pending: dict[int, dict[str, Any]] = {}  # memory id → payload fields to write
        self.agent_of: dict[int, int] = {}
        self.writes = 0  # store calls made by flushes (a figure for tests and benchmarks)

    def __len__(self) -> int:
        return len(self.pending)

    def value(self, memory_id: int, key: str, stored: Any) -> Any:
        """A payload field as the store will hold it after the next flush."""
        patch = self.pending.get(memory_id)
        return patch[key] if patch is not None and key in patch else stored

    def patch(self, agent_id: int, memory_id: int, fields: dict[str, Any]) -> None:
        """Fields to write at the next flush; a new importance reaches the RAM index now."""
        self.pending.setdefault(memory_id, {}).update(fields)
        self.agent_of[memory_id] = agent_id
        if self.group.sparse_index is not None and "importance" in fields:
            self.group.sparse_index.set_importance(agent_id, memory_id, fields["importance"])

    def apply(self, agent_id: int, hit: MemoryHit, fields: dict[str, Any]) -> None:
        """`patch`, and the hot columns and the ranker's bound get the importance now."""
        self.patch(agent_id, hit.id, fields)
        layer = self.value(hit.id, "layer", hit.layer)
        since = self.value(hit.id, "layer_since", hit.layer_since)
        self._hold(agent_id, hit.id, fields["importance"], layer, since)

    def get_state(self) -> list[list[Any]]:
        """Pending changes as JSON rows (checkpoints keep them pending)."""
        return [[i, self.agent_of[i], self.pending[i]] for i in sorted(self.pending)]

    def set_state(self, rows: Sequence[Sequence[Any]]) -> None:
        self.pending.clear()
        self.agent_of.clear()
        for memory_id, agent_id, fields in rows:
            self.patch(int(agent_id), int(memory_id), dict(fields))

    def record(self, hits: Sequence[MemoryHit]) -> None:
        """Boost each distinct hit of an agent with forgetting on (decayed + access_boost)."""
        now, profiles = self.group.clock.abs_seconds, self.group.profiles
        for hit in {h.id: h for h in hits}.values():
            policy = profiles.forgetting(hit.agent_id)
            if not policy.enabled:
                continue
            importance = self.value(hit.id, "importance", hit.importance)
            layer = self.value(hit.id, "layer", hit.layer)
            since = self.value(hit.id, "layer_since", hit.layer_since)
            current = policy.effective_importance(importance, layer, since, now)
            boosted = min(1.0, current + policy.access_boost)
            fields = {"importance": boosted, "layer": layer, "layer_since": now}
            self.apply(hit.agent_id, hit, fields)
        self.group.counters["accesses"] += len(hits)

    async def flush(self) -> int:
        """Write the pending changes, one update per distinct payload; returns the writes."""
        if not self.pending:
            return 0
        pending, agent_of = self.pending, self.agent_of
        self.pending, self.agent_of = {}, {}
        group, unsent = self.group, self.group.unsent
        hot = group.hot  # pending and hot: the hot columns carry the change (warm_rows do not)
        ids = [i for i in sorted(pending) if unsent is None or i not in unsent or i not in hot]
        present = await group.store.retrieve(ids) if ids else {}
        now, profiles = group.clock.abs_seconds, group.profiles
        by_payload: dict[str, list[int]] = {}
        for memory_id in ids:
            if memory_id in present:
                fields = rebased(profiles, agent_of[memory_id], pending[memory_id], now)
                key = json.dumps(fields, sort_keys=True)
                by_payload.setdefault(key, []).append(memory_id)
                if fields is not pending[memory_id]:  # rebased: RAM holds what the store will
                    agent_id, importance = agent_of[memory_id], fields["importance"]
                    self._hold(agent_id, memory_id, importance, fields["layer"], now)
                    if group.sparse_index is not None:
                        group.sparse_index.set_importance(agent_id, memory_id, importance)
        await group.store.set_payloads(
            [(members, json.loads(key)) for key, members in sorted(by_payload.items())]
        )
        self.writes += len(by_payload)
        return len(by_payload)

    def _hold(self, agent: int, memory: int, importance: float, layer: str, since: float) -> None:
        """The hot columns take a memory's layer values; the ranker's bound stays valid."""
        bound = self.group.max_importance
        bound[agent] = max(importance, bound.get(agent, -1.0))
        self.group.hot.set_layer(memory, layer, importance, since)


IMPORTANCE_DECIMALS = 3  # importance as stored by the tier-schedule writes (±0.0005)


def rebased(
    profiles: AgentProfiles, agent_id: int, fields: dict[str, Any], now: float
) -> dict[str, Any]:
    """A boost as of `now`: importance decayed to now and rounded, so payloads are shared."""
    if "layer_since" not in fields or "importance" not in fields:
        return fields
    policy = profiles.forgetting(agent_id)
    if not policy.enabled:
        return fields
    decayed = policy.effective_importance(
        fields["importance"], fields["layer"], fields["layer_since"], now
    )
    return {**fields, "importance": round(decayed, IMPORTANCE_DECIMALS), "layer_since": now}
