"""One agent's plain search, alone on the loop, answered from RAM without the batch machinery.

A simulation that steps its agents one after another sends its searches one at a time, each
a batch of one (memory.batching). The batch path pays, per call, what it shares between many
searches: the request list, a rank job and its dict, the RAM/engine split, the ranker's
settings, the hit rows cut per request, the counters summed over jobs (~225,000 instructions
a lone search, most of them Python, against ~10,000 in the two kernels). The common search —
hot and warm memories, no filter, no expansion, no FinMem layers, no MMR, BM25 only, the
compiled kernels built — goes through here instead: the same kernels on the same arrays, so
the same hits, scores, read counts and counters (tests compare it with the batch path);
anything else takes the batch path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.memory import rank_kernel
from societas.memory.fast_requests import DEFAULT_TIERS
from societas.memory.hits import HotHits
from societas.memory.ranking import RankJob
from societas.memory.vectorstores import ScoredPoint

if TYPE_CHECKING:
    from societas.memory.fast_requests import PlainSearch
    from societas.memory.group import GroupMemory
    from societas.memory.records import MemoryHit, SearchRequest


def takes_alone(group: GroupMemory, r: SearchRequest | PlainSearch) -> bool:
    """Whether `search_alone` answers `r` as the batch path would (see the module doc)."""
    return (
        r.topic is None
        and r.day_range is None
        and r.tiers == DEFAULT_TIERS
        and not r.expand
        and r.location is None
        and r.time_range is None
        and r.types is None
        and r.tags is None
        and r.layers is None
        and group.ram_ranker is not None
        and group.embedder.dense_size is None
        and not group.expiring
        and group.access_log is None
        and not group.profiles.any_forgetting
        and rank_kernel.KERNEL is not None
        and rank_kernel.HITS is not None
        and group.ranker.fast_path()
    )


async def search_alone(group: GroupMemory, r: SearchRequest | PlainSearch) -> list[MemoryHit]:
    """The hits of one search `takes_alone` accepted. The caller holds the operation lock and
    has applied the queued writes."""
    vectors = (await group.embedder.embed_queries([r.query]))[0]
    now = group.clock.abs_seconds
    ram = group.ram_ranker
    assert ram is not None
    ids, scores, n = ram.rank_one(r, vectors.sparse, now)
    hot = group.hot
    row_get = hot.row_of.get
    rows = [row_get(memory_id) for memory_id in ids]
    if None in rows:  # a warm hit: read as the batch path reads it (RAM columns or engine)
        job = RankJob(r, vectors, None, r.top_k)
        job.hits = list(map(ScoredPoint, ids, scores))
        hits = (await group._hits_of((r,), {0: job}))[0]
    else:  # every hit hot (the usual case): one kernel call
        hits = HotHits(hot).many(ids, scores, rows)
    group.access.record([h.id for h in hits], now, hot)
    counters = group.counters
    counters["searches"] += 1
    counters["retrieval_candidates"] += n
    counters["retrieval_scored"] += n
    return hits
