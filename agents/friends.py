"""The social network's friend lists as three arrays, read like a dict of tuples.

Every group process holds the whole population, so the lists are compressed sparse rows
(offsets, friend ids, strengths: 12 bytes a tie) rather than a dict of tuples of Python
objects. Lookups build (friend, tie strength) tuples, so callers read it like a dict.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np


class FriendTable(Mapping[int, tuple[tuple[int, float], ...]]):
    """agent id → ((friend id, strength), ...), sorted by friend id; read-only."""

    __slots__ = ("_ids", "_offsets", "_strengths")

    def __init__(self, friends: Mapping[int, list[tuple[int, float]]], n: int) -> None:
        counts = np.zeros(n + 1, dtype=np.int64)
        for agent, ties in friends.items():
            counts[agent + 1] = len(ties)
        self._offsets = np.cumsum(counts)
        total = int(self._offsets[-1])
        self._ids = np.empty(total, dtype=np.int32 if n < 2**31 else np.int64)
        self._strengths = np.empty(total, dtype=np.float64)
        for agent, ties in friends.items():
            start = int(self._offsets[agent])
            for k, (other, strength) in enumerate(ties):
                self._ids[start + k] = other
                self._strengths[start + k] = strength
        for array in (self._offsets, self._ids, self._strengths):
            array.flags.writeable = False

    def __getitem__(self, agent: int) -> tuple[tuple[int, float], ...]:
        if not isinstance(agent, int | np.integer) or not 0 <= agent < len(self._offsets) - 1:
            raise KeyError(agent)
        a, b = int(self._offsets[agent]), int(self._offsets[agent + 1])
        return tuple(zip(self._ids[a:b].tolist(), self._strengths[a:b].tolist(), strict=True))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __setitem__(self, agent: int, ties: object) -> None:
        raise TypeError("read-only mapping: the population is memoised and shared")

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self)))

    def degree(self, agent: int) -> int:
        """How many ties `agent` has (no tuples built)."""
        return int(self._offsets[agent + 1] - self._offsets[agent])

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self._offsets, self._ids, self._strengths))


def _rebuild(offsets: np.ndarray, ids: np.ndarray, strengths: np.ndarray) -> FriendTable:
    table = FriendTable.__new__(FriendTable)
    table._offsets, table._ids, table._strengths = offsets, ids, strengths
    return table


__all__ = ["FriendTable"]
