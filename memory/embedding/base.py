"""The embedder interface: batches of texts in, dense and/or sparse vectors out."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class SparseVector:
    """Term ids and weights (BM25 term frequencies; Qdrant applies IDF) as compact arrays."""

    indices: array
    values: array

    @classmethod
    def of(cls, indices: Iterable[int], values: Iterable[float]) -> SparseVector:
        return cls(array("I", indices), array("f", values))

    def is_empty(self) -> bool:
        return not self.indices

    def packed(self) -> bytes:
        """Term ids, then weights, as one bytes (4 + 4 bytes a term) for caches and indexes."""
        indices = self.indices if self.indices.typecode == "I" else array("I", self.indices)
        values = self.values if self.values.typecode == "f" else array("f", self.values)
        return indices.tobytes() + values.tobytes()

    @classmethod
    def unpacked(cls, packed: bytes) -> SparseVector:
        """The vector `packed` made (equal arrays, new objects)."""
        half = len(packed) // 2
        indices, values = array("I"), array("f")
        indices.frombytes(packed[:half])
        values.frombytes(packed[half:])
        return cls(indices, values)


def packed_views(packed: bytes) -> tuple[memoryview[int], memoryview[float]]:
    """Term ids and weights of a `SparseVector.packed` as views (no copy), for scoring."""
    view, half = memoryview(packed), len(packed) // 2
    return view[:half].cast("I"), view[half:].cast("f")


@dataclass(frozen=True, slots=True)
class TextVectors:
    """What one text embeds to: a dense vector, a sparse vector, or both (hybrid)."""

    dense: tuple[float, ...] | None = None
    sparse: SparseVector | None = None


def sparse_text_vectors(indices: array, values: array) -> TextVectors:
    """The vectors of a sparse-only embedder's text."""
    return TextVectors(sparse=SparseVector(indices, values))


@runtime_checkable
class Embedder(Protocol):
    """Embeds many texts per call; documents and queries may embed differently (BM25)."""

    name: str
    dense_size: int | None
    has_sparse: bool

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]: ...

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]: ...
