"""The hot tier: a group's recent memories as columns (struct of arrays), not objects."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

import numpy as np

from societas.memory.model.records import MemoryRecord
from societas.memory.store.code_column import CodeColumn
from societas.memory.store.column_ops import keep_in_place, taken_bytes
from societas.memory.store.id_map import IdMap, RowQueue
from societas.memory.store.text_column import TextColumn

_ARRAYS = (
    "ids",
    "agent_ids",
    "days",
    "ts",
    "times",
    "importances",
    "layer_since",
    "access_counts",
    "last_accessed",
    "expires",
)
_CODES = ("topics", "locations", "layers", "types")
_SPARSE = ("tags", "metadata", "cognition_links", "evidence")


class HotStore:
    """Columns with per-agent row queues (oldest first); evicted rows are compacted away."""

    def __init__(self) -> None:
        self.ids = array("q")
        self.agent_ids = array("q")
        self.days = array("l")
        self.ts = array("d")
        self.times = array("d")
        self.importances = array("d")
        self.topics = CodeColumn()  # 2-byte codes, not a str reference a row
        self.locations = CodeColumn()
        self.texts = TextColumn()  # one UTF-8 buffer, not a str per memory
        self.row_of = IdMap()  # memory id → row (an array over the ids in use, not a dict)
        self.rows_of_agent: dict[int, RowQueue] = {}
        self.layers = CodeColumn()
        self.layer_since = array("d")
        # Typed records (memory.model.records_meta): type per row; reads; expiry (inf: never).
        self.types = CodeColumn()
        self.access_counts = array("q")
        self.last_accessed = array("d")  # nan: never read
        self.expires = array("d")
        self.tags: dict[int, tuple[str, ...]] = {}  # sparse: only memories with tags
        self.metadata: dict[int, dict] = {}  # sparse: only memories with metadata
        self.cognition_links: dict[int, list[int]] = {}
        self.evidence: dict[int, list[int]] = {}
        self.newest_evicted: dict[int, float] = {}  # per agent: newest time that left hot

    def __len__(self) -> int:
        return len(self.row_of)

    def __contains__(self, memory_id: int) -> bool:
        return memory_id in self.row_of

    def append_many(
        self,
        ids: Sequence[int],
        agent_ids: Sequence[int],
        topics: Sequence[str],
        texts: Sequence[str],
        locations: Sequence[str | None],
        importances: Sequence[float],
        day: int,
        t: float,
        time: float | Sequence[float],
        layers: Sequence[str] | None = None,
        types: Sequence[str] | None = None,
        expires: Sequence[float | None] | None = None,
    ) -> None:
        """Append one batch written at the same simulated instant."""
        start, n = len(self.ids), len(ids)
        expiry = [math.inf if e is None else e for e in expires] if expires else math.inf
        numbers = (ids, agent_ids, day, t, time, importances, time, 0, math.nan, expiry)
        for name, v in zip(_ARRAYS, numbers, strict=True):  # a number stands for n of itself
            getattr(self, name).extend([v] * n if isinstance(v, int | float) else v)
        self.topics.extend(topics)
        self.locations.extend(locations)
        self.texts.extend(texts)
        self.layers.extend(layers or ["short"] * n)
        self.types.extend(types or ["episodic"] * n)
        self._index_rows(start, ids, agent_ids)

    def _index_rows(self, start: int, ids: Sequence[int], agent_ids: Sequence[int]) -> None:
        """Map the rows appended from `start` into `row_of` and each agent's row queue."""
        self.row_of.set_many(ids, range(start, start + len(ids)))
        queues = self.rows_of_agent
        for row, agent_id in enumerate(agent_ids, start):
            (queues.get(agent_id) or queues.setdefault(agent_id, RowQueue())).append(row)

    def record(self, memory_id: int) -> MemoryRecord:
        """The memory `memory_id` as a record; KeyError if it is not hot."""
        return MemoryRecord.model_validate(self.fields(memory_id))

    def fields(self, memory_id: int, row: int | None = None) -> dict:
        """The record fields of hot memory `memory_id` (at `row`, when known)."""
        if row is None:
            row = self.row_of[memory_id]
        last = self.last_accessed[row]
        expires = self.expires[row]
        topics, locations, layers, types = self.topics, self.locations, self.layers, self.types
        links, evidence = self.cognition_links, self.evidence
        tags, metadata = self.tags, self.metadata
        return {
            "id": memory_id,
            "agent_id": self.agent_ids[row],
            "text": self.texts[row],
            "topic": topics.values[topics.codes[row]],
            "day": self.days[row],
            "t": self.ts[row],
            "time": self.times[row],
            "location": locations.values[locations.codes[row]],
            "importance": self.importances[row],
            "cognition_ids": tuple(links.get(memory_id, ())) if links else (),
            "evidence_ids": tuple(evidence.get(memory_id, ())) if evidence else (),
            "layer": layers.values[layers.codes[row]],
            "layer_since": self.layer_since[row],
            "type": types.values[types.codes[row]],
            "tags": tags.get(memory_id, ()) if tags else (),
            "metadata": metadata.get(memory_id, {}) if metadata else {},
            "access_count": self.access_counts[row],
            "last_accessed": None if math.isnan(last) else last,
            "expires_at": None if math.isinf(expires) else expires,
        }

    def get_state(self) -> list[dict]:
        """Every hot row, per agent oldest first, as a payload-shaped dict with its id."""
        return list(self.rows_in_order())

    def rows_in_order(self) -> Iterator[dict]:
        """`get_state`'s rows one at a time (a checkpoint writes them a page at a time)."""
        for agent_id in sorted(self.rows_of_agent):
            for row in self.rows_of_agent[agent_id]:
                yield self.row(self.ids[row])

    def row(self, memory_id: int) -> dict:
        """One hot memory as a payload-shaped dict with its id."""
        from societas.memory.model.records_meta import restored_payload

        f = self.fields(memory_id)
        head = ("agent_id", "topic", "t", "time", "importance", "text", "location")
        return {
            "id": memory_id,
            **{key: f[key] for key in head},
            "links": self.cognition_links.get(memory_id, []),
            "evidence": self.evidence.get(memory_id, []),
            "layer": f["layer"],
            "layer_since": f["layer_since"],
            **restored_payload(f),
        }

    def set_state(self, rows: Iterable[dict]) -> None:
        """Append rows written by `get_state` (or a checkpoint's hot.parquet), in order."""
        from societas.memory.model.records_meta import meta_of

        for row in rows:
            meta = meta_of(row)  # files from before typed records: the defaults
            memory_id = row["id"]
            self.append_many(
                [memory_id],
                [row["agent_id"]],
                [row["topic"]],
                [row["text"]],
                [row["location"]],
                [row["importance"]],
                row["day"] if "day" in row else int(row["time"] // 86_400),
                row["t"],
                row["time"],
                [row["layer"]],
                [meta["type"]],
                [meta["expires_at"]],
            )
            at, last = self.row_of[memory_id], meta["last_accessed"]
            self.access_counts[at] = meta["access_count"]
            self.last_accessed[at] = math.nan if last is None else last
            self.layer_since[at] = row["layer_since"]  # layer and importance: appended as they are
            if meta["tags"]:
                self.tags[memory_id] = meta["tags"]
            if meta["metadata"]:
                self.metadata[memory_id] = meta["metadata"]
            if row["links"]:
                self.cognition_links[memory_id] = list(row["links"])
            if row["evidence"]:
                self.evidence[memory_id] = list(row["evidence"])

    def touch_many(
        self, memory_ids: Sequence[int], now: float, rows: Sequence[int] | None = None
    ) -> None:
        """One read of each hot memory (ids not hot skipped); `rows`: theirs, if known."""
        if rows is not None or len(memory_ids) < 8:  # a few: one by one, not numpy calls
            counts, last = self.access_counts, self.last_accessed
            for row in map(self.row_of.get, memory_ids) if rows is None else rows:
                if row is not None:
                    counts[row] += 1
                    last[row] = now
            return
        at = self.row_of.get_array(memory_ids)
        at = at[at >= 0]  # ids no longer hot passed over
        np.add.at(np.frombuffer(self.access_counts, np.int64), at, 1)
        np.frombuffer(self.last_accessed, np.float64)[at] = now

    def access_count(self, memory_id: int) -> int:
        return self.access_counts[self.row_of[memory_id]]

    def memory_ids(self, agent_id: int) -> list[int]:
        """Every hot memory id of one agent, oldest first."""
        return [self.ids[row] for row in self.rows_of_agent.get(agent_id, ())]

    def link(self, memory_ids: Iterable[int], cognition_id: int) -> None:
        """Record that each memory in `memory_ids` gave rise to cognition `cognition_id`."""
        sources = list(memory_ids)
        for memory_id in sources:
            if memory_id in self.row_of:
                links = self.cognition_links.setdefault(memory_id, [])
                if cognition_id not in links:
                    links.append(cognition_id)
        if cognition_id in self.row_of:
            evidence = self.evidence.setdefault(cognition_id, [])
            evidence.extend(s for s in sources if s not in evidence)

    def set_layer(self, memory_id: int, layer: str, importance: float, since: float) -> None:
        """A policy moved a hot memory to another layer (or boosted it on access)."""
        row = self.row_of.get(memory_id)
        if row is not None:
            self.layers[row] = layer
            self.importances[row] = importance
            self.layer_since[row] = since

    def leaving(self, before_time: float, cap: int) -> dict[int, list[int]]:
        """Per agent, the ids (oldest first) older than `before_time` or beyond its newest `cap`."""
        out: dict[int, list[int]] = {}
        times, ids = self.times, self.ids
        for agent_id, rows in self.rows_of_agent.items():
            surplus = len(rows) - cap
            for i, row in enumerate(rows):
                if times[row] >= before_time and i >= surplus:
                    break
                out.setdefault(agent_id, []).append(ids[row])
        return out

    def adopt(self, src: HotStore, memory_ids: Sequence[int]) -> None:
        """Append `src`'s rows of `memory_ids`, every column and sparse field as it is."""
        rows = src.row_of.get_many(memory_ids)
        start = len(self.ids)
        at = np.array(rows, np.intp)
        for name in _ARRAYS:
            getattr(self, name).frombytes(taken_bytes(getattr(src, name), at))
        for name in _CODES:
            getattr(self, name).extend_rows(getattr(src, name), rows)
        self.texts.extend_rows(src.texts, rows)
        for name in _SPARSE:
            found, into = getattr(src, name), getattr(self, name)
            if found:  # empty in most runs: no lookup an id
                for memory_id in memory_ids:
                    if memory_id in found:
                        into[memory_id] = found[memory_id]
        self._index_rows(start, memory_ids, self.agent_ids[start:])

    def evict_leaving(self, leaving: dict[int, list[int]]) -> list[int]:
        """Drop what `leaving` returned (each agent's oldest rows); returns their ids."""
        times, newest = self.times, self.newest_evicted
        dropped: list[int] = []
        for agent_id, gone in leaving.items():
            rows = self.rows_of_agent[agent_id]
            n = len(gone)
            oldest = rows[:n]  # `leaving` took each agent's oldest rows, in order
            del rows[:n]
            latest = max(map(times.__getitem__, oldest))
            if latest > newest.get(agent_id, -1.0):
                newest[agent_id] = latest
            dropped += oldest
        evicted = self._drop_rows(dropped)
        self._maybe_compact()
        return evicted

    def evict(self, memory_ids: Iterable[int]) -> None:
        """Drop these memories from RAM (they live on in warm or cold)."""
        ids = iter(memory_ids)
        while chunk := dict.fromkeys(islice(ids, 1024)):  # bounded: no copy of a big batch
            rows = []
            for memory_id in chunk:
                row = self.row_of.get(memory_id)
                if row is not None:
                    self.rows_of_agent[self.agent_ids[row]].remove(row)
                    rows.append(row)
            self._drop_rows(rows)
        self._maybe_compact()

    def _drop_rows(self, rows: list[int]) -> list[int]:
        """Forget these rows' ids (values stay, unread, until compaction); returns the ids."""
        ids = list(map(self.ids.__getitem__, rows))
        self.row_of.delete_many(ids)
        for sparse in (self.cognition_links, self.evidence, self.tags, self.metadata):
            if sparse:  # empty in most runs: no lookup an id
                for memory_id in ids:
                    sparse.pop(memory_id, None)
        return ids

    def _maybe_compact(self) -> None:
        """Compact the columns once more than a quarter of the rows are dead."""
        total, live = len(self.ids), len(self.row_of)
        if total >= 1024 and (total - live) * 4 > total:
            self.compact()

    def compact(self) -> None:
        """Drop the dead rows from the columns, in place and in numpy."""
        total = len(self.ids)
        if len(self.row_of) == total:
            return
        keep = np.sort(self.row_of.value_array())
        for name in _ARRAYS:
            keep_in_place(getattr(self, name), keep)
        for name in _CODES:
            getattr(self, name).keep_rows(keep)
        self.texts.keep_rows(keep)
        new_row = np.full(total, -1, np.int64)
        new_row[keep] = np.arange(len(keep))
        del keep
        self.row_of.remap_values(new_row)
        self.rows_of_agent = {
            agent: RowQueue(new_row[np.frombuffer(rows, np.int64)].tolist())
            for agent, rows in self.rows_of_agent.items()
            if rows
        }
