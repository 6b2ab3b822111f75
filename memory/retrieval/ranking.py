"""Exact Generative Agents retrieval over all of an agent's hot and warm memories."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from societas.memory.embedding import SparseVector, TextVectors
from societas.memory.model.records import SearchRequest
from societas.memory.retrieval.scoring import Numbers, base_terms, exact_match_score, relevance_term
from societas.memory.vectorstores import PointFilter, ScoredPoint, VectorQuery

if TYPE_CHECKING:
    from societas.memory.architectures.profiles import AgentProfiles
    from societas.memory.model.config import GroupMemoryConfig
    from societas.memory.retrieval.sparse_index import SparseIndex
    from societas.memory.store.hot_store import HotStore
    from societas.memory.vectorstores import VectorStore

TIE_MARGIN = 16  # engine results fetched beyond top_k so exact score ties are ordered here
_EPS = 1e-9  # a bound this close to the k-th score counts as a possible winner


@dataclass(slots=True)
class RankJob:
    """One search to rank: the request, its query vectors, filter and result count."""

    request: SearchRequest
    vectors: TextVectors
    filter: PointFilter | None  # None until a search needs the engine (RAM ranking does not)
    limit: int
    hits: list[ScoredPoint] = field(default_factory=list)  # result, best first
    payloads: dict[int, dict[str, Any]] = field(default_factory=dict)  # warm payloads read
    candidates: int = 0  # memories the score covers
    scored: int = 0  # memories scored exactly
    exhaustive: bool = False  # rescored in the engine over all memories
    scale: float = 1.0  # the `exact` normalisation's scale of the query (Ranker.scale)
    weights: list[tuple[int, float]] | None = None  # (term, q·idf) from the RAM index


@dataclass(slots=True)
class _Pass:
    """A job's exactly scored candidates and what is only bounded so far (numpy arrays)."""

    ids: np.ndarray  # exactly scored memory ids
    scores: np.ndarray
    open_ids: np.ndarray  # hot memories whose relevance is unknown (hit list cut short)
    open_bounds: np.ndarray
    warm_ids: np.ndarray  # warm-only hits: relevance known, time and importance not
    warm_rel: np.ndarray
    warm_rest_bound: float | None  # bound on warm-only non-hits (None: there are none)
    warm_base_bound: float  # α·recency + β·importance bound of any warm-only memory
    warm_max_id: float  # warm-only ids are below this


def has_terms(vectors: TextVectors) -> bool:
    """Whether a query vector carries any relevance signal."""
    if vectors.dense is not None:
        return True
    return vectors.sparse is not None and not vectors.sparse.is_empty()


class RankSources(Protocol):
    """What ranking reads of a group, read at each call (a restore may replace them)."""

    config: GroupMemoryConfig
    normalization: str
    hot: HotStore
    sparse_index: SparseIndex | None
    store: VectorStore
    profiles: AgentProfiles
    warm_counts: dict[int, int]
    max_importance: dict[int, float]
    expiring: dict[int, float]
    counters: dict[str, int]

    def point_filter(self, r: SearchRequest) -> PointFilter: ...


def rescored_here(sources: RankSources) -> bool:
    """Python rescoring applies to one relevance signal (not RRF) without MMR."""
    return sources.config.retrieval.mmr_lambda is None and sources.normalization in (
        "exact",
        "saturate",
        "identity",
    )


