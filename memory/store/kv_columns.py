"""A group's KV attribute columns over shared agent slots, and maps keyed by (agent, key)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, MutableMapping, MutableSequence
from itertools import repeat
from typing import Any, TypeVar

_ABSENT: Any = object()  # a slot with no value for this attribute (not None: None is a value)
NO_VALUE: Any = _ABSENT  # what `KVColumn.cells` holds at a slot with no value (fast readers)


class AgentSlots:
    """Agent id → slot, shared by every column of a group (slots are never reused)."""

    __slots__ = ("slot_of",)

    def __init__(self) -> None:
        self.slot_of: dict[int, int] = {}

    def slot(self, agent_id: int) -> int:
        """The slot of `agent_id`, given a new one on first sight."""
        found = self.slot_of.get(agent_id)
        if found is None:
            found = self.slot_of[agent_id] = len(self.slot_of)
        return found


class KVColumn(MutableMapping[int, Any]):
    """One attribute's values by agent id (a mapping; absent: no value stored)."""

    __slots__ = ("_count", "cells", "slots")
    _FILL: Any = _ABSENT  # what a slot with no value holds

    def __init__(self, slots: AgentSlots) -> None:
        self.slots = slots
        self.cells: MutableSequence[Any] = []  # slot → value
        self._count = 0

    @staticmethod
    def _empty(value: Any) -> bool:
        return value is _ABSENT

    def __getitem__(self, agent_id: int) -> Any:
        value = self.get(agent_id, _ABSENT)
        if value is _ABSENT:
            raise KeyError(agent_id)
        return value

    def get(self, agent_id: int, default: Any = None) -> Any:
        slot = self.slots.slot_of.get(agent_id)
        if slot is None or slot >= len(self.cells):
            return default
        value = self.cells[slot]
        return default if self._empty(value) else value

    def __contains__(self, agent_id: object) -> bool:
        return self.get(agent_id, _ABSENT) is not _ABSENT  # type: ignore[arg-type]

    def __setitem__(self, agent_id: int, value: Any) -> None:
        slot = self.slots.slot(agent_id)
        values = self.cells
        if slot >= len(values):
            values.extend(repeat(self._FILL, slot + 1 - len(values)))
        if self._empty(values[slot]):
            self._count += 1
        values[slot] = value

    def __delitem__(self, agent_id: int) -> None:
        slot = self.slots.slot_of.get(agent_id)
        if slot is None or slot >= len(self.cells) or self._empty(self.cells[slot]):
            raise KeyError(agent_id)
        self.cells[slot] = self._FILL
        self._count -= 1

    def __iter__(self) -> Iterator[int]:
        values, n, empty = self.cells, len(self.cells), self._empty
        return (a for a, s in self.slots.slot_of.items() if s < n and not empty(values[s]))

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"KVColumn({dict(self.items())!r})"


class IntColumn(KVColumn):
    """A column of non-negative integers (engine point ids) in one `array('q')`."""

    __slots__ = ()
    _FILL = -1

    def __init__(self, slots: AgentSlots) -> None:
        super().__init__(slots)
        self.cells = array("q")

    @staticmethod
    def _empty(value: Any) -> bool:
        return value < 0

    def __setitem__(self, agent_id: int, value: int) -> None:
        if value < 0:
            raise ValueError(f"IntColumn holds non-negative integers, got {value}")
        super().__setitem__(agent_id, value)


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
