"""Embedders: BM25 sparse (default), MiniLM int8 dense, OpenAI-compatible endpoints."""

from __future__ import annotations

from societas.memory.embedding.base import Embedder, SparseVector, TextVectors
from societas.memory.embedding.cache import CachedEmbedder
from societas.memory.embedding.config import EmbeddingConfig, LocalDenseModel, OpenAIEmbeddingConfig


def build_embedder(config: EmbeddingConfig) -> CachedEmbedder:
    """The embedder a config names, behind the de-duplicating cache."""
    from societas.memory.embedding.bm25 import Bm25Embedder
    from societas.memory.embedding.dense import MiniLmEmbedder

    def bm25() -> Embedder:
        args = (config.batch_size, config.bm25_engine, config.bm25_multilingual)
        return Bm25Embedder(config.bm25_path, *args)

    def minilm() -> Embedder:
        return MiniLmEmbedder(config.minilm_path, dense_model=config.dense_model)

    inner: Embedder
    if config.kind == "bm25":
        inner = bm25()
    elif config.kind == "minilm":
        inner = minilm()
    elif config.kind == "openai":
        from societas.memory.embedding.openai_embedder import OpenAIEmbedder

        assert config.openai is not None  # checked by EmbeddingConfig
        inner = OpenAIEmbedder(config.openai)
    else:
        from societas.memory.embedding.hybrid import HybridEmbedder

        inner = HybridEmbedder(minilm(), bm25())
    return CachedEmbedder(inner, config.cache_size)


__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbeddingConfig",
    "LocalDenseModel",
    "OpenAIEmbeddingConfig",
    "SparseVector",
    "TextVectors",
    "build_embedder",
]
