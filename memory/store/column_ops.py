"""Whole-column operations on typed `array` columns, in numpy: gathers and in-place cuts."""

from __future__ import annotations

from array import array

import numpy as np

# Rows gathered per numpy pass in keep_in_place: small temporaries reused from the heap rather
# than a fresh mapping a column, faulted in page by page at every compaction.
KEEP_CHUNK = 4096


def keep_in_place(column: array, rows: np.ndarray) -> None:
    """Shift a typed column's values at `rows` (ascending, distinct) down to its front and cut
    the rest, KEEP_CHUNK rows a pass: a pass writes positions below every row a later pass
    reads (rows[j] >= j), so no pass overwrites a value still to be moved."""
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
