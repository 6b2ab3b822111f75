"""Engine points of hot memories written late, built for a whole batch in one pass."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.model.records_meta import DEFAULT_TYPE

if TYPE_CHECKING:
    from societas.memory.retrieval.sparse_index import SparseIndex
    from societas.memory.store.hot_store import HotStore


def hot_payloads(
    hot: HotStore,
    warm: HotStore,
    ids: Sequence[int],
    patches: Mapping[int, dict[str, Any]],
    layered: bool,
) -> list[dict[str, Any]]:
    """Each pending memory's engine payload (its `HotStore.row` minus id and defaults) + patch."""
    if not len(warm):
        return _row_payloads(hot, ids, patches, layered)
    in_hot = hot.row_of
    hot_ids = [i for i in ids if i in in_hot]
    warm_ids = [i for i in ids if i not in in_hot]
    by_id = dict(zip(hot_ids, _row_payloads(hot, hot_ids, patches, layered), strict=True))
    by_id.update(zip(warm_ids, _row_payloads(warm, warm_ids, patches, layered), strict=True))
    return [by_id[i] for i in ids]


def _row_payloads(
    hot: HotStore, ids: Sequence[int], patches: Mapping[int, dict[str, Any]], layered: bool
) -> list[dict[str, Any]]:
    """`hot_payloads` of memories that all have a row in `hot`."""
    row_of, agent_ids, topics, ts, times = hot.row_of, hot.agent_ids, hot.topics, hot.ts, hot.times
    importances, texts, locations = hot.importances, hot.texts, hot.locations
    links, evidence = hot.cognition_links, hot.evidence
    layers, layer_since = hot.layers, hot.layer_since
    types, tags, metadata, expires = hot.types, hot.tags, hot.metadata, hot.expires
    counts, last_read = hot.access_counts, hot.last_accessed
    isinf, isnan = math.isinf, math.isnan
    out = []
    for memory_id in ids:
        r = row_of[memory_id]
        payload: dict[str, Any] = {
            "agent_id": agent_ids[r],
            "topic": topics[r],
            "t": ts[r],
            "time": times[r],
            "importance": importances[r],
            "text": texts[r],
        }
        if locations[r]:
            payload["location"] = locations[r]
        if links.get(memory_id):
            payload["links"] = links[memory_id]
        if evidence.get(memory_id):
            payload["evidence"] = evidence[memory_id]
        if layered:
            payload["layer"], payload["layer_since"] = layers[r], layer_since[r]
        if types[r] != DEFAULT_TYPE:
            payload["type"] = types[r]
        if tags.get(memory_id):
            payload["tags"] = list(tags[memory_id])
        if metadata.get(memory_id):
            payload["metadata"] = json.dumps(metadata[memory_id], sort_keys=True)
        if not isinf(expires[r]):
            payload["expires_at"] = float(expires[r])
        if counts[r]:
            payload["access_count"] = counts[r]
        if not isnan(last_read[r]):
            payload["last_accessed"] = last_read[r]
        if memory_id in patches:
            payload.update(patches[memory_id])
        out.append(payload)
    return out


def index_vectors(
    index: SparseIndex, ids: Sequence[int], agent_of: Mapping[int, int]
) -> list[TextVectors]:
    """The indexed sparse vector of each memory in `ids` (as `SparseIndex.vector` gives it)."""
    by_agent: dict[int, list[int]] = {}
    for position, memory_id in enumerate(ids):
        by_agent.setdefault(agent_of[memory_id], []).append(position)
    out: list[TextVectors] = [TextVectors(sparse=None)] * len(ids)
    for agent_id, positions in by_agent.items():
        p = index.agents.get(agent_id)
        if p is None:
            continue
        wanted = np.fromiter((ids[i] for i in positions), np.int64, len(positions))
        rows = np.searchsorted(np.frombuffer(p.ids, np.int64), wanted).tolist()
        ends, terms, weights, row_ids = p.ends, p.terms, p.weights, p.ids
        for position, row in zip(positions, rows, strict=True):
            if row >= len(row_ids) or row_ids[row] != ids[position]:
                out[position] = TextVectors(sparse=None)  # not indexed: as SparseIndex.vector
                continue
            start = ends[row - 1] if row else 0
            end = ends[row]
            out[position] = TextVectors(sparse=SparseVector(terms[start:end], weights[start:end]))
    return out
