"""Sparse BM25: fastembed's `Qdrant/bm25` vectors, by Qdrant Edge or by fastembed itself."""

from __future__ import annotations

import asyncio
import os
import re
from array import array
from collections.abc import Sequence
from pathlib import Path

from societas.memory.embedding.base import SparseVector, TextVectors, sparse_text_vectors

# scripts written without spaces between words: CJK ideographs, kana, Hangul, Thai
_UNSPACED = re.compile(
    r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)


def needs_segmentation(text: str) -> bool:
    """Whether `text` contains a script that must be segmented into words first."""
    return not text.isascii() and _UNSPACED.search(text) is not None


OFFLOAD_AT = 1024  # batches this large are embedded on a worker thread, off the event loop


class Bm25Embedder:
    """BM25 term-frequency vectors; pair them with Qdrant's IDF modifier."""

    has_sparse = True
    dense_size: int | None = None

    def __init__(
        self,
        model_dir: Path,
        batch_size: int = 256,
        engine: str = "qdrant-edge",
        multilingual: bool = True,
    ) -> None:
        stopwords_file = Path(model_dir) / "english.txt"
        if not stopwords_file.is_file():
            raise FileNotFoundError(f"bm25_path {str(model_dir)!r} has no english.txt stop words")
        if engine not in ("qdrant-edge", "fastembed"):
            raise ValueError(f"bm25_engine must be 'qdrant-edge' or 'fastembed', got {engine!r}")
        self.name = "bm25"
        self.engine = engine
        self._batch_size = batch_size
        self._multilingual = None
        if engine == "qdrant-edge":
            import qdrant_edge as qe

            stopwords = set(stopwords_file.read_text().split())
            self._edge = qe.Bm25(
                qe.Bm25Config(language="english", stopwords=qe.StopwordsSet(custom=stopwords))
            )
            if multilingual:
                self._multilingual = qe.Bm25(
                    qe.Bm25Config(
                        tokenizer=qe.TokenizerType.Multilingual,
                        language="english",
                        stopwords=qe.StopwordsSet(
                            languages={qe.Language.Chinese}, custom=stopwords
                        ),
                    )
                )
        else:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from fastembed import SparseTextEmbedding

            self._model = SparseTextEmbedding("Qdrant/bm25", specific_model_path=str(model_dir))

    def _edge_embed(self, texts: Sequence[str], query: bool) -> list[TextVectors]:
        english = self._edge.embed_query if query else self._edge.embed_document
        if self._multilingual is None:
            answers = list(map(english, texts))
        else:  # unspaced scripts (CJK, kana, Hangul, Thai): the multilingual tokenizer
            other = self._multilingual.embed_query if query else self._multilingual.embed_document
            answers = [other(t) if needs_segmentation(t) else english(t) for t in texts]
        made = sparse_text_vectors
        return [made(array("I", v.indices), array("f", v.values)) for v in answers]

    def _embed_now(self, texts: Sequence[str], query: bool) -> list[TextVectors]:
        if self.engine == "qdrant-edge":
            return self._edge_embed(texts, query)
        model = self._model
        found = (
            model.query_embed(list(texts))
            if query
            else model.embed(list(texts), batch_size=self._batch_size)
        )
        return [TextVectors(sparse=SparseVector.of(e.indices, e.values)) for e in found]

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]:
        if len(texts) < OFFLOAD_AT:  # (each side inline: one coroutine a call, not two)
            return self._embed_now(texts, False)
        return await asyncio.to_thread(self._embed_now, texts, False)

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        if len(texts) < OFFLOAD_AT:
            return self._embed_now(texts, True)
        return await asyncio.to_thread(self._embed_now, texts, True)
