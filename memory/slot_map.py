"""A mapping keyed by (agent id, attribute) stored as one dict per attribute.

A group keeps a handful of values per agent and embedded attribute (its engine point id, its
sparse vector, its text). Keyed by `(agent_id, key)` tuples each entry also kept a 64-byte
tuple alive; nested by attribute, the only per-entry objects are the dict slot and the value.
The tuple interface stays: callers still write `slots[(agent, key)]`.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import TypeVar

V = TypeVar("V")
Slot = tuple[int, str]


class SlotMap(MutableMapping[Slot, V]):
    """`{(agent_id, key): value}` as `{key: {agent_id: value}}`; iteration by key, then by
    agent in insertion order."""

    __slots__ = ("_by_key", "_count")

    def __init__(self) -> None:
        self._by_key: dict[str, dict[int, V]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, slot: Slot) -> V:
        return self._by_key[slot[1]][slot[0]]

    def get(self, slot: Slot, default: V | None = None) -> V | None:  # type: ignore[override]
        column = self._by_key.get(slot[1])
        return default if column is None else column.get(slot[0], default)

    def __contains__(self, slot: object) -> bool:
        if not isinstance(slot, tuple) or len(slot) != 2:
            return False
        column = self._by_key.get(slot[1])
        return column is not None and slot[0] in column

    def __setitem__(self, slot: Slot, value: V) -> None:
        column = self._by_key.get(slot[1])
        if column is None:
            column = self._by_key[slot[1]] = {}
        if slot[0] not in column:
            self._count += 1
        column[slot[0]] = value

    def __delitem__(self, slot: Slot) -> None:
        del self._by_key[slot[1]][slot[0]]
        self._count -= 1

    def clear(self) -> None:
        self._by_key.clear()
        self._count = 0

    def __iter__(self) -> Iterator[Slot]:
        for key, column in self._by_key.items():
            for agent_id in column:
                yield (agent_id, key)
