"""The two baselines of memory_ops, each running the per-agent workload of _memory_workload.

naive: per-agent Python lists and growing numpy arrays of the memories' BM25 term weights;
search scores every memory of the agent with societas's default retrieval score, computed
directly: α·recency + β·importance + γ·relevance, recency = decay ** hours since the memory,
relevance = BM25 (Qdrant's IDF counted over the group, as the shared shard counts it: a
numpy sparse dot) over the BM25 of a memory equal to the query, at most 1 (the `exact`
normalisation); ties newest first. The weights and decay are read from societas's default
`RetrievalConfig`. Same tokenizer (Qdrant Edge's BM25 with the bundled stop words), same
vectors (f32 weights), same answers. Status is a dict per agent. Nothing cached.

agentsociety: AgentSociety 1.5.7's design: two in-memory Qdrant clients per agent (stream and
status), one text embedded (fastembed BM25) and one point upserted per call, one query per
search. Nothing cached.
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path

import numpy as np
from _common import CollectorClock
from _memory_workload import SEED, TOP_K, Turn, clock_of, digest_hits, tick_plan

from societas.memory.embedding.config import BUNDLED_BM25_DIR
from societas.memory.model.config import GroupMemoryConfig

# Qdrant's BM25 embedder: k1, b and the average length its document weights assume.
K1, B, AVG_LEN = 1.2, 0.75, 256.0


def _edge_bm25():
    import qdrant_edge as qe

    stopwords = set((Path(BUNDLED_BM25_DIR) / "english.txt").read_text().split())
    return qe.Bm25(qe.Bm25Config(language="english", stopwords=qe.StopwordsSet(custom=stopwords)))


class Score:
    """societas's default retrieval score (the weights and decay of its default config)."""

    def __init__(self) -> None:
        cfg = GroupMemoryConfig().retrieval
        norm = cfg.resolved_normalization(dense=False, sparse=True)
        assert norm == "exact" and cfg.candidates == "all", (norm, cfg.candidates)
        self.alpha, self.beta, self.gamma = (
            cfg.recency_weight,
            cfg.importance_weight,
            cfg.relevance_weight,
        )
        self.log_decay_per_s = math.log(cfg.decay_per_hour) / 3600.0

    @staticmethod
    def exact_match(idf_weights: list[float], query_terms: int) -> float:
        """BM25 of a memory whose text is the query: each term once in a text that long."""
        length = 1.0 - B + B * query_terms / AVG_LEN
        return (K1 + 1.0) / (1.0 + K1 * length) * sum(idf_weights)


