"""Vector backends behind one `VectorStore` interface: `edge` (default) and `qdrant`."""

from __future__ import annotations

from pathlib import Path

from societas.memory.vectorstores.base import (
    MemoryPoint,
    PointFilter,
    ScoredPoint,
    VectorQuery,
    VectorStore,
)
from societas.memory.vectorstores.config import VectorStoreConfig


def build_vector_store(
    config: VectorStoreConfig,
    group_id: int,
    dense_size: int | None,
    sparse: bool,
    default_path: Path | None = None,
) -> VectorStore:
    """The backend a config names; an edge shard needs a folder (config.path or default_path)."""
    if config.backend == "edge":
        from societas.memory.vectorstores.edge import EdgeVectorStore

        path = config.path or default_path
        if path is None:
            raise ValueError("vector_store.path is required for the 'edge' backend")
        return EdgeVectorStore(Path(path), dense_size, sparse)
    from societas.memory.vectorstores.qdrant import QdrantVectorStore

    return QdrantVectorStore(config, group_id, dense_size, sparse)


__all__ = [
    "MemoryPoint",
    "PointFilter",
    "ScoredPoint",
    "VectorQuery",
    "VectorStore",
    "VectorStoreConfig",
    "build_vector_store",
]
