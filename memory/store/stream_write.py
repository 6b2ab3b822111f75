"""Writing a batch of stream memories under ids already taken: one embedding call, one append."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from societas.memory.model.clock import SECONDS_PER_DAY
from societas.memory.model.records_meta import meta_payload
from societas.memory.policies.forgetting import initial_layer
from societas.memory.vectorstores import MemoryPoint

if TYPE_CHECKING:
    from societas.memory.embedding import TextVectors
    from societas.memory.group import GroupMemory
    from societas.memory.model.records import AddRequest


async def write_memories(
    group: GroupMemory,
    requests: Sequence[AddRequest],
    ids: Sequence[int],
    stamp: tuple[int, float] | None = None,
) -> None:
    """Embed and store `requests` as memories `ids` at clock `stamp`; the caller holds the lock."""
    if not requests:
        return
    agent_ids, topics, texts, locations, importances, layers, types, expires = _columns(
        group, requests
    )
    vectors = await group.embedder.embed_documents(texts)
    if stamp is None:
        clock = group.clock
        day, t, now = clock.day, clock.t, clock.abs_seconds
    else:
        day, t = stamp
        now = day * SECONDS_PER_DAY + t  # as SimClock.abs_seconds
    # Each memory gets a distinct time (+ id's low bits × 0.1 µs, < 0.11 s): ties in
    # recency would otherwise be broken at random by the engine, and runs must replay.
    times = [now + (point_id & 0xFFFFF) * 1e-7 for point_id in ids]
    if group.deferred is not None:  # into the RAM index; the engine gets it off hot
        assert group.sparse_index is not None
        sparse_vectors = [v.sparse for v in vectors]
        group.sparse_index.add(ids, agent_ids, times, importances, topics, sparse_vectors)
        group.deferred.defer(ids, agent_ids)
    else:  # written through: the engine has it at once
        points = _points(group, requests, ids, vectors, importances, layers, times, t)
        await group.store.upsert(points)
        group.counters["vector_upserts"] += len(points)
    hot = group.hot
    hot.append_many(
        ids, agent_ids, topics, texts, locations, importances, day, t, times, layers, types, expires
    )
    for r, point_id in zip(requests, ids, strict=True):  # kept beside the columns
        if r.tags:
            hot.tags[point_id] = r.tags
        if r.metadata:
            hot.metadata[point_id] = r.metadata
        if r.expires_at is not None:
            group.expiring[point_id] = r.expires_at
    warm_counts, max_importance = group.warm_counts, group.max_importance
    for agent_id, imp in zip(agent_ids, importances, strict=True):
        warm_counts[agent_id] = warm_counts.get(agent_id, 0) + 1
        if imp > max_importance.get(agent_id, -1.0):
            max_importance[agent_id] = imp
    if group.access_log is not None:
        for r, point_id in zip(requests, ids, strict=True):
            group.access_log.log(now, "write", [(r.agent_id, point_id)], r.topic)
    group.counters["adds"] += len(requests)
    group.counters["embedded_texts"] += len(texts)


def _columns(group: GroupMemory, requests: Sequence[AddRequest]) -> list[tuple[Any, ...]]:
    """The batch's columns: a tuple a request, transposed."""
    agents, default = group.known_agents, group.config.default_importance
    for r in requests:
        if r.agent_id not in agents:
            group.require_agent(r.agent_id)  # raises, naming it
    rows = [
        (
            r.agent_id,
            r.topic,
            r.description,
            r.location,
            default if r.importance is None else r.importance,
            initial_layer(r.topic),
            r.type,
            r.expires_at,
        )
        for r in requests
    ]
    return list(zip(*rows, strict=True))


def _points(
    group: GroupMemory,
    requests: Sequence[AddRequest],
    ids: Sequence[int],
    vectors: Sequence[TextVectors],
    importances: Sequence[float],
    layers: Sequence[str],
    times: Sequence[float],
    t: float,
) -> list[MemoryPoint]:
    """Engine points of memories written through, absent payload fields left out."""
    layered = group.profiles.any_forgetting
    points = []
    for point_id, r, vec, imp, layer, at in zip(
        ids, requests, vectors, importances, layers, times, strict=True
    ):
        payload = {
            "agent_id": r.agent_id,
            "topic": r.topic,
            "t": t,
            "time": at,
            "importance": imp,
            "text": r.description,
        }
        if r.location is not None:
            payload["location"] = r.location
        if layered:
            payload["layer"], payload["layer_since"] = layer, at
        payload.update(meta_payload(r.type, r.tags, r.metadata, r.expires_at))
        points.append(MemoryPoint(point_id, vec, payload))
    return points
