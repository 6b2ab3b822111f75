"""Endpoints and least-loaded dispatch: each attempt goes to the endpoint with the lowest
in-flight/weight ratio that still has a free concurrency slot, so a retry fails over naturally.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import openai

from societas.agents.llm.config import EndpointConfig
from societas.agents.llm.errors import env_secret
from societas.agents.llm.ratelimit import RateLimiter

_NO_KEY = "sk-no-key-needed"  # placeholder for local servers without auth; not a secret


class Endpoint:
    """Runtime state of one endpoint: its lazily made client, limits and load."""

    def __init__(self, cfg: EndpointConfig, timeout_s: float, index: int) -> None:
        self.cfg = cfg
        self.index = index
        self.timeout_s = timeout_s
        self.limiter = RateLimiter(cfg.rpm, cfg.tpm)
        self.in_flight = 0
        self.served = 0
        self._client: openai.AsyncOpenAI | None = None
        if cfg.api_key_env:
            env_secret(cfg.api_key_env)  # fail fast on a missing variable; registers redaction

    def __repr__(self) -> str:  # never includes the client (it holds the key)
        return f"Endpoint({self.cfg.base_url!r}, model={self.cfg.model!r})"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The AsyncOpenAI client over aiohttp, made on first use inside the running loop."""
        if self._client is None:
            key = env_secret(self.cfg.api_key_env) if self.cfg.api_key_env else _NO_KEY
            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=self.cfg.base_url,
                max_retries=0,  # retries are ours (retry.py), so they are counted
                timeout=self.timeout_s,
                http_client=openai.DefaultAioHttpClient(),
            )
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client if one was made."""
        if self._client is not None:
            await self._client.close()
            self._client = None


class EndpointPool:
    """Least-loaded choice among endpoints with a free slot; waits when all are full."""

    def __init__(self, endpoints: list[EndpointConfig], timeout_s: float) -> None:
        self.endpoints = [Endpoint(c, timeout_s, i) for i, c in enumerate(endpoints)]
        self._freed: asyncio.Condition | None = None

    @property
    def model_key(self) -> str:
        """The model part of the cache key: the configured model name(s)."""
        return "|".join(sorted({e.cfg.model for e in self.endpoints}))

    def _pick(self) -> Endpoint | None:
        free = [e for e in self.endpoints if e.in_flight < e.cfg.max_concurrency]
        if not free:
            return None
        return min(free, key=lambda e: ((e.in_flight + 1) / e.cfg.weight, e.index))

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Endpoint]:
        """Hold one concurrency slot on the least-loaded endpoint for the duration."""
        ep = self._pick()
        if ep is None:
            if self._freed is None:
                self._freed = asyncio.Condition()
            async with self._freed:
                while (ep := self._pick()) is None:
                    await self._freed.wait()
        ep.in_flight += 1
        try:
            yield ep
        finally:
            ep.in_flight -= 1
            if self._freed is not None:
                freed = self._freed
                async with freed:
                    freed.notify(1)

    def load(self) -> list[dict[str, Any]]:
        """Per-endpoint load for stats."""
        return [{"base_url": e.cfg.base_url, "model": e.cfg.model, "in_flight": e.in_flight,
                 "served": e.served} for e in self.endpoints]

    async def aclose(self) -> None:
        """Close every client."""
        for e in self.endpoints:
            await e.aclose()
