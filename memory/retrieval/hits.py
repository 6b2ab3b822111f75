"""Search hits from the hot columns, built for a whole batch of searches.

`HotStore.hit` builds one hit reading its row a field at a time; a tick runs a search per
agent and each returns several hits, so a large batch's rows are read column by column (one
numpy gather a column) instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from pydantic import TypeAdapter

from societas.memory.model.records import MemoryHit

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory
    from societas.memory.model.records_meta import AccessLedger
    from societas.memory.store.code_column import CodeColumn
    from societas.memory.store.hot_store import HotStore

GATHER_AT = 24  # hits in a batch from which columns are gathered, not rows read one by one
_HIT_LIST = TypeAdapter(list[MemoryHit])  # a batch of hits validated in one call
_NUMBERS = ("agent_ids", "days", "ts", "times", "importances", "layer_since", "access_counts")


class HotHits:
    """Builds `MemoryHit`s of hot memories; valid while the hot columns are not changed."""

    def __init__(self, hot: HotStore) -> None:
        self.hot = hot

    def __call__(self, memory_id: int, score: float, row: int | None = None) -> MemoryHit:
        """The hot memory `memory_id` (at `row`, when known) as a hit (as `HotStore.hit`)."""
        fields = self.hot.fields(memory_id, row)
        fields["score"] = score
        fields["tier"] = "hot"
        return _made(fields)

    def many(
        self,
        memory_ids: Sequence[int],
        scores: Sequence[float],
        rows: Sequence[int] | None = None,
    ) -> list[MemoryHit]:
        """The hot memories `memory_ids` as hits with these scores, in that order (`rows`:
        their hot rows, when the caller has looked them up already)."""
        if len(memory_ids) < GATHER_AT:  # a column gather costs more than a few row reads
            if rows is None:
                return list(map(self, memory_ids, scores))
            return list(map(self, memory_ids, scores, rows))
        hot = self.hot
        if rows is None:
            row_of = hot.row_of
            rows = [row_of[i] for i in memory_ids]
        at = np.array(rows, np.intp)
        agent, day, t, time, importance, since, reads = (
            _gather(getattr(hot, name), at) for name in _NUMBERS
        )
        last = [None if math.isnan(x) else x for x in _gather(hot.last_accessed, at)]
        expires = [None if math.isinf(x) else x for x in _gather(hot.expires, at)]
        topic, location, layer, kind = (
            _decode(c, at) for c in (hot.topics, hot.locations, hot.layers, hot.types)
        )
        text = hot.texts.__getitem__
        links, evidence, tags, metadata = hot.cognition_links, hot.evidence, hot.tags, hot.metadata
        # The sparse columns are empty in most runs: then no lookups a hit (as HotStore.fields).
        return _HIT_LIST.validate_python(
            [
                {
                    "id": memory_id,
                    "agent_id": agent[j],
                    "text": text(row),
                    "topic": topic[j],
                    "day": day[j],
                    "t": t[j],
                    "time": time[j],
                    "location": location[j],
                    "importance": importance[j],
                    "cognition_ids": tuple(links.get(memory_id, ())) if links else (),
                    "evidence_ids": tuple(evidence.get(memory_id, ())) if evidence else (),
                    "layer": layer[j],
                    "layer_since": since[j],
                    "type": kind[j],
                    "tags": tags.get(memory_id, ()) if tags else (),
                    "metadata": metadata.get(memory_id, {}) if metadata else {},
                    "access_count": reads[j],
                    "last_accessed": last[j],
                    "expires_at": expires[j],
                    "score": scores[j],
                    "tier": "hot",
                }
                for j, (memory_id, row) in enumerate(zip(memory_ids, rows, strict=True))
            ]
        )


def pending_warm_hits(
    warm: HotStore,
    memory_ids: list[int],
    rows: list[int],
    scores: list[float],
    layered: bool,
    access: AccessLedger,
) -> list[MemoryHit | None]:
    """Warm memories still in RAM (not yet in the engine, no pending patch) as the hits the
    payload round trip makes, read from their columns; None where that round trip would
    change a value (metadata goes through JSON), for the caller to take it."""
    metadata = warm.metadata
    out: list[MemoryHit | None] = []
    for memory_id, score, row in zip(memory_ids, scores, rows, strict=True):
        if metadata and memory_id in metadata:
            out.append(None)
            continue
        fields = warm.fields(memory_id, row)
        time = fields["time"]
        fields["day"] = int(time // 86_400)  # as record_from_payload derives it
        if not fields["location"]:
            fields["location"] = None
        if not layered:  # payloads carry layers only when forgetting is on
            fields["layer"], fields["layer_since"] = "short", time
        fields["tags"] = tuple(fields["tags"])
        if memory_id in access.pending:
            fields["access_count"] = access.overlay(memory_id, fields["access_count"])
            fields["last_accessed"] = access.last[memory_id]
        fields["score"] = float(score)
        fields["tier"] = "warm"
        out.append(_made(fields))
    return out


def waiting_warm_hits(
    group: GroupMemory, ids: list[int], scores: list[float], at: list[int]
) -> dict[int, MemoryHit]:
    """Hits of the memories `ids[j]` (j in `at`) that wait in the group's `warm_rows` for the
    engine (not yet written, no patch pending), by j, as `pending_warm_hits` makes them."""
    deferred = group.deferred
    if deferred is None or not at:
        return {}
    warm = group.warm_rows
    row_of, pending, patches = warm.row_of, deferred.pending, deferred.patches
    taken, taken_ids, rows, taken_scores = [], [], [], []
    for j in at:
        memory_id = ids[j]
        row = row_of.get(memory_id)
        if row is None or memory_id not in pending or memory_id in patches:
            continue
        taken.append(j)
        taken_ids.append(memory_id)
        rows.append(row)
        taken_scores.append(scores[j])
    if not taken:
        return {}
    layered = group.profiles.any_forgetting
    hits = pending_warm_hits(warm, taken_ids, rows, taken_scores, layered, group.access)
    return {j: hit for j, hit in zip(taken, hits, strict=True) if hit is not None}


def _made(fields: dict) -> MemoryHit:
    """A hit with exactly these fields, validated."""
    return MemoryHit.model_validate(fields)


def _gather(column, at: np.ndarray) -> list:
    """The values of a typed `array` column at rows `at`, as Python numbers."""
    return np.frombuffer(column, column.typecode)[at].tolist()


def _decode(column: CodeColumn, at: np.ndarray) -> list[str | None]:
    """The values of a coded column at rows `at`."""
    values = column.values
    return [values[c] for c in _gather(column.codes, at)]
