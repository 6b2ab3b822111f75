"""Whole-column operations on typed `array` columns, in numpy: gathers and in-place cuts."""

from __future__ import annotations

from array import array

import numpy as np

KEEP_CHUNK = 4096  # rows a numpy pass of keep_in_place gathers: small reused temporaries


def keep_in_place(column: array, rows: np.ndarray) -> None:
    """Keep a typed column's values at `rows` (ascending, distinct), moved to its front."""
    values = np.frombuffer(column, column.typecode)
    n = len(rows)
    for start in range(0, n, KEEP_CHUNK):
        end = min(start + KEEP_CHUNK, n)
        values[start:end] = values[rows[start:end]]
    del values  # the buffer is no longer exported: the array may resize
    del column[n:]


def taken_bytes(column: array, rows: np.ndarray) -> bytes:
    """The bytes of a typed column's values at `rows`, in that order (one numpy gather)."""
    return np.frombuffer(column, column.typecode)[rows].tobytes()
