"""Search hits from the hot columns, built for a whole batch of searches.

`HotStore.hit` builds one hit through pydantic's trusted construction; a search returns
several hits and a tick runs a search per agent, so here each hit's state is written directly
from `HotStore.fields` (no model machinery per hit; tests compare the two).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.memory.records import MemoryHit

if TYPE_CHECKING:
    from societas.memory.hot_store import HotStore

_new = MemoryHit.__new__
_set = object.__setattr__
# Every field is given, so every hit has the same "fields set"; one set serves them all (the
# model is frozen, and pydantic copies the set before changing it in `model_copy`).
_ALL_SET = set(MemoryHit.model_fields)


class HotHits:
    """Builds `MemoryHit`s of hot memories; valid while the hot columns are not changed."""

    def __init__(self, hot: HotStore) -> None:
        self.fields = hot.fields

    def __call__(self, memory_id: int, score: float) -> MemoryHit:
        """The hot memory `memory_id` as a hit (as `HotStore.hit` makes it)."""
        fields = self.fields(memory_id)
        fields["score"] = score
        fields["tier"] = "hot"
        hit = _new(MemoryHit)
        _set(hit, "__dict__", fields)
        _set(hit, "__pydantic_fields_set__", _ALL_SET)
        _set(hit, "__pydantic_extra__", None)
        _set(hit, "__pydantic_private__", None)
        return hit
