"""Tier migration at tick end: hot (RAM) → warm (vector store) → cold (Parquet), journaled."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from societas.memory.policies.runner import consolidation_pass, forgetting_pass
from societas.memory.policies.state import run_policies  # habits, contradictions, importance
from societas.memory.store.fsutil import write_bytes_atomic
from societas.memory.store.heap import release_free_memory

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory
    from societas.memory.vectorstores.base import ScoredPoint

TIERS = ("hot", "warm", "cold")
TRIM_AFTER_EVICTIONS = 1024  # hot rows evicted between two returns of free heap to the OS


class TierConfig(BaseModel):
    """Knobs of the hot → warm → cold tiers (simulated time)."""

    model_config = ConfigDict(extra="forbid")

    hot_window_hours: float = Field(24.0, gt=0, description="H: hot keeps memories this recent.")
    hot_cap_per_agent: int = Field(200, ge=1, description="C: at most this many hot per agent.")
    warm_max_age_days: float | None = Field(
        14.0, gt=0, description="Older memories move to cold Parquet; None keeps them warm."
    )
    warm_cap_per_agent: int | None = Field(
        5000, ge=1, description="Beyond this many, an agent's oldest memories move to cold."
    )
    cold_day_window: int = Field(7, ge=1, description="Days per cold partition.")
    search_cold: bool = Field(
        True, description="Searches naming no tiers rank cold memories too (read if they can win)."
    )
    migrate_batch: int = Field(
        5_000, ge=1, le=1_000_000, description="Memories moved to cold per Parquet part."
    )
    cold_max_parts_per_window: int = Field(
        2, ge=1, description="More parts than this in a day window are merged into one."
    )
    migrate_every_ticks: int = Field(
        48, ge=1, description="Ticks between warm → cold moves (hot eviction runs every tick)."
    )
    ram_index: bool = Field(
        True, description="Sparse embeddings: search hot and warm from RAM; engine writes in bulk."
    )
    warm_in_ram: bool | None = Field(
        None,
        description="With the RAM index: memories leaving hot stay as RAM columns, written to "
        "the engine in bulk when a search needs it. None: on for `edge`, off for a server.",
    )
    optimize_after_migration: bool = Field(
        True, description="Compact the vector store after a move (deleted points free RAM, IDF)."
    )
    seal_after_points: int | None = Field(
        10_000, ge=1, description="Compact an in-child Edge shard after this many new points."
    )


class MigrationJournal:
    """The one in-flight warm → cold move of a group, persisted next to the cold parts."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / "_pending_migration.json"

    def record(self, parts: list[Path], ids: list[int]) -> None:
        payload = {"parts": [str(p) for p in parts], "ids": ids}
        write_bytes_atomic(self.path, json.dumps(payload).encode())

    def pending(self) -> dict | None:
        return json.loads(self.path.read_text()) if self.path.exists() else None

    @staticmethod
    def parts_written(pending: dict) -> bool:
        """Whether every Parquet part of a pending move reached the disk."""
        return all(Path(p).exists() for p in pending["parts"])

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


async def recover(group: GroupMemory) -> int:
    """Finish a move a crash interrupted: its parts are written, so drop the ids from warm."""
    pending = await asyncio.to_thread(_pending_after_compaction, group)
    if pending is None:
        return 0
    if await asyncio.to_thread(group.journal.parts_written, pending):
        ids = pending["ids"]
        still_warm = set(await group.store.retrieve(ids))
        await group.store.delete(ids)
        group.hot.evict(ids)
        rows = await asyncio.to_thread(group.cold.scan, None, still_warm)
        uncount_warm(group, rows["agent_id"].to_pylist())
    await asyncio.to_thread(group.journal.clear)
    return len(pending["ids"])


def _pending_after_compaction(group: GroupMemory) -> dict | None:
    """Finish an interrupted cold compaction, then read the pending move (disk: a thread)."""
    group.cold.recover_compaction()
    return group.journal.pending()


async def migrate(group: GroupMemory, points: list[ScoredPoint]) -> int:
    """Move points from warm to cold: Parquet first, then the journal, then the delete."""
    if not points:
        return 0
    group.access.patch(((p.id, p.payload) for p in points if p.payload), group.hot)
    parts = await asyncio.to_thread(group.cold.write, points)  # disk I/O off the event loop
    ids = [p.id for p in points]
    await asyncio.to_thread(group.journal.record, parts, ids)
    await group.store.delete(ids)
    group.hot.evict(ids)
    uncount_warm(group, [p.payload["agent_id"] for p in points if p.payload])
    if group.access_log is not None:
        moved = [(p.payload["agent_id"], p.id) for p in points if p.payload]
        group.access_log.log(group.clock.abs_seconds, "move_cold", moved, "tier migration")
    await asyncio.to_thread(group.journal.clear)
    group.counters["migrated_to_cold"] += len(ids)
    return len(ids)


def uncount_warm(group: GroupMemory, agent_ids: list[int]) -> None:
    """Memories of these agents left warm (one entry per memory)."""
    for agent_id in agent_ids:
        group.warm_counts[agent_id] = group.warm_counts.get(agent_id, 1) - 1


