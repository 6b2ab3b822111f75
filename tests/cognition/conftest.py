"""Cognition fixtures: a real GroupMemory (Qdrant Edge + BM25) and a gateway that is either
the rules policy or the real openai client against the emulator over loopback HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from societas.agents.llm.gateway import LLMGateway
from societas.memory import GroupMemory, GroupMemoryConfig
from societas.testing.emulator import EmulatorConfig, serve

PROFILES = {
    1: {"name": "Ann Lee", "occupation": "teacher", "home": "flat 1", "work": "school"},
    2: {"name": "Bob Ray", "occupation": "baker", "home": "flat 2", "work": "bakery"},
    3: {"name": "Cat Poe", "occupation": "nurse", "home": "flat 3", "work": "clinic"},
}


@pytest.fixture
async def group(tmp_path, bm25_embedder) -> AsyncIterator[GroupMemory]:
    g = GroupMemory(GroupMemoryConfig(), root=tmp_path / "mem", embedder=bm25_embedder)
    await g.add_agents(PROFILES)
    g.clock.set(1, 8 * 3600.0)
    yield g
    await g.close()


@pytest.fixture(params=["rules", "http"])
async def llm(request) -> AsyncIterator[LLMGateway]:
    """Same cognition code on the rules policy and through HTTP (emulator + openai client)."""
    if request.param == "rules":
        yield LLMGateway({"provider": "rules"})
        return
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (emu, url):
        cfg: dict[str, Any] = {
            "endpoints": [{"base_url": url, "model": "emulated", "send_task_hints": True}]
        }
        async with LLMGateway(cfg) as gw:
            gw.emulator = emu  # type: ignore[attr-defined]
            yield gw
        assert emu.stats["served"] > 0  # it really went over HTTP
