"""The results writer: a window detached when due, written one row group per tick, in order."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from societas.agents.runtime.results import ResultsWriter, read_table, write_window


def _needs(tick: int, agent_id: int) -> tuple:
    return (tick, agent_id, 0.5, 0.25 * (agent_id % 4), 1.0, 0.1 * tick, "energy")


def test_a_window_is_written_when_due_one_row_group_per_tick(tmp_path):
    writer = ResultsWriter(tmp_path, group_id=3, flush_every=3)
    windows = []
    for tick in range(6):
        for agent_id in (5, 1, 3):  # added out of order: files hold them sorted
            writer.add("needs", _needs(tick, agent_id))
        windows.append(writer.end_tick(tick))
    assert [w is not None for w in windows] == [False, False, True, False, False, True]
    assert all(not chunks for chunks in writer.chunks.values())  # detached, not copied
    for window in windows:
        if window is not None:
            write_window(window)
    files = sorted((tmp_path / "results" / "needs" / "group-0003").glob("*.parquet"))
    assert [f.name for f in files] == ["ticks-000000-000002.parquet", "ticks-000003-000005.parquet"]
    assert [pq.ParquetFile(f).metadata.num_row_groups for f in files] == [3, 3]
    rows = read_table(tmp_path, "needs").to_pylist()
    expected = [_needs(t, a) for t in range(6) for a in (1, 3, 5)]
    assert [tuple(r.values()) for r in rows] == expected
    assert writer.files_written == 2


def test_rows_of_a_tick_reported_later_are_sorted_with_it(tmp_path):
    writer = ResultsWriter(tmp_path, group_id=0, flush_every=10)
    writer.add("needs", _needs(0, 9))
    writer.end_tick(0)
    writer.add("needs", _needs(0, 2))  # a tick-0 row that arrived in tick 1
    writer.add("needs", _needs(1, 4))
    writer.end_tick(1)
    assert writer.buffered("needs") == [_needs(0, 9), _needs(0, 2), _needs(1, 4)]
    writer.flush(1)
    path = tmp_path / "results" / "needs" / "group-0000" / "ticks-000000-000001.parquet"
    table = pq.read_table(path)
    assert list(zip(table["tick"].to_pylist(), table["agent_id"].to_pylist(), strict=True)) == [
        (0, 2),
        (0, 9),
        (1, 4),
    ]
    assert pq.ParquetFile(path).metadata.num_row_groups == 2


def test_a_file_flushed_before_its_window_is_full_is_named_by_its_ticks(tmp_path):
    """A run resumed at tick 25 and closed after tick 35: the file says 25 to 35."""
    writer = ResultsWriter(tmp_path, group_id=0, flush_every=48)
    for tick in range(25, 36):
        writer.add("needs", _needs(tick, 1))
        assert writer.end_tick(tick) is None
    writer.flush()
    files = [f.name for f in (tmp_path / "results" / "needs" / "group-0000").glob("*.parquet")]
    assert files == ["ticks-000025-000035.parquet"]
    assert read_table(tmp_path, "needs")["tick"].to_pylist() == list(range(25, 36))


def test_a_row_of_another_width_is_named_with_its_tables_columns(tmp_path):
    """A row one value short (a table grew a column its writer does not give) fails at the
    tick's end naming the table, the widths and the columns, not in a zip deep inside."""
    writer = ResultsWriter(tmp_path, group_id=0, flush_every=3)
    writer.add("needs", _needs(0, 1))
    writer.add("needs", _needs(0, 2)[:-1])
    with pytest.raises(ValueError) as raised:
        writer.end_tick(0)
    assert str(raised.value).startswith(
        "results table 'needs': a row of 6 values for its 7 columns (tick, agent_id, "
    )