async def _move_to_cold(group: GroupMemory, now: float) -> int:
    """Move every memory past the warm age, then each agent's surplus over the warm cap."""
    cfg = group.config.tiers
    moved = 0
    if cfg.warm_max_age_days is not None:
        cutoff = now - cfg.warm_max_age_days * 86_400.0
        moved += await _move_pending_to_cold(group, cutoff)
        while batch := await group.store.scroll_oldest(None, cutoff, cfg.migrate_batch):
            moved += await migrate(group, batch)
    if cfg.warm_cap_per_agent is not None:
        cap = cfg.warm_cap_per_agent
        for agent_id in sorted(a for a, n in group.warm_counts.items() if n > cap):
            surplus = group.warm_counts[agent_id] - cap
            moved += await migrate(group, await group.store.scroll_oldest(agent_id, None, surplus))
    return moved


async def _move_pending_to_cold(group: GroupMemory, cutoff: float) -> int:
    """Memories past the warm age never written to the engine go straight to cold, oldest first."""
    deferred = group.deferred
    if deferred is None or not deferred.pending:
        return 0
    old = deferred.older_than(cutoff)  # ids, oldest first, as one int64 array
    batch, moved = group.config.tiers.migrate_batch, 0
    for start in range(0, len(old), batch):
        moved += await migrate(group, deferred.pending_points(old[start : start + batch].tolist()))
    return moved


async def remove_expired(group: GroupMemory, now: float) -> int:
    """Delete hot and warm memories whose expires_at has passed."""
    expired = sorted(i for i, at in group.expiring.items() if at <= now)
    if not expired:
        return 0
    payloads = await group.store.retrieve(expired)
    await group.store.delete(expired)
    group.hot.evict(expired)
    group.access.forget(expired)
    group.associations.drop(expired)
    if group.access_log is not None:
        agents = [(payloads[i]["agent_id"], i) for i in expired if i in payloads]
        group.access_log.log(now, "expire", agents, "expires_at passed")
    uncount_warm(group, [payloads[i]["agent_id"] for i in expired if i in payloads])
    for memory_id in expired:
        del group.expiring[memory_id]
    gone = sum(1 for i in expired if i in payloads)  # the rest had moved to cold already
    group.counters["expired"] += gone
    return gone


def _seal_due(store: Any, cfg: TierConfig) -> bool:
    """Whether an Edge shard compacted in a child holds enough points written since then."""
    if not getattr(store, "compact_in_child", False) or cfg.seal_after_points is None:
        return False
    return bool(getattr(store, "unsealed_points", 0) >= cfg.seal_after_points)


async def end_tick(group: GroupMemory) -> dict[str, int]:
    """Tier migration for one tick: finish a half-done move, evict hot, move warm to cold."""
    if group.recovery_due:
        await recover(group)
        group.recovery_due = False
    try:
        return await _tick(group)
    except BaseException:
        group.recovery_due = True  # a move or merge may have stopped half-way
        raise


async def _tick(group: GroupMemory) -> dict[str, int]:
    cfg = group.config.tiers
    now = group.clock.abs_seconds
    before = now - cfg.hot_window_hours * 3600.0
    leaving = group.hot.leaving(before, cfg.hot_cap_per_agent)
    if group.deferred is not None:
        ids = [i for ids in leaving.values() for i in ids]
        if group.warm_in_ram:  # the columns move to warm_rows, still pending (no engine write)
            ids = group.deferred.pending.among(ids)
            group.warm_rows.adopt(group.hot, ids)
            group.access.forget(ids)  # their reads so far are in the columns moved
        else:  # what leaves hot reaches the engine first, in one batch
            await group.deferred.persist(ids)
    evicted = group.hot.evict_leaving(leaving)
    moved = 0
    group.ticks_since_migration += 1
    if group.ticks_since_migration >= cfg.migrate_every_ticks:
        group.ticks_since_migration = 0
        await remove_expired(group, now)
        await group.boosts.flush()  # FinMem access boosts: one pass, not per hit
        moved = await _move_to_cold(group, now)
        if moved:  # a day of warm_rows left for cold: drop their rows now, not at half dead
            group.warm_rows.compact()
        if group.access_log is not None:
            await asyncio.to_thread(group.access_log.flush)
        if moved:
            await asyncio.to_thread(group.cold.compact_crowded, cfg.cold_max_parts_per_window, now)
        if cfg.optimize_after_migration and (moved or _seal_due(group.store, cfg)):
            await group.store.optimize()
        if cfg.optimize_after_migration and _seal_due(group.kv_store, cfg):  # rewritten status
            await group.kv_store.optimize()
        await group.flush()  # persist and release the engine's write buffers
    if moved:  # the Parquet parts' Arrow buffers: Arrow's pool keeps freed ones otherwise
        pa.default_memory_pool().release_unused()
    group.evicted_since_trim += len(evicted)
    if moved or group.evicted_since_trim >= TRIM_AFTER_EVICTIONS:
        group.evicted_since_trim = 0
        release_free_memory()  # what left RAM goes back to the OS, not to glibc's free lists
    report = {"evicted_from_hot": len(evicted), "moved_to_cold": moved}
    report.update(await _run_policies(group))
    return report


async def _run_policies(group: GroupMemory) -> dict[str, int]:
    """Forgetting and consolidation on their own cadence (both off by default)."""
    policies = group.config.policies
    group.ticks_since_policies += 1
    out: dict[str, int] = {}
    if policies.consolidation.enabled and (
        group.ticks_since_policies % policies.consolidation.run_every_ticks == 0
    ):
        out["consolidated_groups"] = await consolidation_pass(group)
    if group.profiles.due_forgetting(group.ticks_since_policies):  # per-agent profiles
        await group.access.flush(group.store, group.hot, unsent=group.unsent)  # the pass reads them
        await group.boosts.flush()
        out.update(await forgetting_pass(group))
    out.update(await run_policies(group, group.ticks_since_policies))
    return out
