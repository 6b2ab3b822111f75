"""A column of few distinct strings (topics, places, layers, types) as small integer codes."""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from societas.memory.store.column_ops import KEEP_CHUNK, keep_in_place

_NARROW_MAX = 0xFFFF
_GATHER_AT = 128  # rows from which extend_rows maps codes in numpy


def _dtype(codes: array) -> type[np.unsignedinteger]:
    """The numpy type of a codes array (2-byte codes, or 4 once widened)."""
    return np.uint16 if codes.typecode == "H" else np.uint32


class CodeColumn:
    """A list-like column of `str | None` values stored as codes into a shared vocabulary."""

    __slots__ = ("_code_of", "codes", "values")

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self.values: list[str | None] = []  # code → value
        self._code_of: dict[str | None, int] = {}
        self.codes = array("H")
        self.extend(values)

    def _code(self, value: str | None) -> int:
        code = self._code_of.get(value)
        if code is None:
            code = self._code_of[value] = len(self.values)
            self.values.append(value if value is None else sys.intern(value))
            if code > _NARROW_MAX and self.codes.typecode == "H":
                self.codes = array("I", self.codes)
        return code

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, row: int) -> str | None:
        return self.values[self.codes[row]]

    def __setitem__(self, row: int, value: str | None) -> None:
        self.codes[row] = self._code(value)  # coded first: a new value may widen the codes

    def __iter__(self) -> Iterator[str | None]:
        values = self.values
        return (values[c] for c in self.codes)

    def append(self, value: str | None) -> None:
        code = self._code(value)
        self.codes.append(code)

    def extend(self, values: Iterable[str | None]) -> None:
        code_of, codes = self._code_of, self.codes
        for value in values:
            code = code_of.get(value)
            if code is None:  # a new value (which may widen the codes: read them again)
                code = self._code(value)
                codes = self.codes
            codes.append(code)

    def extend_rows(self, src: CodeColumn, rows: Sequence[int]) -> None:
        """Append `src`'s values at `rows`, coding each distinct value once."""
        if len(rows) >= _GATHER_AT and len(src.codes):
            theirs = np.frombuffer(src.codes, _dtype(src.codes))[np.array(rows, np.intp)]
            counts = np.bincount(theirs)  # which codes occur (np.unique sorts: slower)
            to_mine = np.zeros(len(counts), np.uint32)
            for code in np.flatnonzero(counts).tolist():  # may widen this column's codes
                to_mine[code] = self._code(src.values[code])
            self.codes.frombytes(to_mine[theirs].astype(_dtype(self.codes)).tobytes())
            return
        mine: dict[int, int] = {}  # src code → this column's code, for the values met
        src_codes, src_values, codes = src.codes, src.values, self.codes
        for row in rows:
            src_code = src_codes[row]
            known = mine.get(src_code)
            if known is None:
                known = mine[src_code] = self._code(src_values[src_code])
                codes = self.codes  # widened past 65,535 values: read them again
            codes.append(known)

    def equals(self, rows: np.ndarray, value: str | None) -> np.ndarray:
        """Whether each of `rows` holds `value` (a vectorised filter: no row is decoded)."""
        code = self._code_of.get(value)
        if code is None or not len(self.codes):
            return np.zeros(len(rows), bool)
        return np.frombuffer(self.codes, _dtype(self.codes))[rows] == code

    def keep_rows(self, rows: np.ndarray) -> None:
        """Keep only `rows` (ascending, distinct) in place; values no row holds are let go."""
        codes = np.frombuffer(self.codes, _dtype(self.codes))
        used = np.zeros(len(self.values), bool)
        for start in range(0, len(rows), KEEP_CHUNK):
            used[codes[rows[start : start + KEEP_CHUNK]]] = True
        del codes  # the buffer is no longer exported: the array may resize
        keep_in_place(self.codes, rows)
        if used.all():  # the usual case: every value still held, the codes stay as they are
            return
        kept = np.flatnonzero(used)
        new_code = np.zeros(len(self.values), np.uint32)
        new_code[kept] = np.arange(len(kept), dtype=np.uint32)
        self.values = [self.values[code] for code in kept.tolist()]
        self._code_of = {value: code for code, value in enumerate(self.values)}
        typecode = "H" if len(self.values) <= _NARROW_MAX + 1 else "I"
        recoded = new_code[np.frombuffer(self.codes, _dtype(self.codes))]
        self.codes = array(typecode, recoded.astype(_dtype(array(typecode))).tobytes())
