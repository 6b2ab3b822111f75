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
    from societas.memory.sparse_index import AgentPostings


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
        agents = index.agents
        query_weights = index.query_weights
        f64 = np.float64
        for job in jobs:
            r = job.request
            p = agents.get(r.agent_id)
            if p is None or not len(p):
                continue
            n_all = len(p.ids)
            times = np.frombuffer(p.times, f64)
            mask = None
            if "warm" not in r.tiers:  # hot only: the rows still in RAM columns
                mask = np.fromiter((i in hot_ids for i in p.ids), bool, n_all)
            if r.topic is not None:
                topic = index.topic_id_of(r.topic)
                hit = np.frombuffer(p.topics, np.uint16) == topic
                mask = hit if mask is None else mask & hit
            if r.day_range is not None:
                start, end = r.day_range[0] * 86_400.0, (r.day_range[1] + 1) * 86_400.0
                inside = (times >= start) & (times < end)
                mask = inside if mask is None else mask & inside
            if expiring:
                alive = np.fromiter((expiring.get(i, math.inf) > now for i in p.ids), bool, n_all)
                mask = alive if mask is None else mask & alive
            raw = index.relevance(p, query_weights(job.vectors.sparse))
            if relevant_only_cfg and has_terms(job.vectors):
                relevant = raw > 0 if raw is not None else np.zeros(n_all, bool)
                mask = relevant if mask is None else mask & relevant
            score = now - times
            np.abs(score, out=score)
            score *= log_decay
            np.exp(score, out=score)
            if alpha != 1.0:
                score *= alpha
            importance = np.frombuffer(p.importances, f64)
            score += importance if beta == 1.0 else beta * importance
            if raw is not None:
                # raw >= 0 and k > 0, so raw / (raw + k) is already 0.0 where raw is.
                relevance = raw / (raw + k_sat) if saturate else raw
                score += relevance if gamma == 1.0 else gamma * relevance
            rows = None if mask is None else mask.nonzero()[0]
            n = n_all if rows is None else len(rows)
            job.candidates = job.scored = n
            if not n:
                continue
            job.hits = _top(p, score if rows is None else score[rows], rows, min(job.limit, n))


def _top(p: AgentPostings, score: np.ndarray, rows: np.ndarray | None, k: int) -> list[ScoredPoint]:
    """The k best of `score` (over `rows` of the agent's rows, or all of them), best first;
    ties newest first (ids ascend with the row)."""
    n = len(score)
    # Everything tied with the k-th score stays in; then (score, newest) decides.
    near = (score >= np.partition(score, n - k)[n - k]).nonzero()[0] if n > k else np.arange(n)
    order = sorted(zip(score[near].tolist(), near.tolist(), strict=True), key=_best_newest)[:k]
    ids = p.ids
    if rows is None:
        return [ScoredPoint(ids[i], s) for s, i in order]
    return [ScoredPoint(ids[int(rows[i])], s) for s, i in order]


def _best_newest(item: tuple[float, int]) -> tuple[float, int]:
    """Sort key of a (score, row): best score first, then the newest row."""
    return -item[0], -item[1]