class NaiveAgent:
    """One agent's memories: lists of texts, numpy arrays of times, importances, terms."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.times = np.empty(16)
        self.importance = np.empty(16)
        self.rows = np.empty(64, dtype=np.int32)
        self.terms = np.empty(64, dtype=np.int64)
        self.weights = np.empty(64, dtype=np.float32)
        self.nnz = 0
        self.status: dict[str, str] = {}

    def add(self, text: str, now: float, importance: float, terms, weights) -> None:
        n = len(self.texts)
        if n == len(self.times):
            self.times = np.resize(self.times, 2 * n)
            self.importance = np.resize(self.importance, 2 * n)
        self.times[n], self.importance[n] = now, importance
        self.texts.append(text)
        end = self.nnz + len(terms)
        while end > len(self.terms):
            size = 2 * len(self.terms)
            self.rows = np.resize(self.rows, size)
            self.terms = np.resize(self.terms, size)
            self.weights = np.resize(self.weights, size)
        self.rows[self.nnz : end] = n
        self.terms[self.nnz : end] = terms
        self.weights[self.nnz : end] = weights
        self.nnz = end

    def search(
        self, q_terms: np.ndarray, q_idf: np.ndarray, scale: float, now: float, s: Score
    ) -> list[str]:
        n, nnz = len(self.texts), self.nnz
        if n == 0:
            return []
        raw = np.zeros(n)
        if len(q_terms):
            order = np.argsort(q_terms)
            q_sorted, idf_sorted = q_terms[order], q_idf[order]
            terms = self.terms[:nnz]
            pos = np.searchsorted(q_sorted, terms).clip(0, len(q_sorted) - 1)
            hit = q_sorted[pos] == terms
            raw = np.bincount(
                self.rows[:nnz][hit],
                weights=self.weights[:nnz][hit] * idf_sorted[pos[hit]],
                minlength=n,
            )
        recency = np.exp(np.abs(now - self.times[:n]) * s.log_decay_per_s)
        relevance = np.minimum(raw / scale, 1.0) if scale else raw * 0.0
        score = s.alpha * recency + s.beta * self.importance[:n] + s.gamma * relevance
        k = min(TOP_K, n)
        best = np.argpartition(-score, k - 1)[:k] if n > k else np.arange(n)
        ranked = sorted(best.tolist(), key=lambda i: (-score[i], -i))  # ties: newest first
        return [self.texts[i] for i in ranked]


def run_naive(agents: int, memories: int, rss_mb) -> dict:
    """The workload on per-agent lists; returns timings, RSS and per-search digests."""
    bm25 = _edge_bm25()
    score = Score()
    rng = random.Random(SEED)
    base = rss_mb()
    mem = [NaiveAgent() for _ in range(agents)]
    df: dict[int, int] = {}
    docs = 0
    add_s = search_s = kv_s = 0.0
    digests = []
    collector = CollectorClock()
    collector.start()
    t_all, cpu_all = time.perf_counter(), time.process_time()
    for tick in range(memories // 2):
        day, t = clock_of(tick)
        now = day * 86400.0 + t
        for turn in tick_plan(rng, agents):
            m = mem[turn.agent]
            t0 = time.perf_counter()
            for _topic, text, importance in turn.adds:
                v = bm25.embed_document(text)
                terms = np.asarray(v.indices, dtype=np.int64)
                for term in terms.tolist():
                    df[term] = df.get(term, 0) + 1
                docs += 1
                m.add(text, now, importance, terms, np.asarray(v.values, dtype=np.float32))
            t1 = time.perf_counter()
            q = bm25.embed_query(turn.query)
            q_values = np.asarray(q.values, np.float32).tolist()
            known = [  # (term, q · idf) of the query's terms some memory holds
                (term, w * math.log(1 + (docs - df[term] + 0.5) / (df[term] + 0.5)))
                for term, w in zip(q.indices, q_values, strict=True)
                if df.get(term)
            ]
            q_terms = np.array([term for term, _ in known], dtype=np.int64)
            q_idf = np.array([w for _, w in known])
            scale = score.exact_match([w for _, w in known], len(q.indices))
            hits = m.search(q_terms, q_idf, scale, now, score)
            t2 = time.perf_counter()
            m.status["thought"] = turn.thought
            assert m.status["thought"] == turn.thought
            t3 = time.perf_counter()
            add_s, search_s, kv_s = add_s + t1 - t0, search_s + t2 - t1, kv_s + t3 - t2
            digests.append(digest_hits(hits))
    wall, cpu = time.perf_counter() - t_all, time.process_time() - cpu_all
    figures = _figures(agents, memories, wall, add_s, search_s, kv_s, base, digests)
    return figures | {"cpu_s": cpu} | collector.figures()


def run_agentsociety(agents: int, memories: int, rss_mb) -> dict:
    """The workload the AgentSociety way: two Qdrant clients per agent, one embed per call."""
    from fastembed import SparseTextEmbedding
    from qdrant_client import QdrantClient, models

    model = SparseTextEmbedding("Qdrant/bm25", specific_model_path=str(BUNDLED_BM25_DIR))
    rng = random.Random(SEED)
    base = rss_mb()
    sparse = {"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)}
    stream, status = [], []
    for _ in range(agents):
        for clients in (stream, status):
            client = QdrantClient(":memory:")
            client.create_collection("m", vectors_config={}, sparse_vectors_config=sparse)
            clients.append(client)
    next_id = [0] * agents
    kv: list[dict[str, str]] = [{} for _ in range(agents)]

    def embed(text: str, query: bool = False) -> models.SparseVector:
        e = next(iter(model.query_embed(text) if query else model.embed([text])))
        return models.SparseVector(indices=e.indices.tolist(), values=e.values.tolist())

    def upsert(client, a: int, text: str, payload: dict) -> None:
        next_id[a] += 1
        point = models.PointStruct(id=next_id[a], vector={"bm25": embed(text)}, payload=payload)
        client.upsert("m", points=[point])

    add_s = search_s = kv_s = 0.0
    digests = []
    t_all = time.perf_counter()
    for tick in range(memories // 2):
        day, t = clock_of(tick)
        for turn in tick_plan(rng, agents):
            a: int = turn.agent
            t0 = time.perf_counter()
            for topic, text, importance in turn.adds:
                payload = {"topic": topic, "day": day, "t": t, "importance": importance}
                upsert(stream[a], a, text, payload | {"text": text})
            t1 = time.perf_counter()
            found = stream[a].query_points(
                "m", query=embed(turn.query, True), using="bm25", limit=TOP_K, with_payload=True
            )
            t2 = time.perf_counter()
            kv[a]["thought"] = turn.thought
            upsert(status[a], a, turn.thought, {"key": "thought"})  # status is embedded too
            assert kv[a]["thought"] == turn.thought
            t3 = time.perf_counter()
            add_s, search_s, kv_s = add_s + t1 - t0, search_s + t2 - t1, kv_s + t3 - t2
            digests.append(digest_hits([p.payload["text"] for p in found.points]))
    wall = time.perf_counter() - t_all
    return _figures(agents, memories, wall, add_s, search_s, kv_s, base, digests)


def _figures(agents, memories, wall, add_s, search_s, kv_s, base_rss, digests) -> dict:
    from _common import peak_rss_mb

    turns = agents * (memories // 2)
    peak = peak_rss_mb()
    return {
        "agents": agents,
        "wall_s": wall,
        "adds_per_s": 2 * turns / add_s,
        "searches_per_s": turns / search_s,
        "kv_ops_per_s": 2 * turns / kv_s,
        "peak_rss_mb": peak,
        "net_kb_per_agent": (peak - base_rss) * 1024 / agents,
        "digests": digests,
    }


__all__ = ["Turn", "run_agentsociety", "run_naive"]
