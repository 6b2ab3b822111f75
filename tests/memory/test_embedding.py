"""Embedders: BM25 and MiniLM offline from local files, an OpenAI endpoint on loopback, cache."""

from __future__ import annotations

import pytest
from aiohttp import web
from pydantic import ValidationError

from societas.memory import GroupMemoryConfig
from societas.memory.embedding import EmbeddingConfig, TextVectors, build_embedder
from societas.memory.embedding.bm25 import Bm25Embedder
from societas.memory.embedding.cache import CachedEmbedder
from societas.memory.embedding.openai_embedder import OpenAIEmbedder


async def test_bm25_documents_and_queries(bm25_embedder):
    docs = await bm25_embedder.embed_documents(["The storms are flooding the river"])
    (query,) = await bm25_embedder.embed_queries(["storm"])
    assert docs[0].sparse and query.sparse
    # Snowball stems: "storms" in the document and "storm" in the query share one term id.
    assert set(query.sparse.indices) <= set(docs[0].sparse.indices)
    (stop,) = await bm25_embedder.embed_queries(["the and of"])
    assert stop.sparse.is_empty()


def test_bm25_needs_its_stop_word_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="english.txt"):
        Bm25Embedder(tmp_path)


class CountingEmbedder:
    name, dense_size, has_sparse = "count", 2, False

    def __init__(self):
        self.calls: list[list[str]] = []

    async def embed_documents(self, texts):
        self.calls.append(list(texts))
        return [TextVectors(dense=(float(len(t)), 1.0)) for t in texts]

    embed_queries = embed_documents


async def test_cache_embeds_each_text_once():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, capacity=2)
    out = await cached.embed_documents(["a", "bb", "a"])
    assert [v.dense[0] for v in out] == [1.0, 2.0, 1.0]
    assert inner.calls == [["a", "bb"]]
    await cached.embed_documents(["bb", "ccc"])
    assert inner.calls[-1] == ["ccc"]
    assert (cached.hits, cached.misses) == (2, 3)
    await cached.embed_documents(["a"])  # evicted by capacity 2 (LRU)
    assert inner.calls[-1] == ["a"]


async def test_cache_of_size_zero_shares_only_a_batchs_duplicates():
    """cache_size=0 keeps nothing (no digest is computed); a text twice in one batch is still
    embedded once, and the counts say so."""
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, capacity=0)
    out = await cached.embed_documents(["a", "bb", "a"])
    assert [v.dense[0] for v in out] == [1.0, 2.0, 1.0] and inner.calls == [["a", "bb"]]
    out = await cached.embed_queries(["bb", "ccc"])
    assert [v.dense[0] for v in out] == [2.0, 3.0] and inner.calls[-1] == ["bb", "ccc"]
    assert (cached.hits, cached.misses) == (1, 4) and not cached._documents.items
    out = await cached.embed_queries(["a"])  # a lone text: embedded, counted, not kept
    assert [v.dense[0] for v in out] == [1.0] and inner.calls[-1] == ["a"]
    assert (cached.hits, cached.misses) == (1, 5) and not cached._queries.items


async def test_cache_keeps_digests_not_texts():
    """Keys are 16-byte digests whatever the text's length; distinct texts (a lone surrogate
    included) stay distinct entries and hit again."""
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, capacity=10)
    texts = ["x" * 5000, "x" * 4999 + "y", "caf\udce9", "caf\u00e9"]
    await cached.embed_documents(texts)
    assert all(isinstance(k, bytes) and len(k) == 16 for k in cached._documents.items)
    assert len(cached._documents.items) == 4
    out = await cached.embed_documents(list(reversed(texts)))
    assert inner.calls == [texts] and cached.hits == 4
    assert [v.dense[0] for v in out] == [float(len(t)) for t in reversed(texts)]


