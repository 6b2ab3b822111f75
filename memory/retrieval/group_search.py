"""The read side of a group's stream: ranked search, associations, records from any tier."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from societas.memory.architectures.finmem import layered_requests, merge_layers
from societas.memory.model.associations import Association, weighted_neighbours
from societas.memory.model.records import (
    MemoryHit,
    MemoryRecord,
    SearchRequest,
    record_from_payload,
)
from societas.memory.retrieval.hits import HotHits, waiting_warm_hits
from societas.memory.retrieval.ranking import RankJob
from societas.memory.retrieval.scoring import Numbers, exact_match_score, mmr_select, score_of
from societas.memory.store.id_map import BATCH_AT
from societas.memory.tiers.cold import cold_relevance
from societas.memory.vectorstores import PointFilter, ScoredPoint

if TYPE_CHECKING:
    from societas.memory.architectures.profiles import AgentProfiles
    from societas.memory.embedding import Embedder, SparseVector, TextVectors
    from societas.memory.model.associations import AssociationIndex
    from societas.memory.model.clock import SimClock
    from societas.memory.model.records_meta import AccessLedger
    from societas.memory.policies.forgetting import AssociationPolicy
    from societas.memory.retrieval.ranking import Ranker
    from societas.memory.retrieval.scoring import RetrievalConfig
    from societas.memory.retrieval.sparse_index import SparseIndex
    from societas.memory.store.hot_store import HotStore
    from societas.memory.store.id_map import IdMap
    from societas.memory.store.write_queue import OwnedLock, WriteQueue
    from societas.memory.tiers.access_log import AccessLog
    from societas.memory.tiers.cold import ColdStore
    from societas.memory.vectorstores import VectorStore

__all__ = ["GroupSearch", "waiting_warm_hits"]  # the group binds the latter (timing hooks wrap it)


class GroupSearch:
    """Search, spreading activation, get_by_ids and links over a group's tiers."""

    def __init__(
        self,
        retrieval: RetrievalConfig,
        spreading: AssociationPolicy,
        *,
        clock: SimClock,
        embedder: Embedder,
        store: VectorStore,
        hot: HotStore,
        cold: ColdStore,
        ranker: Ranker,
        sparse_index: SparseIndex | None,
        search_cold: bool,
        normalization: str,
        profiles: AgentProfiles,
        associations: AssociationIndex,
        access: AccessLedger,
        access_log: AccessLog | None,
        expiring: dict[int, float],
        unsent: IdMap | None,
        counters: dict[str, int],
        known_agents: set[int],
        require_agent: Callable[[int], None],
        op_lock: OwnedLock,
        writes: WriteQueue,
        sync_writes: Callable[[], Awaitable[None]],
        warm_hits: Callable[[list[int], list[float], list[int]], dict[int, MemoryHit]],
        boost: Callable[[Sequence[MemoryHit]], None],
    ) -> None:
        self.retrieval, self.spreading = retrieval, spreading
        self.clock, self.embedder = clock, embedder
        self.store, self.hot = store, hot
        self.cold, self.ranker = cold, ranker
        self.sparse_index, self.search_cold = sparse_index, search_cold
        self.normalization, self.sync_writes = normalization, sync_writes
        self.profiles = profiles  # swapped for a quiet copy by a survey (forgetting off)
        self.associations, self.access = associations, access
        self.access_log, self.expiring = access_log, expiring
        self.unsent, self.counters = unsent, counters
        self.known_agents, self.require_agent = known_agents, require_agent
        self.op_lock, self.writes = op_lock, writes
        self._warm_hits = warm_hits  # memories waiting in RAM for the engine, as hits
        self._boost = boost  # FinMem access boosts (memory.architectures.finmem)

    async def search_many(self, requests: Sequence[SearchRequest]) -> list[list[MemoryHit]]:
        """Rank many agents' memories by α·recency + β·importance + γ·relevance."""
        per_layer = (
            layered_requests(self.profiles, requests) if self.profiles.any_forgetting else None
        )
        if per_layer is not None:  # FinMem: top_k of every layer, merged
            flat, spans = per_layer
            return merge_layers(await self.search_many(flat), spans)
        async with self.op_lock:
            await self.writes.apply(kv=False)  # read-your-writes: queued adds first
            if not requests:
                return []
            agents = self.known_agents
            for r in requests:
                if r.agent_id not in agents:
                    self.require_agent(r.agent_id)  # raises, naming it
            mmr = self.retrieval.mmr_lambda
            vectors = await self.embedder.embed_queries([r.query for r in requests])
            now = self.clock.abs_seconds
            jobs = {
                i: RankJob(r, v, None, r.top_k)  # filter: made if the engine ranks it
                for i, (r, v) in enumerate(zip(requests, vectors, strict=True))
                if "warm" in r.tiers or "hot" in r.tiers
            }
            await self.ranker.rank(list(jobs.values()), now)
            if mmr is not None:
                for job in jobs.values():
                    job.hits = self._diversify(job.hits, job.limit, mmr)
            results = await self._hits_of(requests, jobs)
            may_hold = self.cold.may_hold
            cold = [  # the batch's cold searches, off the loop in one hand-off (if any)
                (i, r, v)
                for i, (r, v) in enumerate(zip(requests, vectors, strict=True))
                if "cold" in r.tiers
                and (self.search_cold or "tiers" in r.model_fields_set)
                and may_hold(r.agent_id)
            ]
            found: list[list[MemoryHit]] = []
            if cold:
                one = self._cold_search
                found = await asyncio.to_thread(
                    lambda: [one(r, v, now, jobs.get(i), results[i]) for i, r, v in cold]
                )
            for (i, r, _), cold_hits in zip(cold, found, strict=True):
                merged = results[i] + cold_hits
                results[i] = sorted(merged, key=lambda h: (-h.score, -h.id))[: r.top_k]
            for i, (r, v) in enumerate(zip(requests, vectors, strict=True)):
                if r.expand:
                    scale = jobs[i].scale if i in jobs else 1.0
                    results[i] = await self._spread(r, results[i], v, scale)
            if self.profiles.any_forgetting:  # a retrieved memory gains importance (FinMem)
                self._boost([h for hits in results for h in hits if h.tier != "cold"])
            if self.access_log is not None:
                for r, hits in zip(requests, results, strict=True):
                    self.access_log.log(now, "read", [(h.agent_id, h.id) for h in hits], r.query)
            # Reads counted in RAM; written to the store in batches at tick end (no per-hit write).
            self.access.record(
                [h.id for hits in results for h in hits if h.tier != "cold"],
                now,
                self.hot,
                self.unsent,
            )
            counters, done = self.counters, jobs.values()
            counters["searches"] += len(requests)
            counters["retrieval_candidates"] += sum(job.candidates for job in done)
            counters["retrieval_scored"] += sum(job.scored for job in done)
            counters["retrieval_exhaustive"] += sum(job.exhaustive for job in done)
            return results

    async def _hits_of(
        self, requests: Sequence[SearchRequest], jobs: dict[int, RankJob]
    ) -> list[list[MemoryHit]]:
        """Each request's ranked points as hits (`_hits_from`, with the jobs' payloads)."""
        found = [p for job in jobs.values() for p in job.hits]
        ids, scores = [p.id for p in found], [p.score for p in found]
        counts = [len(jobs[i].hits) if i in jobs else 0 for i in range(len(requests))]
        payloads = {k: v for job in jobs.values() for k, v in job.payloads.items()}
        return await self._hits_from(ids, scores, counts, payloads)

    async def _hits_from(
        self, ids: list[int], scores: list[float], counts: list[int], payloads: dict[int, dict]
    ) -> list[list[MemoryHit]]:
        """Ranked memories as hits, `counts[i]` for request i, from RAM columns or the engine."""
        row_of = self.hot.row_of  # each hit's hot row, or None (warm)
        row_get = row_of.get
        if len(ids) < BATCH_AT:
            rows = [row_get(memory_id) for memory_id in ids]
        else:  # a batch's hits looked up in numpy passes
            rows = [None if r < 0 else r for r in row_of.get_array(ids).tolist()]
        results: list[list[MemoryHit]] = []
        if None not in rows:  # every hit hot (the usual case): one batch, cut per request
            hits = HotHits(self.hot).many(ids, scores, cast("list[int]", rows))
            start = 0
            for count in counts:
                results.append(hits[start : start + count])
                start += count
            return results
        warm_at = [j for j, row in enumerate(rows) if row is None]
        pending_hits = self._warm_hits(ids, scores, warm_at)  # from RAM columns, now
        warm_ids = [ids[j] for j in warm_at if j not in pending_hits]
        records = {}
        if warm_ids:  # read from the engine: that may wait, so hot rows are looked up after
            records = await self._records(warm_ids, payloads)
            rows = [row_get(memory_id) for memory_id in ids]
        # After the last await: the hot columns stay as they are.
        hot_at = [j for j, row in enumerate(rows) if row is not None]
        hot_hits = iter(
            HotHits(self.hot).many(
                [ids[j] for j in hot_at],
                [scores[j] for j in hot_at],
                [row for row in rows if row is not None],
            )
        )  # taken below in the same order
        start = 0
        for count in counts:
            out: list[MemoryHit] = []
            for j in range(start, start + count):
                if rows[j] is not None:
                    out.append(next(hot_hits))
                elif j in pending_hits:
                    out.append(pending_hits[j])
                elif ids[j] in records:
                    out.append(_hit(records[ids[j]], scores[j], "warm"))
            results.append(out)
            start += count
        return results

    async def _spread(
        self, r: SearchRequest, hits: list[MemoryHit], query: TextVectors, scale: float
    ) -> list[MemoryHit]:
        """Spreading activation: a linked memory adds hit score × decay × type weight × strength."""
        policy = self.spreading
        active: dict[int, float] = {}
        reached: dict[int, MemoryRecord] = {h.id: h for h in hits}  # the records at hand
        frontier, cold = [(h.id, h.score) for h in hits], set[int]()  # cold: read from cold
        for _ in range(policy.max_hops):
            spread: dict[int, float] = {}
            for memory_id, score in frontier:
                rec = reached[memory_id]
                shares = weighted_neighbours(rec, self.associations, policy.type_weights)
                for neighbour, share in shares.items():
                    activation = score * policy.decay * share
                    if activation > max(spread.get(neighbour, 0.0), active.get(neighbour, 0.0)):
                        spread[neighbour] = activation
            new = [i for i in spread if i not in reached]  # expired or another's: not found
            reached.update(await self._find(new, r.agent_id, cold))
            frontier = [(i, a) for i, a in spread.items() if i in reached]
            active.update(frontier)
        scores = {h.id: h for h in hits}
        others = [rec for i, rec in reached.items() if i not in scores]
        for rec, own in zip(
            others, self._own_scores(r.agent_id, others, query, scale), strict=True
        ):
            tier = "hot" if rec.id in self.hot else "cold" if rec.id in cold else "warm"
            scores[rec.id] = _hit(rec, own, tier)
        out = [
            h.model_copy(update={"score": h.score + active.get(h.id, 0.0)}) for h in scores.values()
        ]
        return sorted(out, key=lambda h: (-h.score, -h.id))[: r.top_k]

    def _own_scores(
        self, agent_id: int, records: Sequence[MemoryRecord], query: TextVectors, scale: float
    ) -> list[float]:
        """The score of memories that were not hits (relevance from the RAM or cold index)."""
        index, raw = self.sparse_index, []
        weights = dict(index.query_weights(query.sparse)) if index and query.sparse else {}
        for rec in records:
            vec = index.vector(rec.agent_id, rec.id) if index and weights else None
            vec = vec or (self.cold.index().vector(rec.agent_id, rec.id) if weights else None)
            pairs = zip(vec.indices, vec.values, strict=True) if vec else ()
            raw.append(sum(weights.get(t, 0.0) * v for t, v in pairs))
        times, imps = [rec.time for rec in records], [rec.importance for rec in records]
        since, layer = [rec.layer_since for rec in records], [rec.layer for rec in records]
        numbers = Numbers(np.array(times), np.array(imps), np.array(raw), np.array(since), layer)
        now, norm, profiles = self.clock.abs_seconds, self.normalization, self.profiles
        layers = (profiles.layer_decay(agent_id), profiles.layer_recency(agent_id))
        return score_of(numbers, self.retrieval, now, norm, True, *layers, scale).tolist()

    def point_filter(self, r: SearchRequest) -> PointFilter:
        hot_only = "warm" not in r.tiers
        return PointFilter(
            agent_id=r.agent_id,
            topic=r.topic,
            day_range=r.day_range,
            time_range=r.time_range,
            location=r.location,
            ids=self.hot.memory_ids(r.agent_id) if hot_only else None,
            types=r.types,
            tags=r.tags,
            layers=r.layers,
            alive_at=self.clock.abs_seconds if self.expiring else None,
        )

    def _cold_search(
        self,
        r: SearchRequest,
        query: TextVectors,
        now: float,
        job: RankJob | None = None,
        found: Sequence[MemoryHit] = (),
    ) -> list[MemoryHit]:
        """Cold memories beating the k-th of `found`: from the cold index if it holds the filter."""
        flt = dataclasses.replace(self.point_filter(r), ids=None, alive_at=now)
        index, sparse = self.sparse_index, query.sparse
        cfg, norm = self.retrieval, self.normalization
        filters = (r.location, r.types, r.tags, r.time_range)  # not in the cold index
        if sparse is not None and query.dense is None and all(f is None for f in filters):
            kth = (found[-1].score, found[-1].id) if len(found) >= r.top_k else None
            weights, scale, relevant = None, None, cfg.candidates == "relevant"
            if job is not None and index is not None:  # as its hot and warm: the group's IDF
                weights = index.query_weights(sparse) if job.weights is None else job.weights
                scale, relevant = job.scale, relevant and not sparse.is_empty()
            profiles = self.profiles
            layers = (profiles.layer_decay(r.agent_id), profiles.layer_recency(r.agent_id))

            def score(n: Numbers, own_scale: float) -> Any:
                by = scale if scale is not None else own_scale if norm == "exact" else 1.0
                return score_of(n, cfg, now, norm, True, *layers, by)

            rows = self.cold.best(flt, sparse, weights, score, kth, r.top_k, relevant)
            return [_hit(record_from_payload(row["id"], row), s, "cold") for row, s in rows]
        table = self.cold.scan(flt)
        if table.num_rows == 0:
            return []
        rows = table.to_pylist()
        vectors = self.cold.vectors((row["id"] for row in rows), r.agent_id)
        docs = [vectors.get(row["id"]) for row in rows]
        raw, mode = cold_relevance(query, docs, self.normalization, cfg)
        scale = 1.0
        if mode == "exact" and query.sparse is not None:  # IDF over these rows, as cold's BM25
            held = [set(d.sparse.indices) if d and d.sparse else set() for d in docs]
            counts = (sum(t in h for h in held) for t in query.sparse.indices)
            idf = [math.log(1 + (len(held) - c + 0.5) / (c + 0.5)) for c in counts if c]
            scale = exact_match_score(idf, len(query.sparse.indices))
        numbers = Numbers(
            time=np.array([row["time"] for row in rows]),
            importance=np.array([row["importance"] for row in rows], np.float64),
            raw_relevance=np.array(raw, np.float64),
            layer_since=np.array([row["layer_since"] for row in rows], np.float64),
            layer=np.array([row["layer"] for row in rows]),
        )
        layers = (self.profiles.layer_decay(r.agent_id), self.profiles.layer_recency(r.agent_id))
        scores = score_of(numbers, cfg, now, mode, True, *layers, scale).tolist()
        hits = [
            _hit(record_from_payload(row["id"], row), score, "cold")
            for row, score, rel in zip(rows, scores, raw, strict=True)
            if rel > 0.0 or cfg.candidates != "relevant"
        ]
        return sorted(hits, key=lambda h: (-h.score, -h.id))[: r.top_k]

    @staticmethod
    def _diversify(hits: list[ScoredPoint], top_k: int, lambda_: float) -> list[ScoredPoint]:
        vectors = [v for p in hits if (v := _dense_or_sparse(p.vectors)) is not None]
        if len(vectors) < len(hits):  # a hit without vectors: MMR cannot compare it
            return hits[:top_k]
        order = mmr_select([p.score for p in hits], vectors, top_k, lambda_)
        return [hits[i] for i in order]

    async def _records(
        self, memory_ids: Iterable[int], payloads: dict[int, dict[str, Any]] | None = None
    ) -> dict[int, MemoryRecord]:
        """Records for ids from the hot tier, else payloads at hand, else the vector store."""
        found: dict[int, MemoryRecord] = {}
        missing: list[int] = []
        for memory_id in memory_ids:
            if memory_id in self.hot:
                found[memory_id] = self.hot.record(memory_id)
            elif payloads and memory_id in payloads:
                found[memory_id] = self._warm_record(memory_id, payloads[memory_id])
            elif memory_id not in found:
                missing.append(memory_id)
        if missing:
            for memory_id, payload in (await self.store.retrieve(missing)).items():
                found[memory_id] = self._warm_record(memory_id, payload)
        return found

    def _warm_record(self, memory_id: int, payload: dict[str, Any]) -> MemoryRecord:
        """A warm record with the reads not yet written to the store counted in."""
        record = record_from_payload(memory_id, payload)
        if memory_id in self.access.pending:
            count = self.access.overlay(memory_id, record.access_count)
            last = self.access.last[memory_id]
            record = record.model_copy(update={"access_count": count, "last_accessed": last})
        return record

    def _cold_records(self, ids: Sequence[int], agent_id: int | None) -> dict[int, MemoryRecord]:
        """Cold records by id (of `agent_id`'s row groups only, when given)."""
        flt = None if agent_id is None else PointFilter(agent_id=agent_id)
        rows = self.cold.scan(flt, ids=ids).to_pylist()
        return {row["id"]: record_from_payload(row["id"], row) for row in rows}

    async def get_by_ids(
        self, memory_ids: Iterable[int], agent_id: int | None = None
    ) -> list[MemoryRecord]:
        """Memories by id from any tier, in the order asked; KeyError naming a missing id."""
        ids = list(memory_ids)
        return _in_order(ids, await self._find(ids, agent_id, set()), agent_id)

    async def _find(
        self, memory_ids: Sequence[int], agent_id: int | None, cold: set[int]
    ) -> dict[int, MemoryRecord]:
        """Unexpired records by id from any tier (of `agent_id` if given; `cold` gets cold ones)."""
        await self.sync_writes()
        records = await self._records(memory_ids)
        missing = [i for i in memory_ids if i not in records]
        if missing and (agent_id is None or self.cold.may_hold(agent_id)):
            frozen = await asyncio.to_thread(self._cold_records, missing, agent_id)
            records.update(frozen)
            cold.update(frozen)
        now = self.clock.abs_seconds
        return {
            i: rec
            for i, rec in records.items()
            if (rec.expires_at is None or rec.expires_at > now)
            and (agent_id is None or rec.agent_id == agent_id)
        }

    async def link_cognitions(
        self, links: Sequence[tuple[int, Sequence[int], int]], skip_cold: bool = False
    ) -> None:
        """Link (agent, memories, cognition) in order, one write; `skip_cold`: skip cold, gone."""
        lists: dict[tuple[int, str], list[int]] = {}  # (memory, links | evidence) as linked so far
        done: list[tuple[list[int], int]] = []
        for agent_id, memory_ids, cognition_id in links:
            self.require_agent(agent_id)
            found = await self._find([*memory_ids, cognition_id], agent_id, cold := set[int]())
            kept = [i for i in memory_ids if (i in found and i not in cold) or not skip_cold]
            *sources, cognition = _in_order([*kept, cognition_id], found, agent_id)
            if frozen := [r.id for r in (*sources, cognition) if r.id in cold]:
                raise ValueError(f"memories {frozen} are in the cold tier: link hot or warm ones")
            done.append((kept, cognition_id))
            given = lists.get((cognition_id, "evidence"), cognition.evidence_ids)
            lists[(cognition_id, "evidence")] = [*dict.fromkeys([*given, *kept])]
            for r in sources:
                given = lists.get((r.id, "links"), r.cognition_ids)
                lists[(r.id, "links")] = [*dict.fromkeys([*given, cognition_id])]
        for kept, cognition_id in done:
            self.hot.link(kept, cognition_id)
        shared: dict[tuple[str, tuple[int, ...]], list[int]] = {}  # one write per payload
        for (memory_id, key), value in lists.items():
            shared.setdefault((key, tuple(value)), []).append(memory_id)
        await self.store.set_payloads([(ids, {k: [*v]}) for (k, v), ids in shared.items()])

    async def associate(self, associations: Sequence[Association]) -> None:
        """Add typed associations; both ends must be memories of the same agent."""
        for a in associations:
            (src,) = await self.get_by_ids([a.source])
            await self.get_by_ids([a.target], src.agent_id)  # KeyError: not that agent's
        self.associations.add_many(associations)

    async def related_cognition(self, agent_id: int, memory_id: int) -> list[MemoryRecord]:
        """The cognition memories `memory_id` is linked to."""
        (record,) = await self.get_by_ids([memory_id], agent_id)
        return await self.get_by_ids(record.cognition_ids, agent_id)


def _dense_or_sparse(vectors: TextVectors | None) -> SparseVector | Sequence[float] | None:
    """The vector MMR compares: dense when there is one, else sparse."""
    if vectors is None:
        return None
    return vectors.dense if vectors.dense is not None else vectors.sparse


def _in_order(
    ids: Sequence[int], records: dict[int, MemoryRecord], agent_id: int | None
) -> list[MemoryRecord]:
    """The records of `ids` in that order; KeyError naming an id missing (or not the agent's)."""
    out = []
    for memory_id in ids:
        record = records.get(memory_id)
        if record is None or (agent_id is not None and record.agent_id != agent_id):
            owner = "" if agent_id is None else f" of agent {agent_id}"
            raise KeyError(f"unknown memory id {memory_id!r}{owner}")
        out.append(record)
    return out


def _hit(record: MemoryRecord, score: float, tier: str) -> MemoryHit:
    """The record as a hit; its fields were validated when the record was made."""
    return MemoryHit.model_validate({**record.__dict__, "score": float(score), "tier": tier})
