"""CodeColumn: strings as small codes, read back as written, widened past 65,535 values."""

from __future__ import annotations

import random

import numpy as np
import pytest

from societas.memory.code_column import CodeColumn


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
            column, plain = column.take(keep), [plain[r] for r in keep]
    assert list(column) == plain and len(column) == len(plain)
    assert [column[r] for r in range(len(plain))] == plain
    assert column.codes.itemsize == 2


def test_equals_filters_rows_without_decoding():
    column = CodeColumn(["a", "b", None, "a"])
    rows = np.array([3, 2, 0, 1])
    assert column.equals(rows, "a").tolist() == [True, False, True, False]
    assert column.equals(rows, None).tolist() == [False, True, False, False]
    assert column.equals(rows, "zzz").tolist() == [False] * 4


def test_codes_widen_past_65535_values_and_take_drops_unused_ones():
    column = CodeColumn(f"home-{i}" for i in range(70_000))
    assert column.codes.itemsize == 4
    assert column[69_999] == "home-69999" and column[3] == "home-3"
    assert column.equals(np.array([69_999, 0]), "home-69999").tolist() == [True, False]
    kept = column.take([5, 69_999, 5])
    assert list(kept) == ["home-5", "home-69999", "home-5"]
    assert len(kept.values) == 2 and kept.codes.itemsize == 2


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
