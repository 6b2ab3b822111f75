"""The `memory_policies` results table: what each memory mechanism did in a tick, per group.

One row per tick per group: `tick`, `group_id`, then one count per mechanism (`COLUMNS`).
Most counts are deltas of the memory's running totals (`totals`, read through the engine's
`Deltas`, so each event is counted once however many ticks it spans); pattern consolidations
and habits have no running total and come from the tick-end report of `GroupMemory.end_tick`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from societas.agents.runtime.stats import Deltas
    from societas.memory import GroupMemory

# Column -> what one unit is (the report's and SCHEMAS.md's column descriptions).
COLUMNS: dict[str, str] = {
    "consolidations": "Pattern memories written by consolidation (clusters of similar memories).",
    "importance_recomputations": "Memories whose importance the recomputation pass re-derived.",
    "feedback": "Feedback given to memories (evidence of a reflection), one per memory.",
    "contradictions": "Contradictory memory pairs found and linked.",
    "habits": "Habit (procedural) memories written or re-strengthened.",
    "temporal_links": "Temporal associations linking the memories of one episode in order.",
    "promotions": "Memories promoted one FinMem layer up.",
    "demotions": "Memories demoted one FinMem layer down.",
    "deletions": "Memories cleaned up and dropped (forgetting with `forget`).",
    "moves_to_cold": "Memories moved to the cold tier (age, caps, clean-up, consolidation).",
    "access_boosts": "FinMem retrieval hits, each boosting its memory's importance.",
    "observations": "Cognitive L2 attention: observations stored from raw events.",
    "cognitive_consolidations": "Cognitive L3 consolidation passes (observations into facts).",
    "facts": "Cognitive facts learnt (fact-graph edges and semantic memories).",
    "meta_cognition": "Cognitive L4 meta-cognition passes (reflections retuning L2 and L3).",
    "sessions": "Session memories written (a conversation's context, with a TTL).",
    "tasks": "Task memories written (the activity in progress, with a TTL).",
    "expirations": "Memories deleted when their TTL (expires_at) passed.",
    "preference_updates": "Points added to preference timelines (attitude re-evaluations).",
}
PREFIX = "policy."  # of the engine's Deltas keys
# Running totals: column -> (source, key) in `totals`' sources.
_GROUP = {
    "promotions": "promoted",
    "demotions": "demoted",
    "deletions": "forgotten",
    "moves_to_cold": "migrated_to_cold",
    "access_boosts": "accesses",
    "expirations": "expired",
}
_POLICY = {
    "importance_recomputations": "importance_recomputed",
    "feedback": "feedback",
    "contradictions": "contradictions",
    "sessions": "written_session",
    "tasks": "written_task",
    "preference_updates": "written_preference",
}
_COGNITION = {
    "observations": "observations",
    "cognitive_consolidations": "consolidations",
    "facts": "facts",
    "meta_cognition": "meta",
}


def totals(memory: GroupMemory) -> dict[str, int]:
    """The running totals behind the delta columns, by column name."""
    out = {col: int(memory.counters[key]) for col, key in _GROUP.items()}
    policy = memory.policy_state.counters
    out.update({col: int(policy.get(key, 0)) for col, key in _POLICY.items()})
    out["temporal_links"] = int(memory.policy_state.episodes.linked)
    cognition = memory.cognition.counters if memory.cognition is not None else {}
    out.update({col: int(cognition.get(key, 0)) for col, key in _COGNITION.items()})
    return out


def row(
    tick: int, group_id: int, deltas: Deltas, memory: GroupMemory, reports: Iterable[Mapping]
) -> tuple[int, ...]:
    """This tick's row: deltas of `totals` plus what the tick-end `reports` counted."""
    counts = {col: deltas(PREFIX + col, total) for col, total in totals(memory).items()}
    counts["consolidations"] = counts["habits"] = 0
    for report in reports:
        counts["consolidations"] += int(report.get("consolidated_groups", 0))
        counts["habits"] += int(report.get("habits_new", 0))
        counts["habits"] += int(report.get("habits_strengthened", 0))
    return (tick, group_id, *(counts[col] for col in COLUMNS))
