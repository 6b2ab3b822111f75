"""The cold tier: memories aged out of the vector store, as Parquet parts per day window."""

from __future__ import annotations

import functools
import json
import math
import operator
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pyarrow.parquet as pq
from numpy.typing import NDArray

from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.model.clock import SECONDS_PER_DAY
from societas.memory.model.records_meta import META_FIELDS, conform, meta_row
from societas.memory.retrieval.scoring import Numbers, RetrievalConfig, cosine, exact_match_score
from societas.memory.retrieval.sparse_index import AgentPostings, SparseIndex
from societas.memory.store.fsutil import write_bytes_atomic, write_parquet_atomic
from societas.memory.tiers.cold_merge import merge_parts
from societas.memory.vectorstores.base import PointFilter, ScoredPoint

ROW_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("agent_id", pa.int64()),
        ("topic", pa.string()),
        ("day", pa.int32()),
        ("t", pa.float64()),
        ("time", pa.float64()),
        ("location", pa.string()),
        ("importance", pa.float64()),
        ("text", pa.string()),
        ("links", pa.list_(pa.int64())),
        ("evidence", pa.list_(pa.int64())),
        ("layer", pa.string()),
        ("layer_since", pa.float64()),
        *META_FIELDS,
    ]
)
VECTOR_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("agent_id", pa.int64()),
        ("sparse_indices", pa.list_(pa.uint32())),
        ("sparse_values", pa.list_(pa.float32())),
        ("dense", pa.list_(pa.float32())),
    ]
)
ROW_GROUP = 4096  # rows per row group of a merged part
FRESH_ROW_GROUP = 512  # a move's small part: a merge's agent slices read little of it
_PART = re.compile(r"part-(\d+)\.rows\.parquet$")


@dataclass
class _Part:
    """One cold part, its rows and vectors files open, with each row group's agent range."""

    rows: pq.ParquetFile
    vectors: pq.ParquetFile
    agent_ranges: list[tuple[int, int]]
    id_ranges: list[tuple[int, int]]

    @classmethod
    def open(cls, rows_path: Path) -> _Part:
        rows = pq.ParquetFile(rows_path)
        vectors = pq.ParquetFile(str(rows_path).replace(".rows.", ".vectors."))
        meta, ranges = rows.metadata, []
        for column in (rows.schema_arrow.get_field_index(n) for n in ("agent_id", "id")):
            stats = (
                meta.row_group(i).column(column).statistics for i in range(meta.num_row_groups)
            )
            ranges.append([(s.min, s.max) for s in stats])
        return cls(rows, vectors, *ranges)

    def groups_of(self, agent_id: int, ids: tuple[int, int] = (0, 1 << 63)) -> list[int]:
        """Row groups that may hold this agent and an id in `ids` (rows and vectors alike)."""
        (lo, hi), ranges = ids, zip(self.agent_ranges, self.id_ranges, strict=True)
        return [
            i
            for i, ((a, b), (c, d)) in enumerate(ranges)
            if a <= agent_id <= b and c <= hi and lo <= d
        ]


