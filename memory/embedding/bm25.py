"""Sparse BM25: fastembed's `Qdrant/bm25` model, from the stop-word folder shipped with societas.

Two engines compute the same vectors (tested to be identical): `qdrant-edge` (default), the
Rust implementation of that model in qdrant-edge-py, ~6x faster; and `fastembed` itself.
Both take the stop words from `english.txt` in the folder; there are no weights to load.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from societas.memory.embedding.base import SparseVector, TextVectors


class Bm25Embedder:
    """BM25 term-frequency vectors; pair them with Qdrant's IDF modifier."""

    has_sparse = True
    dense_size: int | None = None

    def __init__(self, model_dir: Path, batch_size: int = 256, engine: str = "qdrant-edge") -> None:
        stopwords_file = Path(model_dir) / "english.txt"
        if not stopwords_file.is_file():
            raise FileNotFoundError(f"bm25_path {str(model_dir)!r} has no english.txt stop words")
        if engine not in ("qdrant-edge", "fastembed"):
            raise ValueError(f"bm25_engine must be 'qdrant-edge' or 'fastembed', got {engine!r}")
        self.name = "bm25"
        self.engine = engine
        self._batch_size = batch_size
        if engine == "qdrant-edge":
            import qdrant_edge as qe

            stopwords = set(stopwords_file.read_text().split())
            self._edge = qe.Bm25(
                qe.Bm25Config(language="english", stopwords=qe.StopwordsSet(custom=stopwords))
            )
        else:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from fastembed import SparseTextEmbedding

            self._model = SparseTextEmbedding("Qdrant/bm25", specific_model_path=str(model_dir))

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]:
        if self.engine == "qdrant-edge":
            embed = self._edge.embed_document
            return [TextVectors(sparse=_of(embed(text))) for text in texts]
        return [
            TextVectors(sparse=SparseVector.of(e.indices, e.values))
            for e in self._model.embed(list(texts), batch_size=self._batch_size)
        ]

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        if self.engine == "qdrant-edge":
            embed = self._edge.embed_query
            return [TextVectors(sparse=_of(embed(text))) for text in texts]
        return [
            TextVectors(sparse=SparseVector.of(e.indices, e.values))
            for e in self._model.query_embed(list(texts))
        ]


def _of(vector) -> SparseVector:
    return SparseVector.of(vector.indices, vector.values)
