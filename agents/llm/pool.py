"""Endpoints and least-loaded dispatch: each attempt goes to the endpoint with the lowest
in-flight/weight ratio that still has a free concurrency slot, so a retry fails over naturally.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from societas.agents.llm.config import EndpointConfig
from societas.agents.llm.errors import env_secret
from societas.agents.llm.ratelimit import RateLimiter

if TYPE_CHECKING:  # imported with the first client: a rules-policy process never loads it
    import openai

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
        self.failures = 0  # consecutive failed attempts
        self.cooldown_until = 0.0  # loop time before which others are preferred
        self._client: openai.AsyncOpenAI | None = None
        if cfg.api_key_env:
            env_secret(cfg.api_key_env)  # fail fast on a missing variable; registers redaction

    def __repr__(self) -> str:  # never includes the client (it holds the key)
        return f"Endpoint({self.cfg.base_url!r}, model={self.cfg.model!r})"

    def mark(self, ok: bool) -> None:
        """Record an attempt's outcome; failing endpoints are avoided for a short, growing while."""
        if ok:
            self.failures = 0
            self.cooldown_until = 0.0
            return
        self.failures += 1
        now = asyncio.get_running_loop().time()
        self.cooldown_until = now + min(5.0, 0.05 * 2 ** min(self.failures, 10))

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The AsyncOpenAI client over aiohttp, made on first use inside the running loop."""
        if self._client is None:
            import openai

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
    """Least-loaded choice among endpoints with a free slot; FIFO hand-off when all are full.

    A freed slot is handed straight to the oldest waiter (no thundering herd, no starvation),
    which keeps tail latency flat when thousands of agents share a few endpoints.
    """

    def __init__(self, endpoints: list[EndpointConfig], timeout_s: float) -> None:
        self.endpoints = [Endpoint(c, timeout_s, i) for i, c in enumerate(endpoints)]
        self._waiters: deque[tuple[asyncio.Future[Endpoint], frozenset[int] | None]] = deque()

    @property
    def model_key(self) -> str:
        """The model part of the cache key: the configured model name(s)."""
        return self.model_key_of(None)

    def model_key_of(self, allowed: Sequence[int] | None) -> str:
        """The model part of the cache key for the endpoints `allowed` (None: all)."""
        eps = self.endpoints if allowed is None else [self.endpoints[i] for i in allowed]
        return "|".join(sorted({e.cfg.model for e in eps}))

    def _pick(self, allowed: frozenset[int] | None = None) -> Endpoint | None:
        """Free endpoint with the lowest (cooling down, in-flight/weight) among `allowed`
        (None: all); None if all of them are full."""
        best: Endpoint | None = None
        best_key = (True, 0.0)
        now = asyncio.get_running_loop().time() if len(self.endpoints) > 1 else 0.0
        for e in self.endpoints:
            if allowed is not None and e.index not in allowed:
                continue
            if e.in_flight < e.cfg.max_concurrency:
                key = (e.cooldown_until > now, (e.in_flight + 1) / e.cfg.weight)
                if best is None or key < best_key:
                    best, best_key = e, key
        return best

    def _release(self, ep: Endpoint) -> None:
        ep.in_flight -= 1
        # The oldest waiter that the freed capacity can serve (routes may restrict waiters to
        # some endpoints, so the head of the queue may have to keep waiting).
        waiters, i = self._waiters, 0
        while i < len(waiters):
            fut, allowed = waiters[i]
            if fut.done():
                del waiters[i]
                continue
            nxt = self._pick(allowed)
            if nxt is None:
                i += 1
                continue
            del waiters[i]
            nxt.in_flight += 1
            fut.set_result(nxt)
            return

    @asynccontextmanager
    async def slot(self, allowed: Sequence[int] | None = None) -> AsyncIterator[Endpoint]:
        """Hold one concurrency slot on the least-loaded endpoint among `allowed` (indices;
        None: any) for the duration."""
        only = frozenset(allowed) if allowed is not None else None
        if only is not None and len(only) == len(self.endpoints):
            only = None
        # A release hands its slot straight to a waiter that can use it, so no waiter ever
        # wants an endpoint that is free now: taking a free one here jumps no queue.
        ep = self._pick(only)
        if ep is None:
            fut: asyncio.Future[Endpoint] = asyncio.get_running_loop().create_future()
            self._waiters.append((fut, only))
            try:
                ep = await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._release(fut.result())  # handed a slot but cancelled: pass it on
                raise
        else:
            ep.in_flight += 1
        try:
            yield ep
        finally:
            self._release(ep)

    def load(self) -> list[dict[str, Any]]:
        """Per-endpoint load for stats."""
        return [
            {
                "base_url": e.cfg.base_url,
                "model": e.cfg.model,
                "in_flight": e.in_flight,
                "served": e.served,
            }
            for e in self.endpoints
        ]

    async def aclose(self) -> None:
        """Close every client."""
        for e in self.endpoints:
            await e.aclose()