class Ranker:
    """Ranks a batch of searches of one group exactly (see the module docstring)."""

    def __init__(self, group: RankSources) -> None:
        from societas.memory.retrieval.ram_ranking import RamRanker

        self.group = group
        self.ram = RamRanker(group) if group.sparse_index is not None else None

    def pool(self, job: RankJob) -> int:
        """How many memories an exhaustive engine query must consider for this agent."""
        return max(self._covered(job), self.group.config.retrieval.candidate_limit) + 8

    async def rank(self, jobs: Sequence[RankJob], now: float) -> None:
        """Fill each job's `hits` with its exact top `limit`, best first."""
        fallback: list[RankJob] = list(jobs)
        await self.scale(fallback)
        if self.ram is not None:  # answered from RAM (memory.retrieval.ram_ranking); the rest below
            in_ram = self.ram.eligible(fallback)
            self.ram.rank([j for j, ok in zip(fallback, in_ram, strict=True) if ok], now)
            fallback = [j for j, ok in zip(fallback, in_ram, strict=True) if not ok]
        if not fallback:  # the usual case: nothing left for the engine
            return
        for job in fallback:  # the engine's conditions, for the searches that go there
            if job.filter is None:
                job.filter = self.group.point_filter(job.request)
        if rescored_here(self.group):
            fallback = await self._rank_fast(fallback, now)
        await self._rank_in_engine(fallback, now)

    async def scale(self, jobs: Sequence[RankJob]) -> None:
        """Set each sparse search's `exact` scale with the IDF the engine's relevance uses."""
        g, probes = self.group, []
        index = g.sparse_index
        exact = g.normalization == "exact"
        for job in jobs:
            if (query := job.vectors.sparse) is None:
                continue
            n = len(query.indices)
            if index is not None:
                job.weights = index.query_weights(query)
                if exact:
                    job.scale = exact_match_score((w for _, w in job.weights), n)
            elif exact:
                job.scale = 0.0
                probes += [(job, t, w, n) for t, w in zip(query.indices, query.values, strict=True)]
        every = PointFilter(agent_id=0, every_agent=True)
        one_term = [TextVectors(sparse=SparseVector.of([p[1]], [1.0])) for p in probes]
        asked = [VectorQuery(v, every, 1, with_payload=False, with_vectors=True) for v in one_term]
        for (job, term, w, n), hits in zip(probes, await g.store.query_batch(asked), strict=True):
            vec = hits[0].vectors.sparse if hits and hits[0].vectors else None
            d = dict(zip(vec.indices, vec.values, strict=True)).get(term) if vec else None
            job.scale += exact_match_score([w * hits[0].score / d], n) if d else 0.0

    async def _rank_in_engine(self, jobs: Sequence[RankJob], now: float) -> None:
        """The formula query over all of each agent's memories (the pool), then tie order."""
        if not jobs:
            return
        g = self.group
        retrieval = g.config.retrieval
        mmr = retrieval.mmr_lambda
        queries = [
            VectorQuery(
                vectors=job.vectors,
                filter=_engine_filter(job),
                # The engine breaks exact ties at random: the order (score, newest) is set here.
                limit=job.limit + TIE_MARGIN if mmr is None else max(job.limit * 4, job.limit + 8),
                now=now,
                scoring=retrieval,
                normalization=g.normalization,
                with_payload=False,
                with_vectors=mmr is not None,
                layer_decay=g.profiles.layer_decay(job.request.agent_id),
                layer_recency=g.profiles.layer_recency(job.request.agent_id),
                candidates=self.pool(job),
                relevance_scale=job.scale,
            )
            for job in jobs
        ]
        found = await g.store.query_batch(queries)
        g.counters["vector_queries"] += len(queries)
        for job, query, hits in zip(jobs, queries, found, strict=True):
            ordered = sorted(hits, key=lambda p: (-p.score, -p.id))
            job.hits = ordered if mmr is not None else ordered[: job.limit]
            job.candidates = self._covered(job)
            job.scored = min(job.candidates, query.candidates or 0)
            job.exhaustive = True

    async def _rank_fast(self, jobs: Sequence[RankJob], now: float) -> list[RankJob]:
        """Rank what the bound settles; return the jobs the engine must rescore."""
        g = self.group
        cfg = g.config.retrieval
        gamma = cfg.relevance_weight
        asked = [job for job in jobs if has_terms(job.vectors)]
        limit = cfg.candidate_limit
        queries = [
            VectorQuery(j.vectors, _engine_filter(j), limit, with_payload=False) for j in asked
        ]
        found = await g.store.query_batch(queries)
        g.counters["vector_queries"] += len(asked)
        relevance = {id(job): hits for job, hits in zip(asked, found, strict=True)}
        passes = [self._first_pass(job, relevance.get(id(job), []), now) for job in jobs]
        # Read the warm-only hits that could still win, all searches at once.
        wanted: list[int] = []
        for job, p in zip(jobs, passes, strict=True):
            if len(p.warm_ids):
                kth = _kth(p.ids, p.scores, job.limit)
                maybe = _may_win(p.warm_base_bound + gamma * p.warm_rel, p.warm_ids, kth)
                wanted.extend(p.warm_ids[maybe].tolist())
        payloads = await g.store.retrieve(wanted) if wanted else {}
        rest: list[RankJob] = []
        for job, p in zip(jobs, passes, strict=True):
            ids, scores = p.ids, p.scores
            open_ids, open_bounds = [p.open_ids], [p.open_bounds]
            if len(p.warm_ids):
                read = np.fromiter((i in payloads for i in p.warm_ids.tolist()), bool)
                got = p.warm_ids[read].tolist()
                times = np.fromiter((payloads[i]["time"] for i in got), np.float64, len(got))
                imps = np.array([self._importance_of(payloads[i], now) for i in got], np.float64)
                read_rows = Numbers(time=times, importance=imps)
                layered = g.profiles.layer_recency(job.request.agent_id)
                if layered:
                    read_rows.layer = np.array([payloads[i].get("layer", "short") for i in got])
                    since = [payloads[i].get("layer_since", payloads[i]["time"]) for i in got]
                    read_rows.layer_since = np.array(since, np.float64)
                exact = read_rows.add(base_terms(read_rows, cfg, now, layer_recency=layered))
                ids = np.concatenate([ids, p.warm_ids[read]])
                scores = np.concatenate([scores, exact + gamma * p.warm_rel[read]])
                job.payloads.update((i, payloads[i]) for i in got)
                open_ids.append(p.warm_ids[~read])
                open_bounds.append(p.warm_base_bound + gamma * p.warm_rel[~read])
            if p.warm_rest_bound is not None:
                open_ids.append(np.array([p.warm_max_id], np.float64))
                open_bounds.append(np.array([p.warm_rest_bound]))
            order = np.lexsort((-ids, -scores))
            kth = _kth(ids, scores, job.limit)
            if _may_win(np.concatenate(open_bounds), np.concatenate(open_ids), kth).any():
                rest.append(job)
                continue
            top = order[: job.limit]
            job.hits = [
                ScoredPoint(id=i, score=sc)
                for i, sc in zip(ids[top].tolist(), scores[top].tolist(), strict=True)
            ]
            job.candidates = self._covered(job)
            job.scored = len(ids)
        return rest

    def _covered(self, job: RankJob) -> int:
        agent = job.request.agent_id
        hot = len(self.group.hot.rows_of_agent.get(agent, ()))
        if "warm" not in job.request.tiers:
            return hot
        return max(hot, self.group.warm_counts.get(agent, 0))

    def _decayed(self, rows: np.ndarray, imps: np.ndarray, now: float, agent: int) -> np.ndarray:
        """Forgetting on: hot importances × the layer's daily decay ** days since set."""
        hot, forgetting = self.group.hot, self.group.profiles.forgetting(agent)
        per_day: dict[str | None, float] = {
            name: p.importance_decay_per_day for name, p in forgetting.layers.items()
        }
        layers = hot.layers
        factor = np.fromiter((per_day[layers[r]] for r in rows.tolist()), np.float64, len(rows))
        since = np.frombuffer(hot.layer_since, np.float64)[rows]
        return imps * factor ** (np.maximum(0.0, now - since) / 86_400.0)

    def _importance_of(self, payload: dict[str, Any], now: float) -> float:
        """A warm payload's importance as the score uses it (decayed when forgetting is on)."""
        forgetting = self.group.profiles.forgetting(payload["agent_id"])
        if not forgetting.enabled:
            return payload["importance"]
        layer = payload.get("layer", "short")
        since = payload.get("layer_since", payload["time"])
        return forgetting.effective_importance(payload["importance"], layer, since, now)

    def _first_pass(self, job: RankJob, hits: list[ScoredPoint], now: float) -> _Pass:
        """Score the agent's hot memories from RAM and bound the warm-only ones."""
        g = self.group
        cfg = g.config.retrieval
        hot = g.hot
        agent = job.request.agent_id
        gamma = cfg.relevance_weight
        truncated = len(hits) >= cfg.candidate_limit
        relevant_only = cfg.candidates == "relevant" and has_terms(job.vectors)
        hit_ids = np.fromiter((p.id for p in hits), np.int64, len(hits))
        raw = Numbers(0.0, 0.0, np.fromiter((p.score for p in hits), np.float64, len(hits)))
        hit_rel = relevance_term(raw, g.normalization, cfg, job.scale)
        # Non-hits: relevance 0 if the hit list is complete, else at most the last hit's.
        rest_rel = float(hit_rel.min()) if truncated and len(hits) else 0.0

        deque_rows = hot.rows_of_agent.get(agent, ())
        rows = np.fromiter(deque_rows, np.int64, len(deque_rows))
        ids = np.frombuffer(hot.ids, np.int64)[rows]
        times = np.frombuffer(hot.times, np.float64)[rows]
        imps = np.frombuffer(hot.importances, np.float64)[rows]
        layered = g.profiles.layer_recency(agent)  # FinMem: recency by layer clock
        layers = np.array([hot.layers[r] for r in rows.tolist()]) if layered else rows
        since = np.frombuffer(hot.layer_since, np.float64)[rows] if layered else rows
        if g.profiles.forgetting(agent).enabled:
            imps = self._decayed(rows, imps, now, agent)
        oldest_hot_time = float(times.min()) if len(rows) else now  # none hot: now
        oldest_hot_id = float(ids.min()) if len(rows) else math.inf
        keep = self._hot_mask(_engine_filter(job), rows, times)
        if keep is not None:
            ids, times, imps, layers, since = (a[keep] for a in (ids, times, imps, layers, since))
        hot_rows = Numbers(time=times, importance=imps, layer=layers, layer_since=since)
        base = hot_rows.add(base_terms(hot_rows, cfg, now, layer_recency=layered))
        by_id = np.argsort(hit_ids)
        sorted_hits = hit_ids[by_id]
        where = np.searchsorted(sorted_hits, ids)
        where[where >= len(sorted_hits)] = 0
        is_hit = sorted_hits[where] == ids if len(hits) else np.zeros(len(ids), bool)
        score = base.copy()
        score[is_hit] += gamma * hit_rel[by_id][where[is_hit]]
        if truncated:
            exact = is_hit
            open_ids, open_bounds = ids[~is_hit], base[~is_hit] + gamma * rest_rel
        else:
            exact = is_hit if relevant_only else np.ones(len(ids), bool)
            open_ids, open_bounds = ids[:0], base[:0]
        row_of = hot.row_of
        warm = np.fromiter((i not in row_of for i in hit_ids.tolist()), bool, len(hits))
        warm_only = g.warm_counts.get(agent, 0) - len(rows) if "warm" in job.request.tiers else 0
        newest = hot.newest_evicted.get(agent, oldest_hot_time)
        # Warm-only memories: older than `newest`, at most the agent's top importance (layers: 1).
        newest = now if layered else min(newest, now)
        bound = Numbers(time=newest, importance=g.max_importance.get(agent, 1.0))
        warm_base = float(bound.add(base_terms(bound, cfg, now)))
        rest_bound = None
        if warm_only > int(warm.sum()) and (truncated or not relevant_only):
            rest_bound = warm_base + gamma * rest_rel
        return _Pass(
            ids=ids[exact],
            scores=score[exact],
            open_ids=open_ids,
            open_bounds=open_bounds,
            warm_ids=hit_ids[warm],
            warm_rel=hit_rel[warm],
            warm_rest_bound=rest_bound,
            warm_base_bound=warm_base,
            warm_max_id=oldest_hot_id,
        )

    def _hot_mask(self, flt: PointFilter, rows: np.ndarray, times: np.ndarray) -> Any:
        """Which of the agent's hot rows pass the search filter (None: all of them)."""
        hot, kept, listed = self.group.hot, [], rows.tolist()
        if flt.topic is not None:
            kept.append(hot.topics.equals(rows, flt.topic))
        if flt.location is not None:
            kept.append(hot.locations.equals(rows, flt.location))
        if flt.day_range is not None:
            start, end = flt.day_range[0] * 86_400.0, (flt.day_range[1] + 1) * 86_400.0
            kept.append((times >= start) & (times < end))
        if flt.time_range is not None:
            ts = np.frombuffer(hot.ts, np.float64)[rows]
            kept.append((ts >= flt.time_range[0]) & (ts <= flt.time_range[1]))
        if flt.ids is not None:
            wanted = np.fromiter(flt.ids, np.int64)
            kept.append(np.isin(np.frombuffer(hot.ids, np.int64)[rows], wanted))
        if flt.types is not None:
            kinds, types = set(flt.types), hot.types
            kept.append(np.fromiter((types[r] in kinds for r in listed), bool, len(listed)))
        if flt.tags is not None:
            wanted_tags, ids, tags = set(flt.tags), hot.ids, hot.tags
            has = (not wanted_tags.isdisjoint(tags.get(ids[r], ())) for r in listed)
            kept.append(np.fromiter(has, bool, len(listed)))
        if flt.alive_at is not None:
            kept.append(np.frombuffer(hot.expires, np.float64)[rows] > flt.alive_at)
        if flt.layers is not None:
            named, layers = set(flt.layers), hot.layers
            kept.append(np.fromiter((layers[r] in named for r in listed), bool, len(listed)))
        return np.logical_and.reduce(kept) if kept else None


def _engine_filter(job: RankJob) -> PointFilter:
    """The filter `Ranker.rank` set on every job before the engine paths see it."""
    assert job.filter is not None
    return job.filter


def _kth(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[float, float] | None:
    """The (score, id) a memory must beat to enter the top k (None: fewer than k so far)."""
    if len(ids) < k:
        return None
    i = np.lexsort((-ids, -scores))[k - 1]
    return float(scores[i]), float(ids[i])


def _may_win(bounds: np.ndarray, ids: np.ndarray, kth: tuple[float, float] | None) -> np.ndarray:
    """Which memories with these score bounds could enter the top k (ties: newer id wins)."""
    if kth is None:
        return np.ones(len(bounds), bool)
    score, kth_id = kth
    return (bounds > score + _EPS) | ((bounds > score - _EPS) & (ids > kth_id))
