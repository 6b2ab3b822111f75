"""A mapping keyed by (agent id, attribute), stored as one `KVColumn` per attribute."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import TypeVar

from societas.memory.store.kv_columns import AgentSlots, KVColumn

V = TypeVar("V")
Slot = tuple[int, str]


class SlotMap(MutableMapping[Slot, V]):
    """`{(agent_id, key): value}` as `{key: KVColumn}`; iteration by key, then by agent slot."""

    __slots__ = ("_by_key", "_column", "_count", "slots")

    def __init__(self, slots: AgentSlots | None = None, column: type[KVColumn] = KVColumn) -> None:
        self.slots = AgentSlots() if slots is None else slots
        self._column = column  # IntColumn for ids: 8 bytes a value
        self._by_key: dict[str, KVColumn] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, slot: Slot) -> V:
        column = self._by_key.get(slot[1])
        if column is None:
            raise KeyError(slot)
        return column[slot[0]]

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
            column = self._by_key[slot[1]] = self._column(self.slots)
        before = len(column)
        column[slot[0]] = value
        self._count += len(column) - before

    def __delitem__(self, slot: Slot) -> None:
        column = self._by_key.get(slot[1])
        if column is None:
            raise KeyError(slot)
        del column[slot[0]]
        self._count -= 1

    def columns(self) -> dict[str, KVColumn]:
        """The attribute → column map itself (read it, do not change it)."""
        return self._by_key

    def clear(self) -> None:
        self._by_key.clear()
        self._count = 0

    def __iter__(self) -> Iterator[Slot]:
        for key, column in self._by_key.items():
            for agent_id in column:
                yield (agent_id, key)
