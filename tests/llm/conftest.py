"""Fixtures for the gateway tests: a live emulator on loopback and gateways pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import aiohttp
import pytest

from societas.agents.llm.gateway import LLMGateway
from societas.testing.emulator import Emulator, EmulatorConfig, serve
from societas.testing.local_server import INSTALL_HINT, LocalModelServer, server_available

EmuFactory = Callable[..., AbstractAsyncContextManager[tuple[Emulator, str]]]


@pytest.fixture
def emulator() -> EmuFactory:
    """`async with emulator(rate_429=0.5) as (emu, url):` — a real aiohttp server on 127.0.0.1."""

    @asynccontextmanager
    async def make(**fields: Any) -> AsyncIterator[tuple[Emulator, str]]:
        fields.setdefault("base_latency_s", 0.005)
        async with serve(EmulatorConfig(**fields)) as pair:
            yield pair

    return make


@pytest.fixture
def make_gateway() -> Callable[..., LLMGateway]:
    """Build an `LLMGateway` for an emulator URL with test-friendly defaults."""

    def make(url: str, **over: Any) -> LLMGateway:
        endpoint = {"base_url": url, "model": "emulated", "send_task_hints": True}
        endpoint.update(over.pop("endpoint", {}))
        cfg: dict[str, Any] = {
            "endpoints": [endpoint],
            "timeout_s": 5,
            "retry": {"max_attempts": 6, "base_delay_s": 0.01, "max_delay_s": 0.1},
        }
        cfg.update(over)
        return LLMGateway(cfg)

    return make


@pytest.fixture
def emu_stats() -> Callable[[str], Any]:
    """Fetch the emulator's /stats over HTTP, as an external observer would."""

    async def fetch(url: str) -> dict[str, Any]:
        async with aiohttp.ClientSession() as s, s.get(url.removesuffix("/v1") + "/stats") as r:
            return dict(await r.json())

    return fetch


@pytest.fixture(scope="module")
def server():
    """The real local model server, one per module (~1 s to start, ~100 MB of RAM)."""
    assert server_available(), INSTALL_HINT  # installable here, so never skipped
    with LocalModelServer(n_ctx=4096, threads=2) as srv:
        yield srv
    assert srv.proc is None


@pytest.fixture
def model_gateway(server) -> Callable[..., LLMGateway]:
    """A gateway to the real local model (no fallback-rate stop: a tiny model's answers)."""

    def make(max_tokens: int = 256) -> LLMGateway:
        return LLMGateway(
            {
                "endpoints": [server.endpoint()],
                "timeout_s": 120,
                "max_tokens": max_tokens,
                "fallback_stop": {"enabled": False},
            }
        )

    return make
