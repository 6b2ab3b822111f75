"""Texts of the hot tier as one UTF-8 buffer and end offsets, not a Python string per memory."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

import numpy as np

from societas.memory.store.column_ops import KEEP_CHUNK

_ANY = "surrogatepass"  # any str round-trips, lone surrogates from a model's JSON included


class TextColumn:
    """A list-like column of texts; a dropped row keeps its bytes until `keep_rows` compacts."""

    __slots__ = ("_data", "_ends")

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._data = bytearray()
        self._ends = array("q")
        self.extend(texts)

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, row: int) -> str:
        ends = self._ends
        if row < 0:
            row += len(ends)
        end = ends[row]  # IndexError past the end, as a list
        start = ends[row - 1] if row else 0
        return self._data[start:end].decode("utf-8", _ANY)

    def take(self, rows: Iterable[int]) -> list[str]:
        """The texts at `rows` (non-negative), in that order."""
        data, ends = self._data, self._ends
        return [data[ends[row - 1] if row else 0 : ends[row]].decode("utf-8", _ANY) for row in rows]

    def __iter__(self) -> Iterator[str]:
        return (self[r] for r in range(len(self)))

    def append(self, text: str) -> None:
        self._data += text.encode("utf-8", _ANY)
        self._ends.append(len(self._data))

    def extend(self, texts: Iterable[str]) -> None:
        data, ends = self._data, self._ends
        for text in texts:
            data += text.encode("utf-8", _ANY)
            ends.append(len(data))

    def extend_rows(self, src: TextColumn, rows: Iterable[int]) -> None:
        """Append `src`'s texts at `rows`, in that order (bytes copied, nothing decoded)."""
        data, ends, out_data, out_ends = src._data, src._ends, self._data, self._ends
        for row in rows:
            out_data += data[ends[row - 1] if row else 0 : ends[row]]
            out_ends.append(len(out_data))

    def keep_rows(self, rows: np.ndarray) -> None:
        """Keep only `rows` (ascending, distinct), moving texts forward in place, chunk by chunk."""
        n = len(rows)
        if not n:
            self._data, self._ends = bytearray(), array("q")
            return
        ends = np.frombuffer(self._ends, np.int64)
        kept = 0  # bytes kept so far: where the next chunk's first text goes
        with memoryview(self._data) as buffer:
            for at in range(0, n, KEEP_CHUNK):
                chunk = rows[at : at + KEEP_CHUNK]
                stops = ends[chunk]
                starts = np.where(chunk > 0, ends[chunk - 1], 0)
                new_ends = kept + np.cumsum(stops - starts)
                first = np.flatnonzero(np.r_[True, starts[1:] != stops[:-1]])  # runs' first rows
                last = np.r_[first[1:], len(chunk)] - 1
                moves = zip(
                    starts[first].tolist(),
                    stops[last].tolist(),
                    (new_ends[first] - (stops[first] - starts[first])).tolist(),
                    strict=True,
                )
                for start, stop, to in moves:  # to <= start: never over a text still to move
                    if start != to:
                        buffer[to : to + stop - start] = buffer[start:stop]  # memmove
                ends[at : at + len(chunk)] = new_ends
                kept = int(new_ends[-1])
        del ends  # the offsets are no longer exported: they may resize
        del self._data[kept:]
        del self._ends[n:]

    def nbytes(self) -> int:
        """UTF-8 bytes of the live texts plus the offsets."""
        return len(self._data) + self._ends.itemsize * len(self._ends)
