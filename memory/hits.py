"""Search hits from the hot columns, built for a whole batch of searches.

`HotStore.hit` builds one hit through a keyword `dict(...)` of its fields and a model; a
search returns several hits and a tick runs a search per agent, so here the columns are read
once per batch and each hit's state written directly (~1.5 µs a hit instead of ~4). The
fields are `HotStore.fields`' (tests compare them).
"""

from __future__ import annotations

import math
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
        self.hot = hot
        self.row_of = hot.row_of

    def __call__(self, memory_id: int, score: float) -> MemoryHit:
        """The hot memory `memory_id` as a hit (as `HotStore.hit` makes it)."""
        hot = self.hot
        r = self.row_of[memory_id]
        last = hot.last_accessed[r]
        expires = hot.expires[r]
        fields = {
            "id": memory_id,
            "agent_id": hot.agent_ids[r],
            "text": hot.texts[r],
            "topic": hot.topics[r],
            "day": hot.days[r],
            "t": hot.ts[r],
            "time": hot.times[r],
            "location": hot.locations[r],
            "importance": hot.importances[r],
            "cognition_ids": tuple(hot.cognition_links.get(memory_id, ())),
            "evidence_ids": tuple(hot.evidence.get(memory_id, ())),
            "layer": hot.layers[r],
            "layer_since": hot.layer_since[r],
            "type": hot.types[r],
            "tags": hot.tags.get(memory_id, ()),
            "metadata": hot.metadata.get(memory_id, {}),
            "access_count": hot.access_counts[r],
            "last_accessed": None if math.isnan(last) else last,
            "expires_at": None if math.isinf(expires) else expires,
            "score": score,
            "tier": "hot",
        }
        hit = _new(MemoryHit)
        _set(hit, "__dict__", fields)
        _set(hit, "__pydantic_fields_set__", _ALL_SET)
        _set(hit, "__pydantic_extra__", None)
        _set(hit, "__pydantic_private__", None)
        return hit
