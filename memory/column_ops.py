"""Whole-column operations on typed `array` columns, in numpy: gathers and in-place cuts."""

from __future__ import annotations

from array import array

import numpy as np


def keep_in_place(column: array, rows: np.ndarray) -> None:
    """Shift a typed column's values at `rows` (ascending) down to its front and cut the rest
    (one numpy gather of the kept values; the array shrinks in place)."""
    values = np.frombuffer(column, column.typecode)
    values[: len(rows)] = values[rows]
    del values  # the buffer is no longer exported: the array may resize
    del column[len(rows) :]


def taken_bytes(column: array, rows: np.ndarray) -> bytes:
    """The bytes of a typed column's values at `rows`, in that order (one numpy gather)."""
    return np.frombuffer(column, column.typecode)[rows].tobytes()
