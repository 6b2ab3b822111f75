"""Fixtures for the gateway tests: a live emulator on loopback and gateways pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from societas.agents.llm.emulator import Emulator, EmulatorConfig, serve
from llm_helpers import gateway_config

from societas.agents.llm.gateway import LLMGateway

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
        return LLMGateway(gateway_config(url, **over))

    return make
