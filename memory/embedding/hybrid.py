"""Dense + sparse in one embedder, so the store can fuse both rankings (RRF)."""

from __future__ import annotations

from collections.abc import Sequence

from societas.memory.embedding.base import Embedder, TextVectors


class HybridEmbedder:
    """Runs a dense and a sparse embedder on the same batch and pairs their outputs."""

    has_sparse = True

    def __init__(self, dense: Embedder, sparse: Embedder) -> None:
        self.name = f"{dense.name}+{sparse.name}"
        self.dense_size = dense.dense_size
        self._dense, self._sparse = dense, sparse

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]:
        dense = await self._dense.embed_documents(texts)
        sparse = await self._sparse.embed_documents(texts)
        return [TextVectors(d.dense, s.sparse) for d, s in zip(dense, sparse, strict=True)]

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        dense = await self._dense.embed_queries(texts)
        sparse = await self._sparse.embed_queries(texts)
        return [TextVectors(d.dense, s.sparse) for d, s in zip(dense, sparse, strict=True)]
