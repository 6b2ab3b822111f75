"""Vector backends behind one `VectorStore` interface: `edge` (default) and `qdrant`."""

from __future__ import annotations

from pathlib import Path

from societas.memory.vectorstores.base import (
    EDGE_STREAM_INDEXES,
    KV_INDEXES,
    STREAM_INDEXES,
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
    shard_dir: Path | None = None,
    role: str = "stream",
) -> VectorStore:
    """The backend a config names, for the `stream` or the `kv` points of one group."""
    if role not in ("stream", "kv"):
        raise ValueError(f"role must be 'stream' or 'kv', got {role!r}")
    if config.backend == "edge":
        from societas.memory.vectorstores.edge import EdgeVectorStore

        if shard_dir is None:
            raise ValueError("the 'edge' backend needs a folder (vector_store.path or a run dir)")
        indexes = EDGE_STREAM_INDEXES if role == "stream" else KV_INDEXES
        return EdgeVectorStore(
            Path(shard_dir) / role, dense_size, sparse, indexes, config.compact_in_child
        )
    from societas.memory.vectorstores.qdrant import QdrantVectorStore

    indexes = STREAM_INDEXES if role == "stream" else KV_INDEXES
    suffix = "" if role == "stream" else "_kv"
    return QdrantVectorStore(config, group_id, dense_size, sparse, indexes, suffix)


__all__ = [
    "MemoryPoint",
    "PointFilter",
    "ScoredPoint",
    "VectorQuery",
    "VectorStore",
    "VectorStoreConfig",
    "build_vector_store",
]
