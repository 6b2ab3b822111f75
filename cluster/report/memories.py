"""An agent's memories and final status from a run's last complete checkpoint (read-only).

The memory stream lives in the vector store while a run goes on; what survives a run in a
readable form is its checkpoints: each group's hot rows, warm rows and cold parts as Parquet
(memory/checkpoint.py) plus the KV status. Reading those files with DuckDB never opens or
changes the run's stores, so a report or an inspection can run beside anything else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from societas.cluster.checkpoint import last_complete, tick_dir

REFLECTION_TOPICS = ("reflection", "insight")


def memory_files(run_dir: Path) -> tuple[int | None, list[Path], list[Path]]:
    """(checkpoint tick, memory row files, kv files) of the last complete checkpoint."""
    tick = last_complete(run_dir)
    if tick is None:
        return None, [], []
    root = tick_dir(run_dir, tick)
    rows = sorted(root.glob("group-*/*-memory/hot.parquet"))
    rows += sorted(root.glob("group-*/*-memory/warm.rows.parquet"))
    rows += sorted(root.glob("group-*/*-memory/cold/**/part-*.rows.parquet"))
    kv = sorted(root.glob("group-*/*-memory/kv.parquet"))
    return tick, rows, kv


def _rows_sql(files: list[Path]) -> str:
    """One row per memory id (a memory in both the hot and the warm tier counts once)."""
    listed = ", ".join(f"'{f}'" for f in files)
    return (
        f"(SELECT *, regexp_extract(filename, '(hot|warm|cold)') AS tier FROM "
        f"read_parquet([{listed}], union_by_name = true, filename = true) "
        f"QUALIFY row_number() OVER (PARTITION BY id ORDER BY filename) = 1)"
    )


def time_label(day: Any, seconds: Any) -> str:
    """`day 0 22:30` from a memory's day and seconds of the day."""
    s = int(float(seconds or 0)) % 86_400  # some writers store seconds since day 0
    return f"day {int(day or 0)} {s // 3600:02d}:{(s % 3600) // 60:02d}"


def agent_memories(run_dir: Path, agent_id: int, limit: int = 200) -> list[dict[str, Any]]:
    """The agent's memories (newest first, up to `limit`), each with importance and tier."""
    _, files, _ = memory_files(run_dir)
    if not files:
        return []
    con = duckdb.connect()
    cur = con.execute(
        f"SELECT id, topic, day, time, importance, text, evidence, tier "
        f"FROM {_rows_sql(files)} "
        f"WHERE agent_id = ? ORDER BY t DESC, id DESC LIMIT ?",
        [agent_id, limit],
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def memories_by_id(run_dir: Path, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Memories by id (to resolve a reflection's evidence)."""
    _, files, _ = memory_files(run_dir)
    if not files or not ids:
        return {}
    con = duckdb.connect()
    cur = con.execute(
        f"SELECT id, topic, day, time, importance, text FROM {_rows_sql(files)} "
        f"WHERE list_contains(?, id)",
        [list(ids)],
    )
    names = [d[0] for d in cur.description]
    return {int(r[0]): dict(zip(names, r, strict=True)) for r in cur.fetchall()}


def sample_memories(run_dir: Path, topics: tuple[str, ...], limit: int) -> list[dict[str, Any]]:
    """Up to `limit` memories of the given topics across agents, most important first."""
    _, files, _ = memory_files(run_dir)
    if not files:
        return []
    con = duckdb.connect()
    cur = con.execute(
        f"SELECT agent_id, id, topic, day, time, importance, text, evidence "
        f"FROM {_rows_sql(files)} WHERE list_contains(?, topic) "
        f"ORDER BY importance DESC, agent_id, id LIMIT ?",
        [list(topics), limit],
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def agent_status(run_dir: Path, agent_id: int) -> dict[str, Any]:
    """The agent's KV status at the last checkpoint ({} without a checkpoint)."""
    _, _, files = memory_files(run_dir)
    out: dict[str, Any] = {}
    for f in files:
        rows = duckdb.execute(
            f"SELECT key, value FROM read_parquet('{f}') WHERE agent_id = ? ORDER BY key",
            [agent_id],
        ).fetchall()
        for key, value in rows:
            try:
                out[key] = json.loads(value)
            except (TypeError, ValueError):
                out[key] = value
    return out


def memory_topics(run_dir: Path) -> dict[str, int]:
    """Count of memories per topic in the last checkpoint."""
    _, files, _ = memory_files(run_dir)
    if not files:
        return {}
    rows = duckdb.execute(
        f"SELECT topic, count(*) FROM {_rows_sql(files)} GROUP BY topic ORDER BY topic"
    ).fetchall()
    return {str(t): int(n) for t, n in rows}
