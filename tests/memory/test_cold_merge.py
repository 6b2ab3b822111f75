"""A cold window's parts merged a slice of agents at a time: the same rows as one big merge,
aligned vector rows, expired memories dropped, and nothing changed by a merge that fails."""

from __future__ import annotations

import random
import shutil

import pyarrow.parquet as pq
import pytest

from societas.memory.embedding.base import SparseVector, TextVectors
from societas.memory.tiers import cold_merge
from societas.memory.tiers.cold import ColdStore
from societas.memory.vectorstores.base import ScoredPoint


def _parts(store: ColdStore, count: int, per_part: int, seed: int = 5) -> None:
    """`count` parts of one day window, agents and ids interleaved, a few expiring."""
    rng = random.Random(seed)
    next_id = 1
    for _ in range(count):
        points = []
        for _ in range(per_part):
            agent = rng.randrange(40)
            payload = {
                "agent_id": agent,
                "topic": rng.choice(["event", "social"]),
                "t": 3600.0,
                "time": rng.randrange(3) * 86_400.0 + 3600.0,
                "importance": rng.random(),
                "text": f"memory {next_id} of agent {agent}",
            }
            if next_id % 9 == 0:
                payload["expires_at"] = 2.0 * 86_400.0
            vector = SparseVector.of([next_id % 50, 100 + agent], [1.0, 0.5])
            points.append(ScoredPoint(next_id, 0.0, payload, TextVectors(sparse=vector)))
            next_id += 1
        store.write(points)


def _merged(store: ColdStore, folder) -> tuple:
    (rows_file,) = folder.glob("part-*.rows.parquet")
    vectors_file = str(rows_file).replace(".rows.", ".vectors.")
    return pq.read_table(rows_file), pq.read_table(vectors_file), pq.ParquetFile(rows_file)


@pytest.mark.parametrize("drop_expired_before", [None, 2.5 * 86_400.0])
def test_slices_merge_to_the_rows_one_merge_gives(tmp_path, monkeypatch, drop_expired_before):
    whole = ColdStore(tmp_path / "whole", 0)
    _parts(whole, count=4, per_part=60)
    shutil.copytree(whole.dir, tmp_path / "sliced" / whole.dir.name)
    sliced = ColdStore(tmp_path / "sliced", 0)  # opened on the copied parts
    (folder_whole,) = whole.dir.glob("days=*")
    (folder_sliced,) = sliced.dir.glob("days=*")
    monkeypatch.setattr(cold_merge, "MERGE_ROWS", 10**9)
    whole.compact(folder_whole, drop_expired_before)
    monkeypatch.setattr(cold_merge, "MERGE_ROWS", 7)  # ~35 slices of a few agents each
    sliced.compact(folder_sliced, drop_expired_before)
    rows_w, vectors_w, _ = _merged(whole, folder_whole)
    rows_s, vectors_s, file_s = _merged(sliced, folder_sliced)
    assert rows_s.equals(rows_w) and vectors_s.equals(vectors_w)
    assert rows_s["id"].to_pylist() == vectors_s["id"].to_pylist()  # row order shared
    expected = 240 if drop_expired_before is None else 240 - 240 // 9
    assert rows_s.num_rows == expected
    pairs = list(zip(rows_s["agent_id"].to_pylist(), rows_s["id"].to_pylist(), strict=True))
    assert pairs == sorted(pairs)
    column = file_s.schema_arrow.get_field_index("agent_id")
    assert file_s.metadata.num_row_groups > 1  # row groups with agent ranges, as written
    assert file_s.metadata.row_group(0).column(column).statistics.has_min_max


def test_a_merge_that_fails_leaves_the_parts_as_they_were(tmp_path, monkeypatch):
    store = ColdStore(tmp_path, 0)
    _parts(store, count=3, per_part=50)
    (folder,) = store.dir.glob("days=*")
    before = sorted(p.name for p in folder.iterdir())
    rows_before = store.count()
    monkeypatch.setattr(cold_merge, "MERGE_ROWS", 10)
    calls = []
    real = pq.ParquetWriter.write_table

    def failing(self, table, *args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise OSError("disk full in the middle of a merge")
        return real(self, table, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", failing)
    with pytest.raises(OSError, match="disk full"):
        store.compact(folder)
    assert sorted(p.name for p in folder.iterdir()) == before  # no merged part, no temp file
    assert store.count() == rows_before
