"""Sparse BM25 through fastembed, from the stop-word folder shipped with societas."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from societas.memory.embedding.base import SparseVector, TextVectors


class Bm25Embedder:
    """fastembed's `Qdrant/bm25` loaded offline; pair it with Qdrant's IDF modifier."""

    has_sparse = True
    dense_size: int | None = None

    def __init__(self, model_dir: Path, batch_size: int = 256) -> None:
        if not (Path(model_dir) / "english.txt").is_file():
            raise FileNotFoundError(f"bm25_path {str(model_dir)!r} has no english.txt stop words")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from fastembed import SparseTextEmbedding

        self.name = "bm25"
        self._batch_size = batch_size
        self._model = SparseTextEmbedding("Qdrant/bm25", specific_model_path=str(model_dir))

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]:
        return [
            TextVectors(sparse=SparseVector(tuple(e.indices.tolist()), tuple(e.values.tolist())))
            for e in self._model.embed(list(texts), batch_size=self._batch_size)
        ]

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        return [
            TextVectors(sparse=SparseVector(tuple(e.indices.tolist()), tuple(e.values.tolist())))
            for e in self._model.query_embed(list(texts))
        ]
