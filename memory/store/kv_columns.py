"""A group's KV attribute columns: one list of values per attribute over shared agent slots."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, MutableMapping, MutableSequence
from itertools import repeat
from typing import Any

_ABSENT: Any = object()  # a slot with no value for this attribute (not None: None is a value)
_NO_INT = -1  # an IntColumn slot with no value
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

    def __init__(self, slots: AgentSlots) -> None:
        self.slots = slots
        self.cells: MutableSequence[Any] = []  # slot → value
        self._count = 0

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
        return default if value is _ABSENT else value

    def __contains__(self, agent_id: object) -> bool:
        return self.get(agent_id, _ABSENT) is not _ABSENT  # type: ignore[arg-type]

    def __setitem__(self, agent_id: int, value: Any) -> None:
        slot = self.slots.slot(agent_id)
        values = self.cells
        if slot >= len(values):
            values.extend([_ABSENT] * (slot + 1 - len(values)))
        if values[slot] is _ABSENT:
            self._count += 1
        values[slot] = value

    def __delitem__(self, agent_id: int) -> None:
        slot = self.slots.slot_of.get(agent_id)
        if slot is None or slot >= len(self.cells) or self.cells[slot] is _ABSENT:
            raise KeyError(agent_id)
        self.cells[slot] = _ABSENT
        self._count -= 1

    def __iter__(self) -> Iterator[int]:
        values, n = self.cells, len(self.cells)
        return (a for a, s in self.slots.slot_of.items() if s < n and values[s] is not _ABSENT)

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"KVColumn({dict(self.items())!r})"


class IntColumn(KVColumn):
    """A column of non-negative integers (engine point ids) in one `array('q')`."""

    __slots__ = ()

    def __init__(self, slots: AgentSlots) -> None:
        super().__init__(slots)
        self.cells = array("q")

    def get(self, agent_id: int, default: Any = None) -> Any:
        slot = self.slots.slot_of.get(agent_id)
        if slot is None or slot >= len(self.cells):
            return default
        value = self.cells[slot]
        return default if value < 0 else value

    def __setitem__(self, agent_id: int, value: int) -> None:
        if value < 0:
            raise ValueError(f"IntColumn holds non-negative integers, got {value}")
        slot = self.slots.slot(agent_id)
        values = self.cells
        if slot >= len(values):
            values.extend(repeat(_NO_INT, slot + 1 - len(values)))
        if values[slot] < 0:
            self._count += 1
        values[slot] = value

    def __delitem__(self, agent_id: int) -> None:
        slot = self.slots.slot_of.get(agent_id)
        if slot is None or slot >= len(self.cells) or self.cells[slot] < 0:
            raise KeyError(agent_id)
        self.cells[slot] = _NO_INT
        self._count -= 1

    def __iter__(self) -> Iterator[int]:
        values, n = self.cells, len(self.cells)
        return (a for a, s in self.slots.slot_of.items() if s < n and values[s] >= 0)
