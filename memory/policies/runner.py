"""Runs the memory policies (`memory.policies`) over a group at tick end, on their cadence."""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any

from societas.memory.architectures.finmem import IMPORTANCE_DECIMALS
from societas.memory.model.associations import Association
from societas.memory.model.records import AddRequest
from societas.memory.policies.forgetting import next_layer
from societas.memory.retrieval.scoring import TextCosines
from societas.memory.vectorstores.base import PAGE, stored_payloads

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory


async def forgetting_pass(group: GroupMemory) -> dict[str, int]:
    """Clean up, promote and demote warm memories by their agent's forgetting policy."""
    from societas.memory.tiers import tiering

    policy_of = group.profiles.forgetting
    now = group.clock.abs_seconds
    cleanup, changes, dropped = [], [], set()
    async for memory_id, pl in stored_payloads(group.store, PAGE):
        policy = policy_of(pl["agent_id"])
        if not policy.enabled:
            continue
        layer = pl.get("layer", "short")
        since = pl.get("layer_since", pl["time"])
        last = max(since, pl.get("last_accessed") or since)
        count = int(pl.get("access_count") or 0)
        action, eff = policy.decide(pl["importance"], layer, since, last, now, count)
        if action == "cleanup":
            cleanup.append(memory_id)
            if policy.forget:
                dropped.add(memory_id)
        elif action in ("promote", "demote"):
            changes.append((memory_id, next_layer(layer, action), eff, action))
    moves: dict[tuple[str, float], list[int]] = {}  # one write per (layer, importance)
    for memory_id, layer, importance, action in changes:
        stored = round(importance, IMPORTANCE_DECIMALS)
        moves.setdefault((layer, stored), []).append(memory_id)
        group.hot.set_layer(memory_id, layer, stored, now)
        group.counters["promoted" if action == "promote" else "demoted"] += 1
    await group.store.set_payloads(
        [
            (ids, {"layer": layer, "importance": importance, "layer_since": now})
            for (layer, importance), ids in sorted(moves.items())
        ]
    )
    if cleanup:
        drop = [i for i in cleanup if i in dropped]
        if drop:  # `forget`: dropped (counted), not moved to cold
            agents = [pl["agent_id"] for pl in (await group.store.retrieve(drop)).values()]
            await group.store.delete(drop)
            group.hot.evict(drop)
            group.associations.drop(drop)
            tiering.uncount_warm(group, agents)
            group.counters["forgotten"] += len(drop)
        await _migrate_ids(group, [i for i in cleanup if i not in dropped])
        group.counters["cleaned_up"] += len(cleanup)
    promoted = sum(1 for c in changes if c[3] == "promote")
    return {"cleaned_up": len(cleanup), "promoted": promoted, "demoted": len(changes) - promoted}


CONSOLIDATED, PATTERN = "consolidated", "pattern"
_FIELDS = ("id", "text", "topic", "importance", "location", "tags")  # of a candidate


def _marked(tags: tuple[str, ...]) -> bool:
    """Whether a memory is a pattern or was consolidated already (never taken again)."""
    return CONSOLIDATED in tags or PATTERN in tags


def _hot_candidates(group: GroupMemory, since: float) -> dict[int, list[dict[str, Any]]]:
    """Each agent's hot memories that may be consolidated (recent, original, unmarked)."""
    hot = group.hot
    out: dict[int, list[dict[str, Any]]] = {}
    for agent_id in sorted(hot.rows_of_agent):
        for row in hot.rows_of_agent[agent_id]:
            memory_id = hot.ids[row]
            tags = hot.tags.get(memory_id, ())
            derived = memory_id in hot.evidence  # summaries, reflections: derived, kept
            short = memory_id in group.expiring  # short-term (a TTL): never consolidated
            if hot.times[row] < since or derived or short or _marked(tags):
                continue
            fields = (hot.texts[row], hot.topics[row], hot.importances[row], hot.locations[row])
            out.setdefault(agent_id, []).append(
                dict(zip(_FIELDS, (memory_id, *fields, tags), strict=True))
            )
    return out


