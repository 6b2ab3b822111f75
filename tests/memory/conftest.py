"""Fixtures for memory tests: groups on either backend over the shared BM25 embedder."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from societas.memory import GroupMemory, GroupMemoryConfig


@pytest.fixture
def group_factory(tmp_path, bm25_embedder):
    """Build GroupMemory on a real engine: an Edge shard under tmp_path or qdrant-client local."""
    made: list[GroupMemory] = []

    def make(backend: str = "edge", embedder=None, sub: str = "g", **config) -> GroupMemory:
        store = {"backend": "qdrant", "location": ":memory:"} if backend == "qdrant" else {}
        cfg = GroupMemoryConfig(vector_store=store, **config)
        g = GroupMemory(cfg, root=tmp_path / sub, embedder=embedder or bm25_embedder)
        made.append(g)
        return g

    yield make


@pytest.fixture(params=["edge", "qdrant"])
def backend(request) -> str:
    return request.param


@pytest.fixture
async def group(group_factory, backend):
    g = group_factory(backend)
    await g.add_agents(
        {
            1: {"name": "Alice Smith", "occupation": "teacher"},
            2: {"name": "Bob Jones", "occupation": "fisherman"},
        }
    )
    yield g
    await g.close()


@contextmanager
def writes_failing(*stores) -> Iterator[None]:
    """Inside the block the stores' upserts raise ConnectionError (the stores stay intact:
    only their writes fail); outside it they write again."""

    async def broken_upsert(points):
        raise ConnectionError("vector store unreachable")

    real = [store.upsert for store in stores]
    for store in stores:
        store.upsert = broken_upsert
    try:
        yield
    finally:
        for store, upsert in zip(stores, real, strict=True):
            store.upsert = upsert


def quarter_rule(appends: list[int]) -> list[int]:
    """Items allocated after each of these appends (item counts) to an empty array under
    memory/_arrays.h's rule (a quarter again, plus 3 items while under 8, else 7)."""
    size = allocated = 0
    out = []
    for more in appends:
        need = size + more
        if more and need > allocated:
            allocated = need + (need >> 2) + (3 if size < 8 else 7)
        size = need
        out.append(allocated)
    return out


def allocated_items(values) -> int:
    """Items an `array` has room for (from its `__sizeof__`)."""
    return (values.__sizeof__() - type(values)(values.typecode).__sizeof__()) // values.itemsize


def roomy_tiers(**over):
    """Tier settings under which memories stay hot unless `over` sets a test's own limits."""
    tiers = {
        "hot_window_hours": 1000,
        "hot_cap_per_agent": 200,
        "warm_max_age_days": None,
        "warm_cap_per_agent": None,
        "migrate_every_ticks": 1,
    }
    return {**tiers, **over}
