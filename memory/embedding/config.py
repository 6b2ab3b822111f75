"""Which embedder a group uses; every model is loaded from local files, never a hub."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

BUNDLED_BM25_DIR = Path(__file__).resolve().parent.parent / "models" / "bm25"


def key_from_env(field: str, name: str | None, default: str | None = None) -> str | None:
    """The secret in environment variable `name` (the config `field` names it), else `default`."""
    if not name:
        return default
    key = os.environ.get(name)
    if not key:
        raise ValueError(f"{field} names {name!r}, which is not set in the environment")
    return key


class OpenAIEmbeddingConfig(BaseModel, extra="forbid"):
    """An OpenAI-compatible /v1/embeddings endpoint (vLLM, TEI, OpenAI); key from env only."""

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    dimensions: int = Field(ge=1, le=65_536)
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the key (never the key)."
    )
    timeout_s: float = Field(30.0, gt=0)
    max_batch: int = Field(256, ge=1)


class LocalDenseModel(BaseModel, extra="forbid"):
    """Any fastembed-compatible ONNX sentence model in a local folder (never a download)."""

    path: Path = Field(description="Folder with the ONNX file and the tokenizer files.")
    dim: int = Field(ge=1, le=65_536, description="Size of the vectors the model outputs.")
    pooling: Literal["mean", "cls"] = "mean"
    normalize: bool = True
    model_file: str = Field("model.onnx", min_length=1)

    @model_validator(mode="after")
    def _files_exist(self) -> LocalDenseModel:
        if not (self.path / self.model_file).is_file():
            raise ValueError(
                f"dense_model.path {str(self.path)!r} has no {self.model_file!r} "
                "(dense_model.model_file)"
            )
        if not (self.path / "tokenizer.json").is_file():
            raise ValueError(f"dense_model.path {str(self.path)!r} has no tokenizer.json")
        return self


class EmbeddingConfig(BaseModel, extra="forbid"):
    """`bm25` sparse (default), `minilm` dense int8, `openai` dense, or `hybrid` minilm+bm25."""

    kind: Literal["bm25", "minilm", "openai", "hybrid"] = "bm25"
    bm25_path: Path = Field(BUNDLED_BM25_DIR, description="Folder with english.txt stop words.")
    bm25_engine: Literal["qdrant-edge", "fastembed"] = Field(
        "qdrant-edge", description="Who computes the Qdrant/bm25 vectors (identical either way)."
    )
    bm25_multilingual: bool = Field(
        True, description="qdrant-edge: segment Chinese, Japanese, Korean and Thai texts first."
    )
    minilm_path: Path | None = Field(
        None, description="Folder with model.onnx + tokenizer files; default: bundled package."
    )
    dense_model: LocalDenseModel | None = Field(
        None, description="A local fastembed model used instead of MiniLM (minilm, hybrid)."
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