async def _warm_candidates(
    group: GroupMemory, since: float, into: dict[int, list[dict[str, Any]]]
) -> None:
    """Add the warm-only memories of the window (when it reaches past the hot tier)."""
    async for memory_id, pl in stored_payloads(group.store, PAGE):
        tags = tuple(pl.get("tags") or ())
        if memory_id in group.hot or pl["time"] < since or pl.get("evidence") or _marked(tags):
            continue
        if pl.get("expires_at") is None:
            fields = (pl["text"], pl["topic"], pl["importance"], pl.get("location"))
            into.setdefault(pl["agent_id"], []).append(
                dict(zip(_FIELDS, (memory_id, *fields, tags), strict=True))
            )
    for memories in into.values():
        memories.sort(key=lambda m: m["id"])


async def consolidation_pass(group: GroupMemory) -> int:
    """Cluster each agent's similar recent memories into linked pattern memories (count)."""
    policy = group.config.policies.consolidation
    now = group.clock.abs_seconds
    since = -math.inf if policy.window_days is None else now - policy.window_days * 86_400.0
    candidates = _hot_candidates(group, since)
    hot_reach = now - group.config.tiers.hot_window_hours * 3600.0
    if since < hot_reach:
        await _warm_candidates(group, since, candidates)
    clusters: list[tuple[int, list[dict[str, Any]]]] = []
    for agent_id in sorted(candidates):
        memories = candidates[agent_id]
        if len(memories) < policy.min_group:
            continue
        vectors = await group.embedder.embed_documents([m["text"] for m in memories])  # cached
        taken: set[int] = set()
        cosines = TextCosines(vectors)
        for i, seed in enumerate(memories):
            if i in taken:
                continue
            scores = cosines.of(vectors[i])
            similar = [i] + [
                j
                for j in range(i + 1, len(memories))
                if j not in taken
                and (not policy.same_topic or memories[j]["topic"] == seed["topic"])
                and scores[j] >= policy.similarity
            ]
            if len(similar) >= policy.min_group:
                taken.update(similar)
                clusters.append((agent_id, [memories[j] for j in similar]))
    if not clusters:
        return 0
    summaries = []
    for _, members in clusters:
        summary = group.summarizer([m["text"] for m in members])
        summaries.append(await summary if inspect.isawaitable(summary) else summary)
    pattern_ids = await group.add_many(
        [
            AddRequest(
                agent_id=agent_id,
                topic=members[0]["topic"],
                description=summary,
                importance=max(m["importance"] for m in members),
                location=members[0]["location"],
                type="semantic",
                tags=(PATTERN,),
                metadata={"sources": len(members)},
            )
            for (agent_id, members), summary in zip(clusters, summaries, strict=True)
        ]
    )
    sources = [[m["id"] for m in members] for _, members in clusters]
    links = [(a, ids, p) for (a, _), ids, p in zip(clusters, sources, pattern_ids, strict=True)]
    await group.link_cognitions(links)
    marks: dict[tuple[str, ...], list[int]] = {}
    for (_, members), ids, pattern_id in zip(clusters, sources, pattern_ids, strict=True):
        group.associations.add_many(  # the pattern and its sources are similar memories
            Association(source=pattern_id, target=m, type="similar") for m in ids
        )
        for m in members:
            tags = (*m["tags"], CONSOLIDATED)
            marks.setdefault(tags, []).append(m["id"])
            if m["id"] in group.hot:
                group.hot.tags[m["id"]] = tags
        group.counters["consolidated"] += len(members)
    await group.store.set_payloads(
        [(ids, {"tags": list(tags)}) for tags, ids in sorted(marks.items())]
    )
    if policy.sources == "cold":
        await _migrate_ids(group, sorted(i for ids in marks.values() for i in ids))
    return len(clusters)


async def _migrate_ids(group: GroupMemory, ids: list[int]) -> None:
    """Move these warm memories to cold, PAGE at a time."""
    from societas.memory.tiers import tiering

    for start in range(0, len(ids), PAGE):
        await tiering.migrate(group, await group.store.fetch(ids[start : start + PAGE]))