async def test_cached_bm25_vectors_come_back_equal_and_are_kept_compact(bm25_embedder):
    """A sparse-only entry is kept as one bytes object; a hit gives the same ids and weights
    as embedding the text afresh (an empty vector included)."""
    texts = ["The storms are flooding the river", "the and of", "Bakery opens at 7"]
    fresh = await bm25_embedder.embed_documents(texts)
    cached = CachedEmbedder(bm25_embedder, capacity=10)
    await cached.embed_documents(texts)
    assert all(isinstance(v, bytes) for v in cached._documents.items.values())
    again = await cached.embed_documents(texts)
    assert cached.hits == 3
    for a, b in zip(fresh, again, strict=True):
        assert a.dense is None and b.dense is None
        assert list(a.sparse.indices) == list(b.sparse.indices)
        assert list(a.sparse.values) == list(b.sparse.values)
    assert again[1].sparse.is_empty()


async def test_minilm_dense_is_semantic_and_offline(group_factory):
    embedder = build_embedder(EmbeddingConfig(kind="minilm"))
    a, b, c = await embedder.embed_documents(
        [
            "a hurricane is approaching the coast",
            "a big storm is coming to the shore",
            "I baked bread this morning",
        ]
    )
    dot = lambda x, y: sum(p * q for p, q in zip(x.dense, y.dense, strict=True))  # noqa: E731
    assert dot(a, b) > dot(a, c) + 0.2
    group = group_factory("edge", embedder=embedder)
    await group.add_agents({1: {}})
    await group.agent(1).stream.add("event", "a hurricane is approaching the coast")
    await group.agent(1).stream.add("event", "I baked bread this morning")
    hits = await group.agent(1).stream.search("storm warning", top_k=1)
    assert hits[0].text == "a hurricane is approaching the coast"  # no shared word: dense only


async def test_hybrid_uses_dense_and_sparse(group_factory):
    embedder = build_embedder(EmbeddingConfig(kind="hybrid"))
    (v,) = await embedder.embed_documents(["flood"])
    assert v.dense is not None and v.sparse is not None
    group = group_factory("edge", embedder=embedder)
    assert group.normalization == "rrf"
    await group.add_agents({1: {}})
    await group.agent(1).stream.add("event", "the river flooded the town")
    await group.agent(1).stream.add("event", "we played chess")
    hits = await group.agent(1).stream.search("flood", top_k=2)
    assert hits[0].text == "the river flooded the town"


@pytest.fixture
async def embeddings_server(unused_tcp_port):
    """A real HTTP /v1/embeddings on loopback; returns 3-d vectors derived from the text."""
    seen: list[dict] = []

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append({"body": body, "auth": request.headers.get("Authorization")})
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float(len(t)), float(t.count("a")), 1.0],
            }
            for i, t in enumerate(body["input"])
        ]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )

    app = web.Application()
    app.router.add_post("/v1/embeddings", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", unused_tcp_port)
    await site.start()
    yield f"http://127.0.0.1:{unused_tcp_port}/v1", seen
    await runner.cleanup()


async def test_openai_endpoint_batches_and_reads_key_from_env(embeddings_server, monkeypatch):
    url, seen = embeddings_server
    monkeypatch.setenv("SOCIETAS_TEST_EMBED_KEY", "sk-test-secret")
    config = EmbeddingConfig(
        kind="openai",
        openai={
            "base_url": url,
            "model": "emb",
            "dimensions": 3,
            "max_batch": 2,
            "api_key_env": "SOCIETAS_TEST_EMBED_KEY",
        },
    )
    embedder = build_embedder(config)
    out = await embedder.embed_documents(["a", "banana", "cab", "a"])
    assert [v.dense for v in out] == [
        (1.0, 1.0, 1.0),
        (6.0, 3.0, 1.0),
        (3.0, 1.0, 1.0),
        (1.0, 1.0, 1.0),
    ]
    assert [s["body"]["input"] for s in seen] == [["a", "banana"], ["cab"]]  # de-duplicated
    assert seen[0]["auth"] == "Bearer sk-test-secret"


async def test_openai_wrong_dimensions_is_clear(embeddings_server):
    url, _ = embeddings_server
    embedder = OpenAIEmbedder(
        EmbeddingConfig(
            kind="openai", openai={"base_url": url, "model": "emb", "dimensions": 5}
        ).openai
    )
    with pytest.raises(ValueError, match="returned 3 dimensions.*dimensions is 5"):
        await embedder.embed_documents(["x"])


def test_openai_missing_key_env_is_clear(monkeypatch):
    monkeypatch.delenv("SOCIETAS_NOT_SET", raising=False)
    config = EmbeddingConfig(
        kind="openai",
        openai={
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "dimensions": 3,
            "api_key_env": "SOCIETAS_NOT_SET",
        },
    )
    with pytest.raises(ValueError, match="SOCIETAS_NOT_SET"):
        build_embedder(config)


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"kind": "word2vec"}, "kind"),
        ({"cache_size": -1}, "cache_size"),
        (
            {"kind": "openai", "openai": {"base_url": "x", "model": "m", "dimensions": 0}},
            "dimensions",
        ),
    ],
)
def test_bad_embedding_config(raw, field):
    with pytest.raises(ValidationError, match=field):
        GroupMemoryConfig(embedding=raw)


