"""Exact Generative Agents retrieval from RAM: every hot and warm memory of the agent."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from societas.memory.retrieval.ranking import RankJob, RankSources, has_terms, rescored_here
from societas.memory.retrieval.scoring import Numbers, base_terms, weighted_relevance
from societas.memory.vectorstores import ScoredPoint

if TYPE_CHECKING:
    from societas.memory.retrieval.sparse_index import AgentPostings


# Batch size from which all searches' top k are taken at once (_take_tops), not one by one.
SEGMENTED_AT = 32


class RamRanker:
    """Ranks a group's searches from its `SparseIndex` (see the module docstring)."""

    def __init__(self, group: RankSources) -> None:
        self.group = group

    def eligible(self, jobs: Sequence[RankJob]) -> list[bool]:
        """Which of these searches are answered from RAM."""
        g = self.group
        if g.sparse_index is None or not rescored_here(g):  # MMR, rank fusion: engine
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

    def rank(self, jobs: Sequence[RankJob], now: float) -> None:
        """Fill each job's `hits` with its exact top `limit`, best first (ties: newest)."""
        g = self.group
        cfg = g.config.retrieval
        index = g.sparse_index
        assert index is not None
        hot_ids = g.hot.row_of
        expiring = g.expiring
        agents = index.agents
        f64 = np.float64
        found = [
            (job, p)
            for job in jobs
            if (p := agents.get(job.request.agent_id)) is not None and len(p)
        ]
        if not found:
            return
        # α·recency + β·importance of every row of the batch's agents; a search takes a slice.
        rows = Numbers(
            time=np.frombuffer(b"".join([p.times for _, p in found]), f64),
            importance=np.frombuffer(b"".join([p.importances for _, p in found]), f64),
        )
        base = rows.add(base_terms(rows, cfg, now))
        segmented = len(found) >= SEGMENTED_AT
        matched: list[NDArray[np.intp]] = []  # rows of the batch holding a query term
        products: list[NDArray[np.float64]] = []  # and their idf · q · d, in posting order
        masks: list[NDArray[np.bool_] | None] = []
        end = 0
        for job, p in found:
            r = job.request
            n_all = len(p.ids)
            start, end = end, end + n_all
            mask: NDArray[np.bool_] | None = None
            if "warm" not in r.tiers:  # hot only: the rows still in RAM columns
                mask = np.fromiter((i in hot_ids for i in p.ids), np.bool_, n_all)
            if r.topic is not None:
                hit = np.frombuffer(p.topics, np.uint16) == index.topic_id_of(r.topic)
                mask = hit if mask is None else mask & hit
            if r.day_range is not None:
                times = np.frombuffer(p.times, f64)
                first, last = r.day_range[0] * 86_400.0, (r.day_range[1] + 1) * 86_400.0
                inside = (times >= first) & (times < last)
                mask = inside if mask is None else mask & inside
            if expiring:
                alive = np.fromiter(
                    (expiring.get(i, math.inf) > now for i in p.ids), np.bool_, n_all
                )
                mask = alive if mask is None else mask & alive
            sparse = job.vectors.sparse
            if sparse is not None:
                weights = index.query_weights(sparse) if job.weights is None else job.weights
                if (terms := index.matches(p, weights)) is not None:
                    matched.append(terms[0] + start)
                    products.append(terms[1])
            masks.append(mask)
        # γ·relevance of the matched rows, summed per row in one count; it is 0 elsewhere.
        raw = np.zeros(len(base)) if cfg.candidates == "relevant" else None  # all rows: a mask
        if matched:
            at = np.concatenate(matched)  # ascending: rows ascend per job, jobs one after another
            new = np.ones(len(at), np.bool_)
            new[1:] = at[1:] != at[:-1]
            rows_hit, sums = at[new], np.bincount(new.cumsum() - 1, np.concatenate(products))
            ends = np.cumsum([len(p.ids) for _, p in found])
            scales = np.array([job.scale for job, _ in found])[ends.searchsorted(rows_hit, "right")]
            base[rows_hit] += weighted_relevance(Numbers(0, 0, sums), cfg, g.normalization, scales)
            if raw is not None:
                raw[rows_hit] = sums
        picks: list[tuple[RankJob, AgentPostings, int]] = []  # segmented: (job, postings, k)
        end = 0
        for (job, p), given in zip(found, masks, strict=True):
            n_all = len(p.ids)
            start, end = end, end + n_all
            score = base[start:end]  # this search's own slice: changed in place below
            mask = given
            if raw is not None and has_terms(job.vectors):
                relevant = raw[start:end] > 0
                mask = relevant if mask is None else mask & relevant
            n = n_all if mask is None else int(np.count_nonzero(mask))
            job.candidates = job.scored = n
            if segmented:  # left out rows score -inf: never taken while a candidate is left
                if mask is not None:
                    score[~mask] = -np.inf
                picks.append((job, p, min(job.limit, n)))
            elif n:
                kept = None if mask is None else mask.nonzero()[0]
                chosen = score if kept is None else score[kept]
                job.hits = _top(p, chosen, kept, min(job.limit, n))
        if picks:
            _take_tops(base, picks)


def _take_tops(score: np.ndarray, picks: Sequence[tuple[RankJob, AgentPostings, int]]) -> None:
    """Each job's top k (ties newest first) by k segmented argmax passes; uses up `score`."""
    lengths = np.fromiter((len(p.ids) for _, p, _ in picks), np.intp, len(picks))
    starts = np.zeros(len(picks), np.intp)
    np.cumsum(lengths[:-1], out=starts[1:])
    k_max = max(k for _, _, k in picks)
    rows = np.empty((len(picks), k_max), np.intp)
    best = np.empty((len(picks), k_max))
    last = np.empty(len(score), bool)
    for i in range(k_max):
        top = np.maximum.reduceat(score, starts)
        at = np.flatnonzero(score == top.repeat(lengths))  # every segment has its max
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
    """The k best of `score` over `rows`, best first, ties newest first; uses up `score`."""
    ids = p.ids
    reversed_score = score[::-1]
    last = len(score) - 1
    out = []
    for _ in range(k):
        i = last - int(reversed_score.argmax())
        out.append(ScoredPoint(ids[i] if rows is None else ids[int(rows[i])], float(score[i])))
        score[i] = -np.inf
    return out
