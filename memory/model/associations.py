"""Typed, weighted associations between an agent's memories, for spreading activation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

import pyarrow as pa
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from societas.memory.model.records import MemoryRecord

AssociationType = Literal["similar", "causal", "temporal", "contradictory"]
SCHEMA = pa.schema(
    [
        ("source", pa.int64()),
        ("target", pa.int64()),
        ("type", pa.string()),
        ("strength", pa.float64()),
    ]
)


class Association(BaseModel, frozen=True, extra="forbid"):
    """One typed, weighted edge between two memories of the same agent."""

    source: int
    target: int
    type: AssociationType
    strength: float = Field(1.0, gt=0.0, le=1.0, allow_inf_nan=False)


class AssociationIndex:
    """Adjacency of typed associations: id → {neighbour: (type, strength)} (both ends)."""

    def __init__(self) -> None:
        self.edges: dict[int, dict[int, tuple[AssociationType, float]]] = {}
        self._by_pair: dict[tuple[int, int], Association] = {}  # (low, high id): latest kept

    def __len__(self) -> int:
        return len(self._by_pair)

    @property
    def directed(self) -> list[Association]:
        """Each linked pair's association as added (for checkpoints), oldest change first."""
        return list(self._by_pair.values())

    def add_many(self, associations: Iterable[Association]) -> None:
        """Add edges; a repeated pair keeps its strongest association."""
        for a in associations:
            if a.source == a.target:
                raise ValueError(f"an association needs two memories, got {a.source} twice")
            current = self.edges.get(a.source, {}).get(a.target)
            if current is not None and current[1] >= a.strength:
                continue
            self.edges.setdefault(a.source, {})[a.target] = (a.type, a.strength)
            self.edges.setdefault(a.target, {})[a.source] = (a.type, a.strength)
            pair = (a.source, a.target) if a.source < a.target else (a.target, a.source)
            self._by_pair.pop(pair, None)  # a stronger one replaces it, as the newest
            self._by_pair[pair] = a

    def neighbours(self, memory_id: int) -> list[tuple[int, AssociationType, float]]:
        return [(n, t, s) for n, (t, s) in sorted(self.edges.get(memory_id, {}).items())]

    def drop(self, memory_ids: Iterable[int]) -> None:
        """Memories gone for good (expired, forgotten) take their edges along."""
        gone = set(memory_ids) & self.edges.keys()
        if not gone:
            return
        for memory_id in gone:
            for other in self.edges.pop(memory_id):
                self.edges.get(other, {}).pop(memory_id, None)
        self._by_pair = {pair: a for pair, a in self._by_pair.items() if gone.isdisjoint(pair)}

    def to_table(self) -> pa.Table:
        rows = sorted(self.directed, key=lambda a: (a.source, a.target))
        return pa.Table.from_pylist([a.model_dump() for a in rows], schema=SCHEMA)


def weighted_neighbours(
    record: MemoryRecord, index: AssociationIndex, weights: Mapping[AssociationType, float]
) -> dict[int, float]:
    """Each neighbour's share of activation (best edge; untyped links are causal, strength 1)."""
    causal = weights.get("causal", 1.0)
    out = {n: causal for n in (*record.cognition_ids, *record.evidence_ids)}
    for neighbour, kind, strength in index.neighbours(record.id):
        share = weights.get(kind, 0.0) * strength
        if share > out.get(neighbour, 0.0):
            out[neighbour] = share
    return out