async def test_both_bm25_engines_give_identical_vectors():
    """The default engine (Qdrant Edge's Rust BM25) reproduces fastembed's Qdrant/bm25."""
    texts = [
        "The storms are FLOODING the river's banks, aren't they?",
        "Café naïve résumé, e-mail 2024: the mayor's 3rd warning!!",
        "I saw the ferry near the harbour and talked about cheese, bread and soup",
        "a",
        "the and of",
        "running runner runs ran",
    ]
    edge = build_embedder(EmbeddingConfig(bm25_engine="qdrant-edge"))
    fast = build_embedder(EmbeddingConfig(bm25_engine="fastembed"))
    for method in ("embed_documents", "embed_queries"):
        a = await getattr(edge, method)(texts)
        b = await getattr(fast, method)(texts)
        for x, y in zip(a, b, strict=True):
            dx = dict(zip(x.sparse.indices, x.sparse.values, strict=True))
            dy = dict(zip(y.sparse.indices, y.sparse.values, strict=True))
            assert dx.keys() == dy.keys()
            assert all(abs(dx[k] - dy[k]) < 1e-5 for k in dx)


def test_bad_bm25_engine():
    with pytest.raises(ValidationError, match="bm25_engine"):
        EmbeddingConfig(bm25_engine="lucene")


async def test_a_batch_past_the_inline_limit_embeds_on_a_thread_the_same(monkeypatch):
    """Batches of OFFLOAD_AT texts or more leave the event loop (a worker thread) and give
    the vectors the inline path gives (no cache in front: both are computed)."""
    from societas.memory.embedding import bm25
    from societas.memory.embedding.config import BUNDLED_BM25_DIR

    embedder = Bm25Embedder(BUNDLED_BM25_DIR)
    texts = [f"storm number {i} near the harbour and the market" for i in range(bm25.OFFLOAD_AT)]
    threads = []
    real_to_thread = bm25.asyncio.to_thread

    async def counted(fn, *args):
        threads.append(len(args[0]))
        return await real_to_thread(fn, *args)

    monkeypatch.setattr(bm25.asyncio, "to_thread", counted)
    offloaded = await embedder.embed_documents(texts)
    inline = await embedder.embed_documents(texts[:10])
    assert threads == [bm25.OFFLOAD_AT]  # the big batch went to a thread, the small did not
    assert offloaded[:10] == inline


def test_sparse_text_vectors_equal_the_dataclasses():
    """The fast constructor BM25 uses gives what the frozen dataclasses give: equal values,
    the same arrays, still frozen."""
    import dataclasses
    from array import array

    from societas.memory.embedding.base import SparseVector, TextVectors, sparse_text_vectors

    indices, values = array("I", [3, 9]), array("f", [0.5, 1.5])
    fast = sparse_text_vectors(indices, values)
    slow = TextVectors(sparse=SparseVector(indices, values))
    assert fast == slow and fast.dense is None and fast.sparse.indices is indices
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.sparse.values = values  # type: ignore[misc]
