"""In-place column cuts keep exactly the rows asked for, in order, across chunk borders."""

from __future__ import annotations

from array import array

import numpy as np
import pytest

from societas.memory.store.column_ops import KEEP_CHUNK, keep_in_place, taken_bytes


@pytest.mark.parametrize("typecode", ["d", "q", "H", "I"])
@pytest.mark.parametrize("size", [0, 1, KEEP_CHUNK - 1, KEEP_CHUNK, 3 * KEEP_CHUNK + 17])
@pytest.mark.parametrize("kept", [0.0, 0.3, 0.75, 1.0])
def test_keep_in_place_equals_a_gather_of_the_kept_rows(typecode, size, kept):
    rng = np.random.default_rng(size + int(kept * 100))
    column = array(typecode, rng.integers(0, 60_000, size).tolist())
    rows = np.flatnonzero(rng.random(size) < kept)
    expected = [column[r] for r in rows.tolist()]
    keep_in_place(column, rows)
    assert column.tolist() == expected
    column.append(7)  # the buffer is no longer exported: the column grows again
    assert column[-1] == 7


def test_keep_in_place_moves_late_rows_over_early_ones():
    """Only the last rows kept: every value crosses several chunks to the front."""
    n = 4 * KEEP_CHUNK
    column = array("q", range(n))
    rows = np.arange(n - KEEP_CHUNK - 5, n)
    keep_in_place(column, rows)
    assert column.tolist() == list(range(n - KEEP_CHUNK - 5, n))


def test_taken_bytes_are_the_rows_in_the_order_given():
    column = array("d", [0.5, 1.5, 2.5, 3.5])
    taken = array("d")
    taken.frombytes(taken_bytes(column, np.array([3, 0, 3])))
    assert taken.tolist() == [3.5, 0.5, 3.5]
