"""CodeColumn: strings as small codes, read back as written, widened past 65,535 values."""

from __future__ import annotations

import random

import numpy as np
import pytest

from societas.memory.store.code_column import CodeColumn


def test_rows_read_back_as_written_under_appends_sets_and_takes():
    rng = random.Random(7)
    pool = ["home-1", "cafe-2", None, "park-3", "caf\udce9", ""]
    column, plain = CodeColumn(), []
    for step in range(2_000):
        value = rng.choice(pool)
        if plain and step % 5 == 0:
            row = rng.randrange(len(plain))
            column[row] = plain[row] = value
        else:
            column.append(value)
            plain.append(value)
        if step % 400 == 399:
            keep = sorted(rng.sample(range(len(plain)), len(plain) // 2))
            column.keep_rows(np.array(keep, np.intp))
            plain = [plain[r] for r in keep]
    assert list(column) == plain and len(column) == len(plain)
    assert [column[r] for r in range(len(plain))] == plain
    assert column.codes.itemsize == 2


def test_equals_filters_rows_without_decoding():
    column = CodeColumn(["a", "b", None, "a"])
    rows = np.array([3, 2, 0, 1])
    assert column.equals(rows, "a").tolist() == [True, False, True, False]
    assert column.equals(rows, None).tolist() == [False, True, False, False]
    assert column.equals(rows, "zzz").tolist() == [False] * 4


def test_codes_widen_past_65535_values_and_keep_rows_drops_unused_ones():
    column = CodeColumn(f"home-{i}" for i in range(70_000))
    assert column.codes.itemsize == 4
    assert column[69_999] == "home-69999" and column[3] == "home-3"
    assert column.equals(np.array([69_999, 0]), "home-69999").tolist() == [True, False]
    column.keep_rows(np.array([5, 69_999]))
    assert list(column) == ["home-5", "home-69999"]
    assert column.values == ["home-5", "home-69999"] and column.codes.itemsize == 2
    column.append("home-7")  # coded anew after the cut
    column.append("home-5")
    assert list(column) == ["home-5", "home-69999", "home-7", "home-5"]
    assert column.codes.tolist() == [0, 1, 2, 0]


@pytest.mark.parametrize("kept", [0.0, 0.01, 0.5, 1.0])
def test_keep_rows_in_chunks_equals_the_rows_kept(kept):
    """Across several chunks, every value still held or some let go (None among them)."""
    from societas.memory.store.column_ops import KEEP_CHUNK

    rng = random.Random(int(kept * 100))
    pool = [None, "park", "harbour", *(f"home-{i}" for i in range(300))]
    plain = [rng.choice(pool) for _ in range(3 * KEEP_CHUNK + 11)]
    column = CodeColumn(plain)
    rows = [r for r in range(len(plain)) if rng.random() < kept]
    column.keep_rows(np.array(rows, np.intp))
    expected = [plain[r] for r in rows]
    assert list(column) == expected
    assert sorted(column.values, key=str) == sorted(set(expected), key=str)
    assert all(column._code_of[v] == c for c, v in enumerate(column.values))


def test_rows_of_another_column_keep_their_values_and_only_theirs():
    src = CodeColumn(["park", None, "harbour", "school", "harbour"])
    dst = CodeColumn(["market"])
    dst.extend_rows(src, [4, 1, 2])
    assert list(dst) == ["market", "harbour", None, "harbour"]
    assert "school" not in dst.values and "park" not in dst.values


def test_rows_of_another_column_widen_past_65535_values():
    src = CodeColumn(f"place {i}" for i in range(70_000))
    dst = CodeColumn()
    dst.extend_rows(src, range(0, 70_000, 1))
    assert dst.codes.typecode == "I" and dst[69_999] == "place 69999" and len(dst) == 70_000


@pytest.mark.parametrize("n_rows", [5, 127, 128, 400])
def test_rows_of_another_column_by_row_and_in_numpy_agree(n_rows):
    """Below and from the numpy cut-over: the values at the rows, in order and repeated,
    None included, coded into a column that already holds some of them."""

    rng = random.Random(n_rows)
    values = [None, "park", "harbour", "school", *(f"home {i}" for i in range(40))]
    src = CodeColumn(rng.choice(values) for _ in range(300))
    dst = CodeColumn(["market", "harbour", None])
    rows = [rng.randrange(300) for _ in range(n_rows)]
    dst.extend_rows(src, rows)
    assert list(dst) == ["market", "harbour", None, *(src[r] for r in rows)]
    assert len(set(dst.values)) == len(dst.values)  # each value coded once
