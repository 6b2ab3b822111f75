"""Search hits read from RAM columns: hot rows, and warm rows not yet in the engine."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from societas.memory.model.records import MemoryHit

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory
    from societas.memory.model.records_meta import AccessLedger
    from societas.memory.store.hot_store import HotStore

_HITS = TypeAdapter(list[MemoryHit])


class HotHits:
    """Builds `MemoryHit`s of hot memories; valid while the hot columns are not changed."""

    def __init__(self, hot: HotStore) -> None:
        self.hot = hot

    def many(
        self, memory_ids: Sequence[int], scores: Sequence[float], rows: Sequence[int] | None = None
    ) -> list[MemoryHit]:
        """The hot memories `memory_ids` as hits with these scores, in that order."""
        if rows is None:
            row_of = self.hot.row_of
            rows = [row_of[i] for i in memory_ids]
        return _HITS.validate_python(_lean(self.hot, memory_ids, rows, scores, "hot"), strict=True)


def _lean(
    store: HotStore,
    memory_ids: Sequence[int],
    rows: Sequence[int],
    scores: Sequence[float],
    tier: str,
) -> list[dict[str, Any]]:
    """Each row's hit fields, the typed-record ones only when not their default."""
    agent_ids, days, ts, times = store.agent_ids, store.days, store.ts, store.times
    importances, since, counts = store.importances, store.layer_since, store.access_counts
    last_read, expiry = store.last_accessed, store.expires
    topics, topic_of = store.topics.values, store.topics.codes
    places, place_of = store.locations.values, store.locations.codes
    layers, layer_of = store.layers.values, store.layers.codes
    types, type_of = store.types.values, store.types.codes
    sparse: list[tuple[str, Mapping[int, Any], Callable[[Any], Any]]] = [  # mostly empty
        (name, found, made)
        for name, found, made in (
            ("cognition_ids", store.cognition_links, tuple),
            ("evidence_ids", store.evidence, tuple),
            ("tags", store.tags, tuple),
            ("metadata", store.metadata, dict),
        )
        if found
    ]
    isnan, isinf = math.isnan, math.isinf
    out = []
    for memory_id, row, text, score in zip(
        memory_ids, rows, store.texts.take(rows), scores, strict=True
    ):
        fields = {
            "id": memory_id,
            "agent_id": agent_ids[row],
            "text": text,
            "topic": topics[topic_of[row]],
            "day": days[row],
            "t": ts[row],
            "time": times[row],
            "location": places[place_of[row]],
            "importance": importances[row],
            "layer": layers[layer_of[row]],
            "layer_since": since[row],
            "type": types[type_of[row]],
            "score": float(score),
            "tier": tier,
        }
        if counts[row]:
            fields["access_count"] = counts[row]
        if not isnan(last_read[row]):
            fields["last_accessed"] = last_read[row]
        if not isinf(expiry[row]):
            fields["expires_at"] = expiry[row]
        for name, found, made in sparse:
            if memory_id in found:
                fields[name] = made(found[memory_id])
        out.append(fields)
    return out


def pending_warm_hits(
    warm: HotStore,
    memory_ids: list[int],
    rows: list[int],
    scores: list[float],
    layered: bool,
    access: AccessLedger,
) -> list[MemoryHit | None]:
    """Warm memories still in RAM as hits; None where the payload round trip changes a value."""
    metadata = warm.metadata
    at = [j for j, memory_id in enumerate(memory_ids) if memory_id not in metadata]
    made = _lean(
        warm, [memory_ids[j] for j in at], [rows[j] for j in at], [scores[j] for j in at], "warm"
    )
    for fields in made:
        memory_id = fields["id"]
        time = fields["time"]
        fields["day"] = int(time // 86_400)  # as record_from_payload derives it
        if not fields["location"]:
            fields["location"] = None
        if not layered:  # payloads carry layers only when forgetting is on
            fields["layer"], fields["layer_since"] = "short", time
        if memory_id in access.pending:
            fields["access_count"] = access.overlay(memory_id, fields.get("access_count", 0))
            fields["last_accessed"] = access.last[memory_id]
    out: list[MemoryHit | None] = [None] * len(memory_ids)
    for j, hit in zip(at, _HITS.validate_python(made, strict=True), strict=True):
        out[j] = hit
    return out


def waiting_warm_hits(
    group: GroupMemory, ids: list[int], scores: list[float], at: list[int]
) -> dict[int, MemoryHit]:
    """Hits of the memories `ids[j]` (j in `at`) waiting in `warm_rows` for the engine, by j."""
    deferred = group.deferred
    if deferred is None or not at:
        return {}
    warm = group.warm_rows
    row_of, pending, patches = warm.row_of, deferred.pending, deferred.patches
    taken = [j for j in at if (i := ids[j]) in row_of and i in pending and i not in patches]
    if not taken:
        return {}
    taken_ids = [ids[j] for j in taken]
    rows, taken_scores = row_of.get_many(taken_ids), [scores[j] for j in taken]
    layered = group.profiles.any_forgetting
    hits = pending_warm_hits(warm, taken_ids, rows, taken_scores, layered, group.access)
    return {j: hit for j, hit in zip(taken, hits, strict=True) if hit is not None}
