"""Maps keyed by a group's memory ids, held as one array instead of a dict of Python ints."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from typing import cast

import numpy as np

_ABSENT = -1  # values are rows or agent ids: never negative
BATCH_AT = 16  # keys in a batch call from which numpy passes beat one call a key


class IdMap(MutableMapping[int, int]):
    """Memory id → non-negative int in an array over the ids in use; stragglers in a small dict."""

    __slots__ = ("_base", "_deletes", "_live", "_outliers", "_values")

    def __init__(self, items: Iterable[tuple[int, int]] = ()) -> None:
        self._base = 0
        self._values = array("q")
        self._live = 0  # entries in the array
        self._deletes = 0  # since the last trim of the front
        self._outliers: dict[int, int] = {}  # ids below the array's span
        for key, value in items:
            self[key] = value

    def __getitem__(self, key: int) -> int:
        at = key - self._base
        if 0 <= at < len(self._values):
            value = self._values[at]
            if value != _ABSENT:
                return value
        elif self._outliers and key in self._outliers:
            return self._outliers[key]
        raise KeyError(key)

    def get(self, key: int, default: int | None = None) -> int | None:  # type: ignore[override]
        at = key - self._base
        if 0 <= at < len(self._values):
            value = self._values[at]
            return default if value == _ABSENT else value
        return self._outliers.get(key, default) if self._outliers else default

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, int):
            return False
        at = key - self._base
        if 0 <= at < len(self._values):
            return self._values[at] != _ABSENT
        return bool(self._outliers) and key in self._outliers

    def __setitem__(self, key: int, value: int) -> None:
        if value < 0:
            raise ValueError(f"IdMap values must be >= 0, got {value} for id {key}")
        values = self._values
        if not values:
            self._base = key
        at = key - self._base
        if at < 0:
            if key in self._outliers or -at > 4 * len(values) + 65_536:
                self._outliers[key] = value
                return
            grow = max(-at, len(values))  # doubling: a restore in agent order stays linear
            values[:0] = array("q", [_ABSENT]) * grow
            self._base -= grow
            at += grow
            self._absorb_outliers()
        elif at >= len(values):
            values.extend(array("q", [_ABSENT]) * max(at + 1 - len(values), len(values) // 8))
        if values[at] == _ABSENT:
            self._live += 1
        values[at] = value

    def set_many(self, keys: Sequence[int], values: Sequence[int]) -> None:
        """`self[k] = v` for each pair, in numpy when keys ascend within or above the span."""
        if len(keys) < BATCH_AT or not self._values or len(keys) != len(values):
            slots, base = self._values, self._base
            for key, value in zip(keys, values, strict=True):
                at = key - base
                if 0 <= at < len(slots) and value >= 0:  # inside the span: `self[key] = v`
                    if slots[at] == _ABSENT:
                        self._live += 1
                    slots[at] = value
                else:  # growing, below the span, a bad value: the full path
                    self[key] = value
                    slots, base = self._values, self._base
            return
        where = np.array(keys, np.int64) - self._base
        new = np.array(values, np.int64)
        if where[0] < 0 or new.min() < 0 or not (where[1:] > where[:-1]).all():  # rare
            for key, value in zip(keys, values, strict=True):
                self[key] = value
            return
        end = int(where[-1]) + 1
        if end > len(self._values):
            grow = max(end - len(self._values), len(self._values) // 8)
            self._values.extend(array("q", [_ABSENT]) * grow)
        cells = np.frombuffer(self._values, np.int64)
        self._live += int(np.count_nonzero(cells[where] == _ABSENT))
        cells[where] = new

    def get_many(self, keys: Sequence[int]) -> list[int]:
        """`self[k]` for each key (KeyError for one that is absent)."""
        if len(keys) < BATCH_AT:
            return [self[key] for key in keys]
        found = self.get_array(keys)
        if (found == _ABSENT).any():
            return [self[key] for key in keys]  # raises for the first absent one
        return found.tolist()

    def get_array(self, keys: Sequence[int]) -> np.ndarray:
        """`self.get(k, -1)` for each key, as an int64 array (numpy passes: a batch's hits)."""
        wanted = np.array(keys, np.int64)
        found = np.full(len(wanted), _ABSENT, np.int64)
        inside = np.zeros(len(wanted), bool)
        if self._values:
            at = wanted - self._base
            inside = (at >= 0) & (at < len(self._values))
            found[inside] = np.frombuffer(self._values, np.int64)[at[inside]]
        if self._outliers:
            outliers = self._outliers
            for j in np.flatnonzero(~inside).tolist():
                found[j] = outliers.get(int(wanted[j]), _ABSENT)
        return found

    def among(self, keys: Sequence[int]) -> list[int]:
        """Those of `keys` in the map, in their order (one numpy pass for a batch)."""
        if len(keys) < BATCH_AT:
            return [key for key in keys if key in self]
        found = self.contains_array(np.array(keys, np.int64))
        return [key for key, there in zip(keys, found.tolist(), strict=True) if there]

    def delete_many(self, keys: Sequence[int]) -> None:
        """`del self[k]` for each key (KeyError for one that is absent)."""
        values = self._values
        if len(keys) < BATCH_AT or not values:
            for key in keys:
                del self[key]
            return
        at = np.array(keys, np.int64) - self._base
        distinct = (at[1:] > at[:-1]).all() or len(np.unique(at)) == len(at)  # ascending: yes
        slots = np.frombuffer(values, np.int64)
        if at.min() < 0 or at.max() >= len(values) or not distinct or (slots[at] == _ABSENT).any():
            del slots
            for key in keys:
                del self[key]  # raises for the first absent one
            return
        slots[at] = _ABSENT
        del slots  # the buffer is no longer exported: the array may be cut
        self._deleted(len(at))

    def __delitem__(self, key: int) -> None:
        at = key - self._base
        values = self._values
        if not (0 <= at < len(values)) or values[at] == _ABSENT:
            del self._outliers[key]  # KeyError if absent there too
            return
        values[at] = _ABSENT
        self._deleted(1)

    def _deleted(self, n: int) -> None:
        """Count `n` deleted entries; reset when empty, trim the front once a quarter is deleted."""
        self._live -= n
        self._deletes += n
        if not self._live:
            self._values, self._base, self._deletes = array("q"), 0, 0
        elif self._deletes * 4 >= len(self._values):
            self._trim_front()

    def _absorb_outliers(self) -> None:
        """Move the outliers the array's span now covers into it."""
        base, values = self._base, self._values
        for key in [k for k in self._outliers if k >= base]:
            values[key - base] = self._outliers.pop(key)
            self._live += 1

    def _trim_front(self) -> None:
        """Drop the leading empty slots; a sparse front half's live ids go to the outliers."""
        self._deletes = 0
        present = self._present()
        half = len(self._values) // 2
        early = int(np.searchsorted(present, half))
        if early and early * 32 < half:  # a sparse front half: its stragglers move out
            for at in present[:early].tolist():
                self._outliers[self._base + at] = self._values[at]
            self._live -= early
            present = present[early:]
        if not len(present):  # every live id was a straggler
            self._values, self._base = array("q"), 0
            return
        cut = int(present[0])
        del present
        del self._values[:cut]
        self._base += cut

    def __len__(self) -> int:
        return self._live + len(self._outliers)

    def _present(self) -> np.ndarray:
        return np.flatnonzero(np.frombuffer(self._values, np.int64) != _ABSENT)

    def __iter__(self) -> Iterator[int]:
        """Ids in ascending order (a group allocates them in order, so: insertion order)."""
        ids = (self._present() + self._base).tolist()
        return iter(sorted(self._outliers) + ids if self._outliers else ids)

    def values(self) -> list[int]:  # type: ignore[override]
        """Values in ascending id order."""
        return self.value_array().tolist()

    def items(self) -> list[tuple[int, int]]:  # type: ignore[override]
        """(id, value) pairs in ascending id order."""
        at = self._present()
        values = np.frombuffer(self._values, np.int64)[at].tolist()
        pairs = list(zip((at + self._base).tolist(), values, strict=True))
        return sorted(self._outliers.items()) + pairs if self._outliers else pairs

    def value_array(self) -> np.ndarray:
        """Every value (ascending id order), as one int64 array: no Python int or pair a value."""
        values = np.frombuffer(self._values, np.int64)[self._present()]
        outliers = [v for _, v in sorted(self._outliers.items())]
        return np.concatenate((np.array(outliers, np.int64), values)) if outliers else values

    def contains_array(self, keys: np.ndarray) -> np.ndarray:
        """Whether each of `keys` (int64) is in the map, as a bool array (one numpy pass)."""
        values = np.frombuffer(self._values, np.int64)
        at = keys - self._base
        inside = (at >= 0) & (at < len(values))
        found = np.zeros(len(keys), bool)
        found[inside] = values[at[inside]] != _ABSENT
        if self._outliers:
            found |= np.isin(keys, np.fromiter(self._outliers, np.int64))
        return found

    def remap_values(self, new_of_old: np.ndarray) -> None:
        """Replace every value v by new_of_old[v] (hot rows renumbered by a compaction)."""
        values = np.frombuffer(self._values, np.int64)
        at = self._present()
        values[at] = new_of_old[values[at]]
        for key, value in self._outliers.items():
            self._outliers[key] = int(new_of_old[value])

    def nbytes(self) -> int:
        """Bytes of the array (the span, not the entries)."""
        return self._values.itemsize * len(self._values)


class RowQueue(array):
    """A hot agent's rows, oldest first: an `array` with the `deque` calls the store uses."""

    __slots__ = ()

    def __new__(cls, rows: Iterable[int] = ()) -> RowQueue:
        return cast("RowQueue", super().__new__(cls, "q", rows))  # typeshed: array[int]

    def popleft(self) -> int:
        return self.pop(0)