class ColdStore:
    """Append-only Parquet parts of one group; each part written atomically."""

    def __init__(self, root: Path, group_id: int, day_window: int = 7) -> None:
        self.dir = Path(root) / f"group={group_id}"
        self.day_window = day_window
        self._rows_dataset: pds.Dataset | None = None
        self._open: list[_Part] | None = None
        self._count: int | None = None  # rows in all parts, re-read only after a change
        self._index: SparseIndex | None = None  # every row's id, time, importance and terms
        self._expiring: dict[int, float] = {}  # expiry times of the indexed rows that expire
        self._index_lock = threading.Lock()  # written by `write` and read by searches
        self.rows_read = 0  # rows a bounded search took out of the parts
        files = self.row_files()
        self._has_rows, parts = bool(files), (_PART.search(f.name) for f in files)
        self._next_part = 1 + max((int(m.group(1)) for m in parts if m), default=0)

    def _new_part(self, folder: Path) -> tuple[Path, Path]:
        """The rows and vectors paths of the next part in `folder`."""
        self._next_part += 1
        name = f"part-{self._next_part - 1:06d}"
        return folder / f"{name}.rows.parquet", folder / f"{name}.vectors.parquet"

    def row_files(self) -> list[Path]:
        return sorted(self.dir.glob("days=*/part-*.rows.parquet")) if self.dir.exists() else []

    def write(self, points: Sequence[ScoredPoint]) -> list[Path]:
        """Write points (payload + vectors) as new parts, one per day window; returns them."""
        by_window: dict[int, list[ScoredPoint]] = {}
        for p in points:
            assert p.payload is not None
            day = int(p.payload["time"] // SECONDS_PER_DAY)
            by_window.setdefault(day // self.day_window, []).append(p)
        written = []
        for window, group in sorted(by_window.items()):
            group.sort(key=lambda p: ((p.payload or {})["agent_id"], p.id))
            d0 = window * self.day_window
            folder = self.dir / f"days={d0:05d}-{d0 + self.day_window - 1:05d}"
            rows, vectors = self._new_part(folder)
            tables = (rows_table(group), vectors_table(group))
            write_parquet_atomic(vectors, tables[1], FRESH_ROW_GROUP)
            write_parquet_atomic(rows, tables[0], FRESH_ROW_GROUP)  # rows last: done
            self._forget_open()
            self._has_rows = True
            written.append(rows)
            with self._index_lock:
                if self._index is not None:
                    self._expiring |= _index_rows(self._index, *tables)
        return written

    def may_hold(self, agent_id: int) -> bool:
        """Whether the agent may have cold rows (False is certain); reads no file."""
        index = self._index
        return self._has_rows and (index is None or agent_id in index.agents)

    def index(self) -> SparseIndex:
        """Each agent's cold rows as RAM postings, read at first use and kept by `write`."""
        with self._index_lock:
            if self._index is None:
                self._index = SparseIndex()
                for f in self.row_files():  # each part's rows and vectors
                    paths = (f, str(f).replace(".rows.", ".vectors."))
                    self._expiring |= _index_rows(self._index, *map(pq.read_table, paths))
            return self._index

    def best(
        self,
        flt: PointFilter,
        query: SparseVector,
        weights: list[tuple[int, float]] | None,
        score: Callable[[Numbers, float], Any],
        kth: tuple[float, int] | None,
        limit: int,
        relevant_only: bool,
    ) -> list[tuple[dict[str, Any], float]]:
        """Up to `limit` rows passing `flt` that beat `kth`, best first (weights None: own IDF)."""
        index = self.index()
        p = index.agents.get(flt.agent_id)
        if p is None:
            return []
        ids, times = np.frombuffer(p.ids, np.int64), np.frombuffer(p.times, np.float64)
        can = self._passing(index, p, flt)
        if weights is None:
            weights = _own_weights(index, p, can, query)
        terms = index.matches(p, weights)  # raw relevance: each row's products summed
        raw = np.zeros(len(ids)) if terms is None else np.bincount(*terms, minlength=len(ids))
        numbers = Numbers(times, np.frombuffer(p.importances), raw, times, "short")
        if p.layers is not None:  # else every row is short since its time
            numbers.layer = np.array(index.topic_names)[np.frombuffer(p.layers[0], np.uint16)]
            numbers.layer_since = np.frombuffer(p.layers[1], np.float64)
        scores = score(numbers, exact_match_score([w for _, w in weights], len(query.indices)))
        if relevant_only:
            can &= raw > 0
        if kth is not None:
            can &= (scores > kth[0]) | ((scores == kth[0]) & (ids > kth[1]))
        at = can.nonzero()[0]
        order = at[np.lexsort((-ids[at], -scores[at]))]
        out: list[tuple[dict[str, Any], float]] = []
        for start in range(0, len(order), limit):
            chunk = order[start : start + limit]
            rows = {r["id"]: r for r in self.scan(flt, ids[chunk].tolist()).to_pylist()}
            self.rows_read += len(rows)
            out += [(rows[i], float(scores[j])) for j in chunk if (i := int(ids[j])) in rows]
            if len(out) >= limit:
                break
        return out[:limit]

    def _passing(self, index: SparseIndex, p: AgentPostings, flt: PointFilter) -> NDArray[np.bool_]:
        """Which of the agent's indexed rows pass the filter's topic, days, layers and expiry."""
        can, times = np.ones(len(p), np.bool_), np.frombuffer(p.times, np.float64)
        if flt.topic is not None:
            can &= np.frombuffer(p.topics, np.uint16) == index.topic_id_of(flt.topic)
        if flt.day_range is not None:
            first, end = flt.day_range[0] * 86_400.0, (flt.day_range[1] + 1) * 86_400.0
            can &= (times >= first) & (times < end)
        if flt.layers is not None and p.layers is None:  # every row is short
            can &= "short" in flt.layers
        elif flt.layers is not None and p.layers is not None:
            wanted = [index.topic_id_of(name) for name in flt.layers]
            can &= np.isin(np.frombuffer(p.layers[0], np.uint16), wanted)
        if flt.alive_at is not None and (expiring := self._expiring):
            alive_at, inf = flt.alive_at, math.inf
            can &= np.fromiter((expiring.get(i, inf) > alive_at for i in p.ids), np.bool_, len(p))
        return can

    def compact(self, folder: Path, drop_expired_before: float | None = None) -> Path | None:
        """Merge one day window's parts crash-safely: merged part, journal, then deletion."""
        parts = sorted(folder.glob("part-*.rows.parquet"))
        if len(parts) < 2:
            return None
        opened = [_Part.open(f) for f in parts]
        merged, merged_vectors = self._new_part(folder)
        merge_parts(
            [(p.rows, p.vectors, p.agent_ranges) for p in opened],
            merged,
            merged_vectors,
            ROW_SCHEMA,
            ROW_GROUP,
            drop_expired_before,
        )
        del opened
        journal = folder / "_compaction.json"
        write_bytes_atomic(
            journal,
            json.dumps({"merged": merged.name, "replaced": [f.name for f in parts]}).encode(),
        )
        self._finish_compaction(folder)
        pa.default_memory_pool().release_unused()  # give the merge's buffers back to the OS
        return merged

    def _finish_compaction(self, folder: Path) -> None:
        journal = folder / "_compaction.json"
        if not journal.exists():
            return
        record = json.loads(journal.read_text())
        if (folder / record["merged"]).exists():
            for name in record["replaced"]:
                (folder / name).unlink(missing_ok=True)
                (folder / name.replace(".rows.", ".vectors.")).unlink(missing_ok=True)
        journal.unlink()
        self._forget_open()

    def _forget_open(self) -> None:
        """The parts changed: datasets, open parts and the row count are read afresh."""
        self._rows_dataset = self._open = self._count = None

    def recover_compaction(self) -> None:
        """Finish any merge a crash interrupted (old parts go once the merged one exists)."""
        if self.dir.exists():
            for journal in self.dir.glob("days=*/_compaction.json"):
                self._finish_compaction(journal.parent)

    def compact_crowded(self, max_parts: int, now: float | None = None) -> int:
        """Compact every day window with more than `max_parts` parts; returns how many."""
        done = 0
        if self.dir.exists():
            for folder in sorted(self.dir.glob("days=*")):
                if len(list(folder.glob("part-*.rows.parquet"))) > max_parts:
                    done += self.compact(folder, now) is not None
        return done

    def count(self) -> int:
        """Rows in the cold tier (from the parts' footers, cached until the next change)."""
        if self._count is None:
            self._count = sum(pq.ParquetFile(f).metadata.num_rows for f in self.row_files())
        return self._count

    def _dataset(self) -> pds.Dataset | None:
        """The rows dataset over all parts, rebuilt only after a write."""
        if self._rows_dataset is None:
            files = [str(f) for f in self.row_files()]
            if not files:
                return None
            self._rows_dataset = pds.dataset(files, schema=ROW_SCHEMA, format="parquet")
        return self._rows_dataset

    def _parts(self) -> list[_Part]:
        """Open parts with the agent range of each row group (from Parquet statistics)."""
        if self._open is None:
            self._open = [_Part.open(f) for f in self.row_files()]
        return self._open

    @staticmethod
    def _filter_expr(flt: PointFilter | None, ids: Iterable[int] | None) -> pc.Expression | None:
        conds = []
        if ids is not None:
            conds.append(pc.field("id").isin(pa.array(list(ids), pa.int64())))
        if flt is not None:
            conds.append(pc.field("agent_id") == flt.agent_id)
            for name, value in (("topic", flt.topic), ("location", flt.location)):
                if value is not None:
                    conds.append(pc.field(name) == value)
            for name, span in (("day", flt.day_range), ("t", flt.time_range)):
                if span is not None:
                    conds.append((pc.field(name) >= span[0]) & (pc.field(name) <= span[1]))
            if flt.layers is not None:  # rows written before layers are short
                conds.append(pc.coalesce(pc.field("layer"), pc.scalar("short")).isin(flt.layers))
            if flt.types is not None:  # rows written before types were episodic
                typed = pc.coalesce(pc.field("type"), pc.scalar("episodic"))
                conds.append(typed.isin(list(flt.types)))
            if flt.alive_at is not None:
                expires = pc.field("expires_at")
                conds.append(expires.is_null() | (expires > flt.alive_at))
        return functools.reduce(operator.and_, conds) if conds else None

    def scan(self, flt: PointFilter | None = None, ids: Iterable[int] | None = None) -> pa.Table:
        """Rows matching an agent filter and/or ids (an agent's: only its row groups are read)."""
        ids = None if ids is None else list(ids)
        expr = self._filter_expr(flt, ids)
        if flt is None:
            dataset = self._dataset()
            return ROW_SCHEMA.empty_table() if dataset is None else dataset.to_table(filter=expr)
        table = self._scan_agent(flt, expr, (min(ids), max(ids)) if ids else (0, 1 << 63))
        if flt.tags is not None and table.num_rows:  # any of the tags (no list kernel here)
            wanted = set(flt.tags)
            mask = [bool(v) and not wanted.isdisjoint(v) for v in table["tags"].to_pylist()]
            table = table.filter(pa.array(mask, pa.bool_()))
        return table

    def _scan_agent(
        self, flt: PointFilter, expr: pc.Expression | None, ids: tuple[int, int]
    ) -> pa.Table:
        """The agent's rows from the row groups that may hold it and `ids`, filtered by `expr`."""
        tables = [
            conform(part.rows.read_row_groups(groups), ROW_SCHEMA)
            for part in self._parts()
            if (groups := part.groups_of(flt.agent_id, ids))
        ]
        if not tables:
            return ROW_SCHEMA.empty_table()
        return pa.concat_tables(tables).filter(expr)

    def vectors(self, ids: Iterable[int], agent_id: int) -> dict[int, TextVectors]:
        """Vectors of one agent's cold memories by id (only its row groups are read)."""
        wanted = pa.array(list(ids), pa.int64())
        parts = self._parts() if len(wanted) else []
        tables = [p.vectors.read_row_groups(g) for p in parts if (g := p.groups_of(agent_id))]
        if not tables:
            return {}
        table = pa.concat_tables(tables).filter(pc.field("id").isin(wanted))
        return {row["id"]: row_vectors(row) for row in table.to_pylist()}

    def all_ids(self) -> set[int]:
        dataset = self._dataset()
        return set() if dataset is None else set(dataset.to_table(columns=["id"])["id"].to_pylist())


def _index_rows(index: SparseIndex, rows: pa.Table, vectors: pa.Table) -> dict[int, float]:
    """Index a part's rows and vectors (same order); returns the expiry times of expiring rows."""
    c = rows.to_pydict()
    sparse = [row_vectors({**v, "dense": None}).sparse for v in vectors.to_pylist()]
    marks = [  # rows written before layers are short since their time
        (layer or "short", time if since is None else since)
        for layer, since, time in zip(c["layer"], c["layer_since"], c["time"], strict=True)
    ]
    index.add(c["id"], c["agent_id"], c["time"], c["importance"], c["topic"], sparse, marks)
    return {i: at for i, at in zip(c["id"], c["expires_at"], strict=True) if at is not None}


def _own_weights(
    index: SparseIndex, p: AgentPostings, rows: NDArray[np.bool_], query: SparseVector
) -> list[tuple[int, float]]:
    """The query's terms weighted by their IDF over `rows` of the agent (Qdrant's formula)."""
    terms, ends, n = np.frombuffer(p.terms, np.uint32), np.frombuffer(p.ends, np.uint32), rows.sum()
    weights = []
    for term in query.indices:
        holding = ends.searchsorted((terms == term).nonzero()[0], side="right")
        if count := int(np.count_nonzero(rows[holding])):
            weights.append((term, math.log(1 + (n - count + 0.5) / (count + 0.5))))
    return weights


def rows_table(points: Sequence[ScoredPoint]) -> pa.Table:
    cols: dict[str, list[Any]] = {name: [] for name in ROW_SCHEMA.names}
    for p in points:
        pl = p.payload or {}
        cols["id"].append(p.id)
        cols["agent_id"].append(pl["agent_id"])
        cols["topic"].append(pl["topic"])
        cols["day"].append(int(pl["time"] // SECONDS_PER_DAY))
        cols["t"].append(pl["t"])
        cols["time"].append(pl["time"])
        cols["location"].append(pl.get("location"))
        cols["importance"].append(pl["importance"])
        cols["text"].append(pl["text"])
        cols["links"].append(list(pl.get("links") or []))
        cols["evidence"].append(list(pl.get("evidence") or []))
        cols["layer"].append(pl.get("layer", "short"))
        cols["layer_since"].append(pl.get("layer_since", pl["time"]))
        for name, value in meta_row(pl).items():
            cols[name].append(value)
    return pa.table(cols, schema=ROW_SCHEMA)


def vectors_table(points: Sequence[ScoredPoint], schema: pa.Schema = VECTOR_SCHEMA) -> pa.Table:
    """Points' ids, agents and vectors (and `schema`'s payload columns) as a table."""
    cols: dict[str, list[Any]] = {name: [] for name in schema.names}
    payload_columns = [name for name in schema.names if name not in VECTOR_SCHEMA.names]
    for p in points:
        v = p.vectors or TextVectors()
        pl = p.payload or {}
        cols["id"].append(p.id)
        cols["agent_id"].append(pl["agent_id"])
        for name in payload_columns:
            cols[name].append(pl[name])
        cols["sparse_indices"].append(list(v.sparse.indices) if v.sparse else None)
        cols["sparse_values"].append(list(v.sparse.values) if v.sparse else None)
        cols["dense"].append(list(v.dense) if v.dense is not None else None)
    return pa.table(cols, schema=schema)


def row_vectors(row: dict[str, Any]) -> TextVectors:
    """The vectors of one row of a vectors table (`vectors_table`) read back."""
    sparse = (
        SparseVector.of(row["sparse_indices"], row["sparse_values"])
        if row["sparse_indices"] is not None
        else None
    )
    dense = tuple(row["dense"]) if row["dense"] is not None else None
    return TextVectors(dense=dense, sparse=sparse)


def cold_relevance(
    query: TextVectors, docs: Sequence[TextVectors | None], mode: str, config: RetrievalConfig
) -> tuple[list[float], str]:
    """Raw relevance of cold rows and its normalisation (RRF-fused when both vector kinds)."""
    sparse = dense = None
    if query.sparse is not None and not query.sparse.is_empty():
        sparse = bm25_relevance(query.sparse, [d.sparse if d else None for d in docs])
    if query.dense is not None:
        dense = [cosine(query.dense, d.dense) if d and d.dense is not None else 0.0 for d in docs]
    if sparse is not None and dense is not None:
        fused = [0.0] * len(docs)
        for scores in (sparse, dense):
            order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])
            for rank, i in enumerate(order, start=1):
                fused[i] += 1.0 / (config.rrf_k + rank)
        return fused, "rrf"
    raw = sparse if sparse is not None else dense if dense is not None else [0.0] * len(docs)
    return [max(s, 0.0) for s in raw], mode


def bm25_relevance(query: SparseVector, docs: Sequence[SparseVector | None]) -> list[float]:
    """BM25 of `query` against `docs` with IDF over `docs` (Qdrant's IDF formula)."""
    n_docs = len(docs)
    maps = [dict(zip(d.indices, d.values, strict=True)) if d else {} for d in docs]
    scores = [0.0] * n_docs
    for term in query.indices:
        containing = sum(1 for m in maps if term in m)
        if not containing:
            continue
        idf = math.log(1 + (n_docs - containing + 0.5) / (containing + 0.5))
        for i, m in enumerate(maps):
            if term in m:
                scores[i] += m[term] * idf
    return scores
