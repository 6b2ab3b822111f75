"""An LRU cache in front of any embedder, keyed by a 128-bit digest of each text."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

from societas.memory.embedding.base import Embedder, SparseVector, TextVectors

_Packed = bytes | TextVectors


def pack(vectors: TextVectors) -> _Packed:
    """Sparse-only vectors as one bytes object (ids then weights); others as they are."""
    sparse = vectors.sparse
    if vectors.dense is not None or sparse is None:
        return vectors
    if sparse.indices.typecode != "I" or sparse.values.typecode != "f":
        return vectors  # kept as given: packing would convert them
    return sparse.packed()


def unpack(packed: _Packed) -> TextVectors:
    """The vectors `pack` was given (equal arrays, new objects)."""
    if isinstance(packed, TextVectors):
        return packed
    return TextVectors(sparse=SparseVector.unpacked(packed))


def text_key(text: str) -> bytes:
    """The cache key of a text: 16 bytes whatever its length (any str, lone surrogates too)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class _Lru:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: OrderedDict[bytes, _Packed] = OrderedDict()

    def get(self, key: bytes) -> TextVectors | None:
        """The vectors cached under `key` (a `text_key`), marked as used; None if absent."""
        value = self.items.get(key)
        if value is None:
            return None
        self.items.move_to_end(key)
        return unpack(value)

    def put(self, key: bytes, value: TextVectors) -> None:
        if self.capacity == 0:
            return
        self.items[key] = pack(value)
        self.items.move_to_end(key)
        while len(self.items) > self.capacity:
            self.items.popitem(last=False)


class CachedEmbedder:
    """Wraps an embedder; duplicates inside one batch are embedded once too."""

    def __init__(self, inner: Embedder, capacity: int = 100_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.dense_size = inner.dense_size
        self.has_sparse = inner.has_sparse
        self._documents = _Lru(capacity)
        self._queries = _Lru(capacity)
        self.hits = 0
        self.misses = 0

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]:
        if not self._documents.capacity:
            return await self._uncached(texts, self.inner.embed_documents)
        return await self._embed(texts, self._documents, self.inner.embed_documents)

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        if not self._queries.capacity:
            return await self._uncached(texts, self.inner.embed_queries)
        return await self._embed(texts, self._queries, self.inner.embed_queries)

    def _uncached(
        self, texts: Sequence[str], compute: Callable[[Sequence[str]], Awaitable[list[TextVectors]]]
    ) -> Awaitable[list[TextVectors]]:
        """No cache: only a batch's duplicates are shared (none: the inner call itself)."""
        todo = list(dict.fromkeys(texts))
        self.hits += len(texts) - len(todo)
        self.misses += len(todo)
        if len(todo) == len(texts):
            return compute(todo)
        return self._spread(texts, todo, compute)

    @staticmethod
    async def _spread(texts: Sequence[str], todo: list[str], compute) -> list[TextVectors]:
        """`texts`' vectors from those of its distinct texts `todo`."""
        by_text = dict(zip(todo, await compute(todo), strict=True))
        return [by_text[text] for text in texts]

    async def _embed(self, texts: Sequence[str], cache: _Lru, compute) -> list[TextVectors]:
        found: dict[str, TextVectors] = {}
        missing: dict[str, bytes] = {}  # ordered: each new text embedded once, its key
        for text in texts:
            if text in found or text in missing:
                continue
            key = text_key(text)  # hashed once, for the lookup and the store
            hit = cache.get(key)
            if hit is None:
                missing[text] = key
            else:
                found[text] = hit
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            todo = list(missing)
            for text, vectors in zip(todo, await compute(todo), strict=True):
                cache.put(missing[text], vectors)
                found[text] = vectors
        return [found[text] for text in texts]
