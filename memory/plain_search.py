"""Plain searches answered from RAM without the general batch machinery, one or many at once.

The general path (GroupSearch.search_many) serves every kind of search, and pays for it per
search: a rank job with its own list and dict, the RAM/engine split, the ranker's settings,
scored points made and taken apart again, the hits cut per request, the counters summed over
jobs (~225,000 instructions a lone agent's search, most of them Python, against ~10,000 in
the two kernels). The common search — hot and warm memories, no filter but a topic, no
expansion, no FinMem layers, no MMR, BM25 only, the compiled kernels built — comes here
instead: the same kernels on the same arrays, so the same hits, scores, read counts and
counters (tests compare it with the general path, alone and in batches); a batch holding
any other search takes the general path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from societas.memory import rank_kernel
from societas.memory.fast_requests import DEFAULT_TIERS, PlainSearch
from societas.memory.hits import HotHits

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory
    from societas.memory.records import MemoryHit, SearchRequest


def takes_plain(group: GroupMemory, requests: Sequence[SearchRequest | PlainSearch]) -> bool:
    """Whether `search_plain` answers `requests` as the general path would."""
    return (
        group.ram_ranker is not None
        and group.embedder.dense_size is None
        and not group.expiring
        and group.access_log is None
        and not group.profiles.any_forgetting
        and rank_kernel.KERNEL is not None
        and rank_kernel.HITS is not None
        and group.ranker.fast_path()
        and all(type(r) is PlainSearch or _plain(r) for r in requests)  # PlainSearch: by make
    )


def _plain(r: SearchRequest | PlainSearch) -> bool:
    """A search with no field but the query, the topic and top k set (as a PlainSearch)."""
    return (
        r.day_range is None
        and r.tiers == DEFAULT_TIERS
        and not r.expand
        and r.location is None
        and r.time_range is None
        and r.types is None
        and r.tags is None
        and r.layers is None
    )


async def search_plain(
    group: GroupMemory, requests: Sequence[SearchRequest | PlainSearch]
) -> list[list[MemoryHit]]:
    """The hits of searches `takes_plain` accepted, in request order. The caller holds the
    operation lock and has applied the queued writes."""
    vectors = await group.embedder.embed_queries([r.query for r in requests])
    now = group.clock.abs_seconds
    ram = group.ram_ranker
    assert ram is not None
    if len(requests) == 1:  # a lone agent's turn
        found, scores, n = ram.rank_one(requests[0], vectors[0].sparse, now)
        row_get = group.hot.row_of.get
        rows = [row_get(memory_id) for memory_id in found]
        if None not in rows:  # every hit hot (the usual case): read once, from the columns
            return [_lone_hot(group, found, scores, rows, n, now)]
        ranked = [(found, scores, n)]
    else:
        ranked = ram.rank_plain(requests, [v.sparse for v in vectors], now)
    ids: list[int] = []
    scores: list[float] = []
    counts: list[int] = []
    candidates = 0
    for found, found_scores, n in ranked:
        ids += found
        scores += found_scores
        counts.append(len(found))
        candidates += n
    results = await group._hits_from(ids, scores, counts, {})  # hot, warm in RAM, engine
    group.access.record([h.id for hits in results for h in hits], now, group.hot, group.unsent)
    counters = group.counters
    counters["searches"] += len(requests)
    counters["retrieval_candidates"] += candidates
    counters["retrieval_scored"] += candidates
    return results


def _lone_hot(
    group: GroupMemory, ids: list[int], scores: list[float], rows: list[int], n: int, now: float
) -> list[MemoryHit]:
    """A lone search's hits, all hot at `rows`, with its reads and counters (as the batch
    path makes them, without its lists and a second lookup of the rows)."""
    hot = group.hot
    hits = HotHits(hot).many(ids, scores, rows)
    group.access.record(ids, now, hot, group.unsent, rows)
    counters = group.counters
    counters["searches"] += 1
    counters["retrieval_candidates"] += n
    counters["retrieval_scored"] += n
    return hits
