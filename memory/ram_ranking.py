"""Exact Generative Agents retrieval from RAM: hot and warm memories scored in the group.

With sparse (BM25) embeddings the group's `SparseIndex` holds every hot and warm memory's
terms, time, importance and topic, and the same term counts as the engine, so the score
α·recency + β·importance + γ·relevance is computed here for every memory of the agent and
the top k taken exactly, with no call into the vector engine. Searches this cannot answer
(filters on fields the index lacks, MMR, rank fusion, FinMem layers) go to `memory.ranking`.
Each search's relevance, score and top k are one call into the compiled kernel
(memory.rank_kernel) when the install built it; else numpy, with the same results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from societas.memory import rank_kernel
from societas.memory.ranking import RankJob, has_terms
from societas.memory.vectorstores import ScoredPoint

if TYPE_CHECKING:
    from societas.memory.embedding import SparseVector
    from societas.memory.fast_requests import PlainSearch
    from societas.memory.group import GroupMemory
    from societas.memory.records import SearchRequest
    from societas.memory.sparse_index import AgentPostings, SparseIndex


# Searches in a batch from which the top k of all of them is taken at once (_take_tops):
# below, k argmax calls a search (_top) cost less than k passes over the batch (measured:
# even at 16 searches of 200 memories, ahead from 32 whatever the memories per agent).
SEGMENTED_AT = 32
SCRATCH_ROWS = 1 << 17  # 1 MB: the largest batch buffer a group keeps between ticks


class RamRanker:
    """Ranks a group's searches from its `SparseIndex` (see the module docstring)."""

    def __init__(self, group: GroupMemory) -> None:
        self.group = group
        self._scratch = np.empty(0)  # a batch's α·recency + β·importance, reused (see _base)

    def _base(self, rows: int) -> np.ndarray:
        """A float64 buffer of `rows` for a batch's scores, the same one tick after tick:
        a batch of 300 agents × 200 memories scores 60,000 rows (480 KB), and a fresh array
        that size is a fresh mapping of the C library, faulted in page by page each tick
        (~360 page faults a tick, ~4 % of the turn in system time); grown by a quarter when
        too small, so a group whose memories grow does not map it again every tick. A batch
        past SCRATCH_ROWS (1,000 agents × 200 memories) gets a fresh array, gone after the
        batch: a group's RAM between ticks keeps at most 1 MB for it (4 MB kept raised the
        30-day tiering run's day-end RSS by ~7 MB at 1,000 agents)."""
        if rows > SCRATCH_ROWS:
            return np.empty(rows)
        if len(self._scratch) < rows:
            self._scratch = np.empty(min(rows + rows // 4, SCRATCH_ROWS))
        return self._scratch[:rows]

    def _kernel_base(
        self,
        kernel: Any,
        postings: list[AgentPostings],
        now: float,
        log_decay: float,
        alpha: float,
        beta: float,
    ) -> np.ndarray:
        """α·recency + β·importance of these agents' memories, one after another, in the
        kernel's two C passes and numpy's exp (a lone agent's in a fresh array, a batch's in
        the buffer the ranker keeps: `_base`)."""
        if len(postings) == 1:
            return _lone_base(kernel, postings[0], now, log_decay, alpha, beta)
        base = self._base(sum(len(p.ids) for p in postings))
        kernel.decay_args([p.times for p in postings], now, log_decay, base)
        np.exp(base, out=base)
        kernel.weigh(base, [p.importances for p in postings], alpha, beta)
        return base

    def eligible(self, jobs: Sequence[RankJob]) -> list[bool]:
        """Which of these searches are answered from RAM (the group's settings read once a
        batch; per search only its own fields)."""
        g = self.group
        if g.sparse_index is None or not g.ranker.fast_path():  # MMR, rank fusion: engine
            return [False] * len(jobs)
        forgetting = g.profiles.forgetting if g.profiles.any_forgetting else None
        return [
            r.layers is None
            and r.location is None
            and r.types is None
            and r.tags is None
            and r.time_range is None
            and job.vectors.dense is None
            and (forgetting is None or not forgetting(r.agent_id).enabled)
            for job in jobs
            for r in (job.request,)
        ]

    def rank_one(
        self, r: SearchRequest | PlainSearch, query: SparseVector, now: float
    ) -> tuple[list[int], list[float], int]:
        """`rank_plain` of one search (a lone agent's turn: no batch lists)."""
        g = self.group
        index = g.sparse_index
        kernel = rank_kernel.KERNEL
        assert index is not None and kernel is not None
        p = index.agents.get(r.agent_id)
        if not p:
            return [], [], 0
        cfg = g.config.retrieval
        log_decay = math.log(cfg.decay_per_hour) / 3600.0
        base = _lone_base(kernel, p, now, log_decay, cfg.recency_weight, cfg.importance_weight)
        mask = _topic_mask(index, p, r.topic)
        return _kernel_top(kernel, p, query, base, mask, self._kernel_settings(), r.top_k)

    def rank_plain(
        self,
        requests: Sequence[SearchRequest | PlainSearch],
        queries: Sequence[SparseVector],
        now: float,
    ) -> list[tuple[list[int], list[float], int]]:
        """Plain searches' top k (memory.plain_search: a topic at most, no day, expiry or
        tier mask) as `rank` makes them with the kernel built: per request its ids and
        scores, best first, and the memories it scored."""
        g = self.group
        index = g.sparse_index
        kernel = rank_kernel.KERNEL
        assert index is not None and kernel is not None
        cfg = g.config.retrieval
        log_decay = math.log(cfg.decay_per_hour) / 3600.0
        alpha, beta = cfg.recency_weight, cfg.importance_weight
        agents = index.agents
        out: list[tuple[list[int], list[float], int]] = [([], [], 0)] * len(requests)
        found = [(i, p) for i, r in enumerate(requests) if (p := agents.get(r.agent_id))]
        if found:
            base = self._kernel_base(kernel, [p for _, p in found], now, log_decay, alpha, beta)
        settings, end = self._kernel_settings(), 0
        for i, p in found:
            r, start = requests[i], end
            end += len(p.ids)
            mask = _topic_mask(index, p, r.topic)
            out[i] = _kernel_top(kernel, p, queries[i], base[start:end], mask, settings, r.top_k)
        return out

    def _kernel_settings(self) -> tuple:
        """The kernel's arguments every search of the group shares: the index's term counts
        and the retrieval settings (read once a batch)."""
        g = self.group
        index, cfg = g.sparse_index, g.config.retrieval
        assert index is not None
        return (
            index.df, index.docs, cfg.saturation_k, cfg.relevance_weight,
            g.normalization == "saturate", cfg.candidates == "relevant",
        )  # fmt: skip

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
        settings = self._kernel_settings()  # the kernel's shared arguments
        f64 = np.float64
        found = [(job, agents.get(job.request.agent_id)) for job in jobs]
        found = [(job, p) for job, p in found if p is not None and len(p)]
        if not found:
            return
        kernel = rank_kernel.KERNEL
        if kernel is not None:
            base = self._kernel_base(kernel, [p for _, p in found], now, log_decay, alpha, beta)
        else:
            # α·recency + β·importance of every row of the batch's agents in one pass (a few
            # numpy calls a batch rather than six a search); each search scores a slice of it.
            base = now - np.frombuffer(b"".join([p.times for _, p in found]), f64)
            np.abs(base, out=base)
            base *= log_decay
            np.exp(base, out=base)
            if alpha != 1.0:
                base *= alpha
            importance = np.frombuffer(b"".join([p.importances for _, p in found]), f64)
            base += importance if beta == 1.0 else beta * importance
        segmented = kernel is None and len(found) >= SEGMENTED_AT
        picks: list[tuple[RankJob, AgentPostings, int]] = []  # segmented: (job, postings, k)
        end = 0
        for job, p in found:
            r = job.request
            n_all = len(p.ids)
            start, end = end, end + n_all
            score = base[start:end]  # this search's own slice: changed in place below
            mask = None
            if "warm" not in r.tiers:  # hot only: the rows still in RAM columns
                mask = np.fromiter((i in hot_ids for i in p.ids), bool, n_all)
            if r.topic is not None:
                hit = _topic_mask(index, p, r.topic)
                mask = hit if mask is None else mask & hit  # type: ignore[operator]
            if r.day_range is not None:
                times = np.frombuffer(p.times, f64)
                first, last = r.day_range[0] * 86_400.0, (r.day_range[1] + 1) * 86_400.0
                inside = (times >= first) & (times < last)
                mask = inside if mask is None else mask & inside
            if expiring:
                alive = np.fromiter((expiring.get(i, math.inf) > now for i in p.ids), bool, n_all)
                mask = alive if mask is None else mask & alive
            if kernel is not None:  # query weights, relevance, score and top k in one call
                query = job.vectors.sparse
                ids, scores, n = _kernel_top(kernel, p, query, score, mask, settings, job.limit)
                job.candidates = job.scored = n
                job.hits = list(map(ScoredPoint, ids, scores))
                continue
            weights = query_weights(job.vectors.sparse)
            relevant_only = relevant_only_cfg and has_terms(job.vectors)
            raw = index.relevance(p, weights)
            if relevant_only:
                relevant = raw > 0 if raw is not None else np.zeros(n_all, bool)
                mask = relevant if mask is None else mask & relevant
            if raw is not None:
                # raw >= 0 and k > 0, so raw / (raw + k) is already 0.0 where raw is.
                relevance = raw / (raw + k_sat) if saturate else raw
                score += relevance if gamma == 1.0 else gamma * relevance
            n = n_all if mask is None else int(np.count_nonzero(mask))
            job.candidates = job.scored = n
            if segmented:  # left out rows score -inf: never taken while a candidate is left
                if mask is not None:
                    score[~mask] = -np.inf
                picks.append((job, p, min(job.limit, n)))
            elif n:
                rows = None if mask is None else mask.nonzero()[0]
                chosen = score if rows is None else score[rows]
                job.hits = _top(p, chosen, rows, min(job.limit, n))
        if picks:
            _take_tops(base, picks)


def _take_tops(score: np.ndarray, picks: Sequence[tuple[RankJob, AgentPostings, int]]) -> None:
    """Each job's top k at once: `score` holds the jobs' rows one after another, each job's
    k best (ties newest first) taken by k segmented argmax passes over the whole batch
    (a few numpy calls a pass, not k a search). `score` is used up."""
    lengths = np.fromiter((len(p.ids) for _, p, _ in picks), np.intp, len(picks))
    starts = np.zeros(len(picks), np.intp)
    np.cumsum(lengths[:-1], out=starts[1:])
    k_max = max(k for _, _, k in picks)
    rows = np.empty((len(picks), k_max), np.intp)
    best = np.empty((len(picks), k_max))
    last = np.empty(len(score), bool)
    for i in range(k_max):
        top = np.maximum.reduceat(score, starts)
        at = np.flatnonzero(score == np.repeat(top, lengths))  # every segment has its max
        segment = starts.searchsorted(at, side="right")
        ends = last[: len(at)]  # the last (newest) position of each segment's max
        np.not_equal(segment[1:], segment[:-1], out=ends[:-1])
        ends[-1] = True
        at = at[ends]
        if len(at) != len(starts):
            raise ValueError("a score is NaN: scores must be comparable")
        rows[:, i] = at - starts
        best[:, i] = top
        score[at] = -np.inf
    for (job, p, k), job_rows, job_best in zip(picks, rows.tolist(), best.tolist(), strict=True):
        ids = p.ids
        job.hits = [ScoredPoint(ids[r], s) for r, s in zip(job_rows[:k], job_best[:k], strict=True)]


def _top(p: AgentPostings, score: np.ndarray, rows: np.ndarray | None, k: int) -> list[ScoredPoint]:
    """The k best of `score` (over `rows` of the agent's rows, or all of them), best first;
    ties newest first (ids ascend with the row). `score` is used up (taken rows set to -inf).

    k argmax calls over the reversed scores (argmax takes the first of equal maxima, so the
    reversed view gives the newest): ~1 µs for a top 3, where a partition and a sort of the
    tied candidates took ~5 µs a search."""
    ids = p.ids
    reversed_score = score[::-1]
    last = len(score) - 1
    out = []
    for _ in range(k):
        i = last - int(reversed_score.argmax())
        out.append(ScoredPoint(ids[i] if rows is None else ids[int(rows[i])], float(score[i])))
        score[i] = -np.inf
    return out


def _lone_base(
    kernel, p: AgentPostings, now: float, log_decay: float, alpha: float, beta: float
) -> np.ndarray:
    """α·recency + β·importance of one agent's memories: two C passes and numpy's exp (the
    batch's passes give the same bits)."""
    base = np.empty(len(p.ids))
    kernel.decay_args(p.times, now, log_decay, base)
    np.exp(base, out=base)
    kernel.weigh(base, p.importances, alpha, beta)
    return base


def _kernel_top(
    kernel: Any,
    p: AgentPostings,
    query: SparseVector,
    score: np.ndarray,
    mask: np.ndarray | None,
    settings: tuple,
    limit: int,
) -> tuple[list[int], list[float], int]:
    """One search's query weights, relevance, score and top `limit` in one kernel call
    (`score`: its agent's α·recency + β·importance, changed in place; `mask`: the rows that
    may be taken, None for all): ids and scores, best first, and the rows scored."""
    df, docs, k_sat, gamma, saturate, relevant_only = settings
    return kernel.rank(
        p.ids, p.terms, p.weights, p.ends, query.indices, query.values, df, docs, score, mask,
        k_sat, gamma, saturate, relevant_only, limit,
    )  # fmt: skip


def _topic_mask(index: SparseIndex, p: AgentPostings, topic: str | None) -> np.ndarray | None:
    """Which of an agent's memories have `topic` (None: no topic asked, every one)."""
    if topic is None:
        return None
    return np.frombuffer(p.topics, np.uint16) == index.topic_id_of(topic)
