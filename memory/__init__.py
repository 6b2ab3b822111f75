"""societas.memory: agent KV + stream memory, columnar per group, over a real Qdrant engine."""

from __future__ import annotations

from societas.memory.agent import AgentMemory, StatusMemory, StreamMemory
from societas.memory.embedding import EmbeddingConfig, build_embedder
from societas.memory.group import GroupMemory, KVUpdate
from societas.memory.model.citizen import CITIZEN_ATTRIBUTES, CITIZEN_MEMORY_CONFIG
from societas.memory.model.clock import SimClock
from societas.memory.model.config import GroupMemoryConfig, MemoryAttribute, MemoryConfig
from societas.memory.model.records import (
    AddRequest,
    KVHit,
    KVSearchRequest,
    MemoryHit,
    MemoryRecord,
    SearchRequest,
    format_memories,
)
from societas.memory.retrieval.scoring import RetrievalConfig, retrieval_score
from societas.memory.vectorstores import VectorStoreConfig

__all__ = [
    "CITIZEN_ATTRIBUTES",
    "CITIZEN_MEMORY_CONFIG",
    "AddRequest",
    "AgentMemory",
    "EmbeddingConfig",
    "GroupMemory",
    "GroupMemoryConfig",
    "KVHit",
    "KVSearchRequest",
    "KVUpdate",
    "MemoryAttribute",
    "MemoryConfig",
    "MemoryHit",
    "MemoryRecord",
    "RetrievalConfig",
    "SearchRequest",
    "SimClock",
    "StatusMemory",
    "StreamMemory",
    "VectorStoreConfig",
    "build_embedder",
    "format_memories",
    "retrieval_score",
]
