"""Runs the memory policies of `memory.policies` over a group at tick end (on their cadence)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from societas.memory.associations import Association
from societas.memory.policies import next_layer
from societas.memory.records import AddRequest
from societas.memory.scoring import text_cosine

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory

PAGE = 5_000


async def forgetting_pass(group: GroupMemory) -> dict[str, int]:
    """Clean up, promote and demote warm memories by their layer's rules (each memory by
    its agent's forgetting policy: profiles are per agent type)."""
    from societas.memory import tiering

    policy_of = group.profiles.forgetting
    now = group.clock.abs_seconds
    cleanup, changes, dropped = [], [], set()
    offset = None
    while True:
        page, offset = await group.store.scroll(offset, PAGE, with_vectors=False)
        for p in page:
            pl = p.payload or {}
            policy = policy_of(pl["agent_id"])
            if not policy.enabled:
                continue
            layer = pl.get("layer", "short")
            since = pl.get("layer_since", pl["time"])
            last = max(since, pl.get("last_accessed") or since)
            count = int(pl.get("access_count") or 0)
            action, eff = policy.decide(pl["importance"], layer, since, last, now, count)
            if action == "cleanup":
                cleanup.append(p.id)
                if policy.forget:
                    dropped.add(p.id)
            elif action in ("promote", "demote"):
                changes.append((p.id, next_layer(layer, action), eff, action))
        if offset is None:
            break
    for memory_id, layer, importance, action in changes:
        await group.store.set_payload(
            [memory_id], {"layer": layer, "importance": importance, "layer_since": now}
        )
        group.hot.set_layer(memory_id, layer, importance, now)
        group.counters["promoted" if action == "promote" else "demoted"] += 1
    if cleanup:
        drop = [i for i in cleanup if i in dropped]
        if drop:  # `forget`: dropped (counted), not moved to cold
            agents = [pl["agent_id"] for pl in (await group.store.retrieve(drop)).values()]
            await group.store.delete(drop)
            group.hot.evict(drop)
            group.associations.drop(drop)
            tiering.uncount_warm(group, agents)
            group.counters["forgotten"] += len(drop)
        keep = [i for i in cleanup if i not in dropped]
        for start in range(0, len(keep), PAGE):
            await tiering.migrate(group, await group.store.fetch(keep[start : start + PAGE]))
        group.counters["cleaned_up"] += len(cleanup)
    promoted = sum(1 for c in changes if c[3] == "promote")
    return {"cleaned_up": len(cleanup), "promoted": promoted, "demoted": len(changes) - promoted}


async def consolidation_pass(group: GroupMemory) -> int:
    """Merge each agent's near-duplicate hot memories (same topic) into a summary memory.

    The summary is linked to its sources (`evidence_ids`; each source's `cognition_ids` gains
    the summary), keeps the highest importance, and the sources move to cold.
    """
    from societas.memory import tiering

    policy = group.config.policies.consolidation
    hot = group.hot
    clusters: list[tuple[int, str, list[int]]] = []
    for agent_id in sorted(hot.rows_of_agent):
        ids = [
            hot.ids[row]
            for row in hot.rows_of_agent[agent_id]
            if hot.ids[row] not in hot.evidence  # summaries, reflections: derived, kept
        ]
        if len(ids) < policy.min_group:
            continue
        texts = [hot.texts[hot.row_of[i]] for i in ids]
        vectors = await group.embedder.embed_documents(texts)  # cached: no new embedding
        taken: set[int] = set()
        for i, seed in enumerate(ids):
            if seed in taken:
                continue
            topic = hot.topics[hot.row_of[seed]]
            members = [seed] + [
                other
                for j, other in enumerate(ids[i + 1 :], start=i + 1)
                if other not in taken
                and hot.topics[hot.row_of[other]] == topic
                and text_cosine(vectors[i], vectors[j]) >= policy.similarity
            ]
            if len(members) >= policy.min_group:
                taken.update(members)
                clusters.append((agent_id, topic, members))
    for agent_id, topic, members in clusters:
        texts = [hot.texts[hot.row_of[m]] for m in members]
        summary = group.summarizer(texts)
        if inspect.isawaitable(summary):
            summary = await summary
        importance = max(hot.importances[hot.row_of[m]] for m in members)
        (summary_id,) = await group.add_many(
            [
                AddRequest(
                    agent_id=agent_id,
                    topic=topic,
                    description=summary,
                    importance=importance,
                    location=hot.locations[hot.row_of[members[0]]],
                )
            ]
        )
        await group.link_cognition(agent_id, members, summary_id)
        group.associations.add_many(  # the summary and its sources are similar memories
            Association(source=summary_id, target=m, type="similar") for m in members
        )
        await tiering.migrate(group, await group.store.fetch(members))
        group.counters["consolidated"] += len(members)
    return len(clusters)
