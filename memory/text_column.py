"""Texts of the hot tier as one UTF-8 buffer and offsets, not a Python string per memory.

A short `str` costs its text plus ~57 bytes (header and allocator rounding) and is one more
long-lived object among a tick's temporaries, which is how pymalloc's arenas fragment. Here a
group's hot texts are one `bytearray` (large, so glibc maps it apart from the heap) and one
`array` of end offsets: 8 bytes a text besides its UTF-8 bytes. A read decodes the slice
(~0.2 µs); a dropped row keeps its bytes until the hot store compacts its columns.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

_ANY = "surrogatepass"  # any str round-trips, lone surrogates from a model's JSON included


class TextColumn:
    """A list-like column of texts: append/extend, index, take rows (no in-place change: a
    dropped row keeps its bytes, unread, until the owner compacts with `take`)."""

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

    def take(self, rows: Iterable[int]) -> TextColumn:
        """A new column of the given rows, in that order (compaction: bytes copied as they
        are, nothing decoded)."""
        out = TextColumn()
        out.extend_rows(self, rows)
        return out

    def nbytes(self) -> int:
        """UTF-8 bytes of the live texts plus the offsets."""
        return len(self._data) + self._ends.itemsize * len(self._ends)
