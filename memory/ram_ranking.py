"""Exact Generative Agents retrieval from RAM: hot and warm memories scored in the group.

With sparse (BM25) embeddings the group's `SparseIndex` holds every hot and warm memory's
terms, time, importance and topic, and the same term counts as the engine, so the score
α·recency + β·importance + γ·relevance is computed here for every memory of the agent and
the top k taken exactly, with no call into the vector engine. Searches this cannot answer
(filters on fields the index lacks, MMR, rank fusion, FinMem layers) go to `memory.ranking`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from societas.memory.ranking import RankJob, has_terms
from societas.memory.vectorstores import ScoredPoint

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory
    from societas.memory.sparse_index import AgentPostings, SparseIndex


class RamRanker:
    """Ranks a group's searches from its `SparseIndex` (see the module docstring)."""

    def __init__(self, group: GroupMemory) -> None:
        self.group = group

    def eligible(self, job: RankJob) -> bool:
        """Whether this search is answered from RAM."""
        g = self.group
        if g.sparse_index is None or g.config.retrieval.mmr_lambda is not None:
            return False
        if g.normalization not in ("saturate", "identity"):
            return False
        if g.profiles.forgetting(job.request.agent_id).enabled or job.request.layers is not None:
            return False
        f = job.filter
        return (
            f.location is None
            and f.types is None
            and f.tags is None
            and f.time_range is None
            and job.vectors.dense is None
        )

    def rank(self, jobs: Sequence[RankJob], now: float) -> None:
        """Fill each job's `hits` with its exact top `limit`, best first (ties: newest)."""
        g = self.group
        cfg = g.config.retrieval
        index = g.sparse_index
        assert index is not None
        log_decay = math.log(cfg.decay_per_hour) / 3600.0
        alpha, beta, gamma = cfg.recency_weight, cfg.importance_weight, cfg.relevance_weight
        saturate = g.normalization == "saturate"
        k_sat = cfg.saturation_k
        relevant_only_cfg = cfg.candidates == "relevant"
        hot_ids = g.hot.row_of
        expiring = g.expiring
        for job in jobs:
            r = job.request
            p = index.agents.get(r.agent_id)
            if p is None or not len(p):
                continue
            ids = np.frombuffer(p.ids, np.int64)
            times = np.frombuffer(p.times, np.float64)
            mask = None
            if "warm" not in r.tiers:  # hot only: the rows still in RAM columns
                mask = np.fromiter((i in hot_ids for i in p.ids), bool, len(ids))
            if r.topic is not None:
                topic = index.topic_id_of(r.topic)
                hit = np.frombuffer(p.topics, np.uint16) == topic
                mask = hit if mask is None else mask & hit
            if r.day_range is not None:
                start, end = r.day_range[0] * 86_400.0, (r.day_range[1] + 1) * 86_400.0
                inside = (times >= start) & (times < end)
                mask = inside if mask is None else mask & inside
            if expiring:
                alive = np.fromiter(
                    (expiring.get(i, math.inf) > now for i in p.ids), bool, len(ids)
                )
                mask = alive if mask is None else mask & alive
            raw = _relevance(index, p, index.query_weights(job.vectors.sparse), len(ids))
            if relevant_only_cfg and has_terms(job.vectors):
                mask = raw > 0 if mask is None else mask & (raw > 0)
            # raw >= 0 and k > 0, so raw / (raw + k) is already 0.0 where raw is (no where()).
            relevance = raw / (raw + k_sat) if saturate else raw
            score = alpha * np.exp(log_decay * np.abs(now - times))
            score += beta * np.frombuffer(p.importances, np.float64)
            score += gamma * relevance
            if mask is not None:
                keep = mask.nonzero()[0]
                ids, score = ids[keep], score[keep]
            n = len(ids)
            job.candidates = job.scored = n
            if not n:
                continue
            k = min(job.limit, n)
            if n > k:
                # Everything tied with the k-th score stays in, then (score, newest id) decides.
                kth = np.partition(score, n - k)[n - k]
                near = (score >= kth).nonzero()[0]
                ids, score = ids[near], score[near]
            order = np.lexsort((-ids, -score))[:k]
            job.hits = list(map(ScoredPoint, ids[order].tolist(), score[order].tolist()))


def _relevance(
    index: SparseIndex, p: AgentPostings, weights: list[tuple[int, float]], n: int
) -> np.ndarray:
    """`SparseIndex.relevance`, in fewer numpy calls when the query has at most two
    weighted terms (then the per-row sums are the same floats in any order: 0 + a + b)."""
    if len(weights) > 2 or not weights or not p.terms:
        return index.relevance(p, weights)
    terms = np.frombuffer(p.terms, np.uint32)
    if len(weights) == 1:
        term, w = weights[0]
        at = (terms == term).nonzero()[0]
        w_at = np.float64(w)
    else:
        (t0, w0), (t1, w1) = weights
        first = terms == t0
        at = (first | (terms == t1)).nonzero()[0]
        w_at = np.where(first[at], w0, w1)
    if not at.size:
        return np.zeros(n)
    rows = np.frombuffer(p.ends, np.uint32).searchsorted(at, side="right")
    return np.bincount(rows, np.frombuffer(p.weights, np.float32)[at] * w_at, n)
