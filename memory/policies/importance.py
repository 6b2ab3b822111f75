"""Importance recomputation (from the base importance kept in metadata) and feedback."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from societas.memory.model.content import richness
from societas.memory.model.records_meta import meta_of
from societas.memory.policies.configs import ImportanceRecompute
from societas.memory.vectorstores.base import stored_payloads

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory

BASE_KEY = "importance_base"
FEEDBACK_KEY = "feedback"


def recomputed(
    policy: ImportanceRecompute,
    base: float,
    age_seconds: float,
    access_count: int,
    since_access: float | None,
    feedback: float,
    association: float,
    content: float = 0.0,
) -> float:
    """The new importance of one memory, clamped to [0, 1] and quantised (`ImportanceRecompute`)."""
    day = 86_400.0
    recency = math.exp(-max(0.0, age_seconds) / day / policy.age_tau_days)
    links = 1.0 - math.exp(-association / policy.association_saturation)
    shared = policy.association_weight * links + policy.content_weight * content
    if policy.formula == "seed":
        value = (
            policy.base_weight * base
            + policy.age_weight * recency
            + policy.access_weight * min(access_count / policy.access_saturation, 1.0)
            + policy.feedback_weight * (1.0 + math.tanh(feedback / policy.feedback_scale)) / 2
            + shared
        )
    else:
        access = 1.0 - math.exp(-access_count / policy.access_saturation)
        if since_access is not None:
            access *= math.exp(-max(0.0, since_access) / day / policy.access_tau_days)
        value = (
            base
            + policy.age_weight * (recency - 1.0)
            + policy.access_weight * access
            + policy.feedback_weight * math.tanh(feedback / policy.feedback_scale)
            + shared
        )
    value = min(1.0, max(0.0, value))
    return round(round(value / policy.quantum) * policy.quantum, 6)


async def give_feedback(group: GroupMemory, feedback: Mapping[int, float]) -> dict[int, float]:
    """Add feedback (+ useful, - wrong) to hot or warm memories; returns each one's total."""
    for memory_id, value in feedback.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise ValueError(
                f"feedback for memory {memory_id} must be a finite number, got {value!r}"
            )
    ids = sorted(feedback)
    records = {r.id: r for r in await group.get_by_ids(ids)}  # KeyError names unknown ids
    warm = await group.store.retrieve([i for i in ids if i not in group.hot])
    cold = [i for i in ids if i not in group.hot and i not in warm]
    if cold:
        raise ValueError(
            f"memories {cold} are in the cold tier (read-only); feedback needs hot or warm"
        )
    totals: dict[int, float] = {}
    writes: dict[str, list[int]] = {}
    for memory_id in ids:
        metadata = dict(records[memory_id].metadata)
        metadata[FEEDBACK_KEY] = round(
            float(metadata.get(FEEDBACK_KEY, 0.0)) + feedback[memory_id], 6
        )
        totals[memory_id] = metadata[FEEDBACK_KEY]
        if memory_id in group.hot:
            group.hot.metadata[memory_id] = metadata
        writes.setdefault(json.dumps(metadata, sort_keys=True), []).append(memory_id)
    await group.store.set_payloads(
        [(members, {"metadata": metadata}) for metadata, members in sorted(writes.items())]
    )
    group.policy_state.counters["feedback"] += len(ids)
    return totals


def _association(group: GroupMemory, memory_id: int, links: Iterable[int]) -> float:
    weights = group.config.policies.associations.type_weights
    total = float(len(set(links))) * weights.get("causal", 1.0)  # cognition / evidence links
    for _, kind, strength in group.associations.neighbours(memory_id):
        total += weights.get(kind, 0.0) * strength
    return total


async def importance_pass(group: GroupMemory) -> dict[str, int]:
    """Recompute the importance of every hot and warm memory in one batch."""
    policy = group.config.policies.importance
    await group.access.flush(group.store, group.hot, unsent=group.unsent)  # counts into the store
    await group.boosts.flush()
    now, hot = group.clock.abs_seconds, group.hot
    items: list[tuple[int, dict[str, Any]]] = []  # id, fields
    for memory_id in list(hot.row_of):
        f = hot.fields(memory_id)
        links = [*f["cognition_ids"], *f["evidence_ids"]]
        items.append((memory_id, {**f, "links": links}))
    async for memory_id, pl in stored_payloads(group.store):
        if memory_id in hot:
            continue
        meta = meta_of(pl)
        links = [*(pl.get("links") or ()), *(pl.get("evidence") or ())]
        items.append((memory_id, {**pl, **meta, "links": links, "layer": pl.get("layer", "short")}))
    importance_writes: dict[float, list[int]] = {}
    metadata_writes: dict[str, list[int]] = {}
    for memory_id, f in items:
        metadata = dict(f["metadata"])
        base = float(metadata.get(BASE_KEY, f["importance"]))
        last = f["last_accessed"]
        new = recomputed(
            policy,
            base,
            now - f["time"],
            int(f["access_count"]),
            None if last is None else now - last,
            float(metadata.get(FEEDBACK_KEY, 0.0)),
            _association(group, memory_id, f["links"]),
            richness(f["text"], metadata.get("content"), f["type"], policy.richness_words)
            if policy.content_weight
            else 0.0,
        )
        if BASE_KEY not in metadata:
            metadata[BASE_KEY] = base
            if memory_id in hot:
                hot.metadata[memory_id] = metadata
            metadata_writes.setdefault(json.dumps(metadata, sort_keys=True), []).append(memory_id)
        if abs(new - f["importance"]) < 1e-9:
            continue
        if memory_id in hot:
            hot.importances[hot.row_of[memory_id]] = new
        importance_writes.setdefault(new, []).append(memory_id)
        agent_id = f["agent_id"]
        if new > group.max_importance.get(agent_id, -1.0):
            group.max_importance[agent_id] = new  # keeps the ranker's bound valid
    await group.store.set_payloads(
        [(members, {"metadata": meta}) for meta, members in sorted(metadata_writes.items())]
        + [(members, {"importance": value}) for value, members in sorted(importance_writes.items())]
    )
    changed = sum(len(v) for v in importance_writes.values())
    counters = group.policy_state.counters
    counters["importance_recomputed"] += len(items)
    counters["importance_writes"] += len(importance_writes) + len(metadata_writes)
    return {"importance_recomputed": len(items), "importance_changed": changed}
