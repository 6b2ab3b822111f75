"""Which embedder a group uses; every model is loaded from local files, never a hub."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

BUNDLED_BM25_DIR = Path(__file__).resolve().parent.parent / "models" / "bm25"


class OpenAIEmbeddingConfig(BaseModel):
    """An OpenAI-compatible /v1/embeddings endpoint (vLLM, TEI, OpenAI); key from env only."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    dimensions: int = Field(ge=1, le=65_536)
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the key (never the key)."
    )
    timeout_s: float = Field(30.0, gt=0)
    max_batch: int = Field(256, ge=1)


class EmbeddingConfig(BaseModel):
    """`bm25` sparse (default), `minilm` dense int8, `openai` dense, or `hybrid` minilm+bm25."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["bm25", "minilm", "openai", "hybrid"] = "bm25"
    bm25_path: Path = Field(BUNDLED_BM25_DIR, description="Folder with english.txt stop words.")
    bm25_engine: Literal["qdrant-edge", "fastembed"] = Field(
        "qdrant-edge",
        description="Who computes fastembed's Qdrant/bm25 vectors: Qdrant Edge's Rust "
        "implementation (fast) or fastembed; the vectors are identical.",
    )
    minilm_path: Path | None = Field(
        None, description="Folder with model.onnx + tokenizer files; default: bundled package."
    )
    openai: OpenAIEmbeddingConfig | None = None
    cache_size: int = Field(
        100_000, ge=0, description="Texts whose vectors are kept so they are not embedded twice."
    )
    batch_size: int = Field(256, ge=1, le=65_536)

    @model_validator(mode="after")
    def _openai_needs_endpoint(self) -> EmbeddingConfig:
        if self.kind == "openai" and self.openai is None:
            raise ValueError("embedding.openai must be set when embedding.kind is 'openai'")
        return self

    @property
    def has_dense(self) -> bool:
        return self.kind in ("minilm", "openai", "hybrid")

    @property
    def has_sparse(self) -> bool:
        return self.kind in ("bm25", "hybrid")
