"""Per-tick results as Parquet: fixed schemas, sorted rows, no wall-clock values.

Each group buffers rows and writes one file per table every `flush_every` ticks under
`RUN_DIR/results/<table>/group-<g>/ticks-<first>-<last>.parquet` (zstd), one row group per
tick. Rows are sorted and schemas fixed, so the same seed gives byte-identical files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from societas.agents.runtime.memory_policies import COLUMNS as POLICY_COLUMNS

_I, _F, _S, _B = pa.int64(), pa.float64(), pa.string(), pa.bool_()

SCHEMAS: dict[str, pa.Schema] = {
    "agent_state": pa.schema(
        [
            ("tick", _I),
            ("agent_id", _I),
            ("place", _S),
            ("place_kind", _S),
            ("activity", _S),
            ("category", _S),
            ("current_need", _S),
            ("currency", _F),
            ("income", _F),
            ("consumption", _F),
            ("work_hours", _F),
            ("worked_today", _F),
            ("transfers", _F),
            ("evacuating", _B),
            ("emotion", _S),
        ]
    ),
    "needs": pa.schema(
        [
            ("tick", _I),
            ("agent_id", _I),
            ("hunger", _F),
            ("energy", _F),
            ("safety", _F),
            ("social", _F),
            ("current_need", _S),
        ]
    ),
    # answer_source: where a model's decision (a reaction, a re-plan) came from; "" for an
    # event that is no model answer (an intervention received, a payment).
    "events": pa.schema(
        [("tick", _I), ("agent_id", _I), ("kind", _S), ("detail", _S), ("answer_source", _S)]
    ),
    "dialogues": pa.schema(
        [
            ("tick", _I),
            ("speaker", _I),
            ("listener", _I),
            ("place", _S),
            ("channel", _S),
            ("text", _S),
            ("facts", _S),
            ("conversation_id", _S),  # "" for a one-line message to a friend
            ("turn", _I),
            ("answer_source", _S),  # first_try, repaired, re_asked, fallback, rules, replayed
        ]
    ),
    # Relationship of agent_id towards other_id after each conversation.
    "relationships": pa.schema(
        [
            ("tick", _I),
            ("agent_id", _I),
            ("other_id", _I),
            ("closeness", _F),
            ("sentiment", _F),
            ("talks", _I),
            ("conversation_id", _S),
        ]
    ),
    # Plans: level "day" (broad strokes), "replan" (rest of the day after a reaction), "action"
    # (5-15 minute steps of an hour); minute/duration are 0 for day-level items.
    "plans": pa.schema(
        [
            ("tick", _I),
            ("agent_id", _I),
            ("level", _S),
            ("hour", _I),
            ("minute", _I),
            ("duration_min", _I),
            ("activity", _S),
            ("location", _S),
            ("answer_source", _S),
        ]
    ),
    # One row per reflection insight: its memory id and the memory ids it rests on.
    "reflections": pa.schema(
        [
            ("tick", _I),
            ("agent_id", _I),
            ("memory_id", _I),
            ("text", _S),
            ("evidence_ids", _S),  # comma-separated memory ids
            ("answer_source", _S),
        ]
    ),
    # The agent's inner thought and dominant emotion each time it is updated.
    "thoughts": pa.schema(
        [
            ("tick", _I),
            ("agent_id", _I),
            ("thought", _S),
            ("emotion", _S),
            ("intensity", _F),
            ("answer_source", _S),
        ]
    ),
    # One row per memory whose importance was rated (not given or configured by topic).
    "importance": pa.schema(
        [
            ("tick", _I),
            ("agent_id", _I),
            ("memory_id", _I),
            ("topic", _S),
            ("importance", _F),
            ("answer_source", _S),
        ]
    ),
    # answer_source: of the update that set the stance in force ("" before any update).
    "attitudes": pa.schema(
        [("tick", _I), ("agent_id", _I), ("topic", _S), ("value", _F), ("answer_source", _S)]
    ),
    "knowledge": pa.schema([("tick", _I), ("agent_id", _I), ("fact", _S), ("source", _I)]),
    # Scheduled surveys (agents.experiments.survey): value = likert point, option index,
    # number, or null for open questions; fallback_reason: why the model's replies were
    # refused, for a fallback (null otherwise, and in parts written before the column).
    "surveys": pa.schema(
        [
            ("tick", _I),
            ("day", _I),
            ("time", _S),
            ("survey", _S),
            ("agent_id", _I),
            ("question_id", _S),
            ("answer_text", _S),
            ("value", _F),
            ("answer_source", _S),
            ("fallback_reason", _S),
        ]
    ),
    # The scenario's `outcomes:`, one row per agent and outcome every `outcomes.every` ticks.
    "outcomes": pa.schema([("tick", _I), ("agent_id", _I), ("variable", _S), ("value", _F)]),
    # Every scalar status attribute at the start of the baseline tick (before interventions):
    # value for numbers and booleans (null otherwise), text for the others ("" for numbers).
    "baseline": pa.schema(
        [("tick", _I), ("agent_id", _I), ("variable", _S), ("value", _F), ("text", _S)]
    ),
    # One row per agent an intervention reached, at its tick.
    "treated": pa.schema([("tick", _I), ("agent_id", _I), ("intervention", _I), ("kind", _S)]),
    "llm": pa.schema(
        [
            ("tick", _I),
            ("group_id", _I),
            ("requests", _I),
            ("prompt_tokens", _I),
            ("completion_tokens", _I),
            ("memories_added", _I),
        ]
    ),
    # One row per group per tick: what each memory mechanism did (agents.runtime.memory_policies).
    "memory_policies": pa.schema(
        [("tick", _I), ("group_id", _I), *((name, _I) for name in POLICY_COLUMNS)]
    ),
}
TABLES = tuple(SCHEMAS)


class ResultsWriter:
    """Buffers rows (tuples in schema order) per table and writes sorted Parquet files.

    A tick's rows are kept as tuples until `end_tick`, then sorted and held as Arrow columns
    (far smaller than tuples of Python objects) until the window is written: rows sort by
    tick first, so tick-sorted chunks in tick order are the window sorted as a whole.
    """

    def __init__(
        self, run_dir: Path, group_id: int, flush_every: int = 12, compression: str = "zstd"
    ) -> None:
        self.root = Path(run_dir) / "results"
        self.group_id = group_id
        self.flush_every = flush_every
        self.compression = None if compression == "none" else compression
        self.rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in TABLES}
        self.chunks: dict[str, list[tuple[int, pa.Table]]] = {t: [] for t in TABLES}
        self.first_tick: int | None = None
        self.last_tick: int | None = None  # the last tick ended since `first_tick`
        self.files_written = 0

    def add(self, table: str, row: tuple[Any, ...]) -> None:
        """Append one row; `table` must be one of TABLES."""
        self.rows[table].append(row)

    def buffered(self, table: str) -> list[tuple[Any, ...]]:
        """Every row of `table` not yet written (earlier ticks sorted, then this tick's)."""
        held = [row for _, chunk in self.chunks[table] for row in _tuples(chunk)]
        return held + self.rows[table]

    def end_tick(self, tick: int) -> Window | None:
        """Compact the tick's rows; when `flush_every` ticks are buffered, detach and return
        the window for `write_window` (the caller writes it, e.g. off its event loop)."""
        if self.first_tick is None:
            self.first_tick = tick
        self.last_tick = tick
        self._compact()
        if tick - self.first_tick + 1 >= self.flush_every:
            return self.take_window(tick)
        return None

    def _compact(self) -> None:
        """This tick's tuples → one sorted Arrow chunk per (table, tick value)."""
        for table, rows in self.rows.items():
            if not rows:
                continue
            by_tick: dict[int, list[tuple[Any, ...]]] = {}
            for row in rows:
                by_tick.setdefault(row[0], []).append(row)
            for tick, group in by_tick.items():
                group.sort(key=_sort_key)
                self.chunks[table].append((tick, _table(table, group)))
            rows.clear()

    def take_window(self, last_tick: int | None = None) -> Window | None:
        """Every buffered row as files to write (None if nothing is buffered); the buffers
        are empty afterwards and the window owns the only reference to its chunks."""
        if self.first_tick is None:
            return None
        self._compact()
        last = last_tick if last_tick is not None else self.last_tick or self.first_tick
        files = []
        for table, chunks in self.chunks.items():
            if not chunks:
                continue
            folder = self.root / table / f"group-{self.group_id:04d}"
            path = folder / f"ticks-{self.first_tick:06d}-{last:06d}.parquet"
            files.append((path, table, list(chunks)))
            chunks.clear()
        self.files_written += len(files)
        self.first_tick = self.last_tick = None
        return Window(files=files, compression=self.compression)

    def flush(self, last_tick: int | None = None) -> None:
        """Write every non-empty buffered table now and clear the buffers."""
        window = self.take_window(last_tick)
        if window is not None:
            write_window(window)


class Window:
    """A detached window of results: per file, its table and (tick, chunk) pairs."""

    __slots__ = ("compression", "files")

    def __init__(
        self, files: list[tuple[Path, str, list[tuple[int, pa.Table]]]], compression: str | None
    ) -> None:
        self.files = files
        self.compression = compression


def write_window(window: Window) -> None:
    """Write a window's files, one row group per tick, releasing each tick's chunk once
    written: the window's rows are never copied into one table (that copy and the encoder's
    buffers made each flush the run's RAM peak), and Arrow's pool returns its free pages."""
    while window.files:
        path, table, chunks = window.files.pop(0)
        by_tick: dict[int, list[pa.Table]] = {}
        for tick, chunk in chunks:
            by_tick.setdefault(tick, []).append(chunk)
        chunks.clear()
        path.parent.mkdir(parents=True, exist_ok=True)
        with pq.ParquetWriter(path, SCHEMAS[table], compression=window.compression) as out:
            for tick in sorted(by_tick):
                out.write_table(_tick_part(table, by_tick.pop(tick)))
    pa.default_memory_pool().release_unused()


def _tick_part(table: str, same: list[pa.Table]) -> pa.Table:
    """One tick's rows in `_sort_key` order (rows of a tick reported in two ticks' windows
    are sorted together)."""
    if len(same) == 1:
        return same[0]
    rows = [row for chunk in same for row in _tuples(chunk)]
    return _table(table, sorted(rows, key=_sort_key))


def _table(table: str, rows: list[tuple[Any, ...]]) -> pa.Table:
    """The rows as a table of `table`'s schema; a row of another width is named in the error."""
    schema = SCHEMAS[table]
    if (bad := next((row for row in rows if len(row) != len(schema)), None)) is not None:
        raise ValueError(
            f"results table {table!r}: a row of {len(bad)} values for its {len(schema)} columns "
            f"({', '.join(schema.names)}): {bad!r:.200}"
        )
    columns = list(zip(*rows, strict=True))
    return pa.table(
        [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)], schema=schema
    )


def _tuples(chunk: pa.Table) -> list[tuple[Any, ...]]:
    return list(zip(*(column.to_pylist() for column in chunk.columns), strict=True))


def _sort_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple("" if v is None else v for v in row)


def read_table(run_dir: str | Path, table: str) -> pa.Table:
    """All groups' files of one table, concatenated and sorted (empty table if none); a file
    written before a column was added (a run resumed by a newer version holds both) reads it
    as null."""
    files = sorted((Path(run_dir) / "results" / table).glob("group-*/*.parquet"))
    schema = SCHEMAS[table]
    if not files:
        return schema.empty_table()
    data = pa.concat_tables([pq.read_table(f, schema=schema) for f in files])
    keys = [(name, "ascending") for name in schema.names]
    return data.sort_by(keys)
