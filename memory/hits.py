"""Search hits from the hot columns, built for a whole batch of searches.

`HotStore.hit` builds one hit through pydantic's trusted construction, reading its row a
field at a time; a tick runs a search per agent and each returns several hits, so here a
batch's hits are made in one call into the compiled kernel (memory/_hits.c, ~0.9 µs a hit)
or, without it, the rows are read column by column (one numpy gather a column) and each
hit's state is written directly (no model machinery per hit; tests compare all three).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from societas.memory import rank_kernel
from societas.memory.records import MemoryHit, trusted

if TYPE_CHECKING:
    from societas.memory.code_column import CodeColumn
    from societas.memory.group import GroupMemory
    from societas.memory.hot_store import HotStore
    from societas.memory.records_meta import AccessLedger

# Every field is given, so every hit has the same "fields set"; one set serves them all (the
# model is frozen, and pydantic copies the set before changing it in `model_copy`).
_ALL_SET = set(MemoryHit.model_fields)
GATHER_AT = 24  # hits in a batch from which columns are gathered, not rows read one by one
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
        kernel = rank_kernel.HITS
        if kernel is not None:
            hot = self.hot
            at = hot.row_of.get_many(memory_ids) if rows is None else list(rows)
            ids, scores = list(memory_ids), list(scores)
            return kernel.hits(columns_of(hot), ids, at, scores, "hot", MemoryHit, _ALL_SET)
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
        return [
            _made(
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
            )
            for j, (memory_id, row) in enumerate(zip(memory_ids, rows, strict=True))
        ]


def pending_warm_hits(
    warm: HotStore,
    memory_ids: list[int],
    rows: list[int],
    scores: list[float],
    layered: bool,
    access: AccessLedger,
) -> list[MemoryHit | None]:
    """Warm memories still in RAM (`GroupMemory.warm_rows`, not yet in the engine, no pending
    patch) as the hits the payload round trip makes (`DeferredStore.retrieve`, then
    `record_from_payload`, the read-count overlay and the hit: tests compare the two), read
    from their columns (in one kernel call when built); None where that round trip would
    change a value (metadata goes through JSON), for the caller to take it."""
    metadata = warm.metadata
    kernel = rank_kernel.HITS
    if kernel is not None:
        made = kernel.hits(columns_of(warm), memory_ids, rows, scores, "warm", MemoryHit, _ALL_SET)
    else:
        made = [_made(warm.fields(i, row)) for i, row in zip(memory_ids, rows, strict=True)]
    states = [hit.__dict__ for hit in made]  # set right below, before anyone sees them
    out: list[MemoryHit | None] = []
    for memory_id, score, hit, fields in zip(memory_ids, scores, made, states, strict=True):
        if metadata and memory_id in metadata:
            out.append(None)
            continue
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
        out.append(hit)
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


def columns_of(hot: HotStore) -> tuple:
    """The hot store's columns in the order the compiled kernel reads them (memory/_hits.c);
    spelled out (no loop): a lone agent's search makes one of these."""
    text_data, text_ends = hot.texts.buffers()
    topics, locations, layers, types = hot.topics, hot.locations, hot.layers, hot.types
    return (
        hot.agent_ids,
        hot.days,
        hot.ts,
        hot.times,
        hot.importances,
        hot.layer_since,
        hot.access_counts,
        hot.last_accessed,
        hot.expires,
        text_data,
        text_ends,
        topics.values,
        topics.codes,
        locations.values,
        locations.codes,
        layers.values,
        layers.codes,
        types.values,
        types.codes,
        hot.cognition_links,
        hot.evidence,
        hot.tags,
        hot.metadata,
    )


def _made(fields: dict) -> MemoryHit:
    """A hit with exactly these (already valid) fields as its state (`records.trusted`, with
    the field set every hit shares)."""
    return trusted(MemoryHit, fields, _ALL_SET)


def _gather(column, at: np.ndarray) -> list:
    """The values of a typed `array` column at rows `at`, as Python numbers."""
    return np.frombuffer(column, column.typecode)[at].tolist()


def _decode(column: CodeColumn, at: np.ndarray) -> list[str | None]:
    """The values of a coded column at rows `at`."""
    values = column.values
    return [values[c] for c in _gather(column.codes, at)]
