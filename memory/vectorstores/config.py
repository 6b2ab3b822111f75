"""Where a group's vectors live: an embedded Qdrant Edge shard or a Qdrant server/cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator


class VectorStoreConfig(BaseModel, extra="forbid"):
    """`edge` (default): a shard on disk per group; `qdrant`: a shared collection on a server."""

    backend: Literal["edge", "qdrant"] = "edge"
    path: Path | None = Field(
        None, description="edge: the shards' folder (group-<id>/stream|kv); default: the run's."
    )
    url: str | None = Field(None, description="qdrant: server URL, e.g. http://qdrant:6333.")
    location: str | None = Field(
        None, description="qdrant: ':memory:' for qdrant-client local mode (tests only)."
    )
    api_key_env: str | None = Field(
        None, description="qdrant: environment variable holding the API key (never the key)."
    )
    collection: str = Field("societas_memories", min_length=1, pattern=r"^[A-Za-z0-9_\-]+$")
    shard_key_per_group: bool = Field(
        False, description="qdrant: custom sharding, one shard key per group (cluster mode)."
    )
    timeout_s: float = Field(30.0, gt=0)
    compact_in_child: bool = Field(
        False,
        description="edge: compact a shard in a child process and reopen it mmapped (the loop "
        "never stalls); also after `tiers.seal_after_points` new points.",
    )

    @model_validator(mode="after")
    def _backend_has_address(self) -> VectorStoreConfig:
        if self.backend == "qdrant" and not (self.url or self.location):
            raise ValueError("vector_store.url (or location=':memory:') is required for 'qdrant'")
        if self.url and self.location:
            raise ValueError("vector_store: set url or location, not both")
        return self
