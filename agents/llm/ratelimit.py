"""RPM and TPM limits as two aiolimiter leaky buckets per endpoint.

Buckets hold `burst_s` seconds of allowance (default 1 s) rather than a whole minute, so a
limit of 600 RPM means 10 requests per second from the start, not 600 in the first instant.
"""

from __future__ import annotations

from aiolimiter import AsyncLimiter


def _bucket(per_minute: float, burst_s: float) -> AsyncLimiter:
    """A bucket of capacity >= 1 that refills at `per_minute` / 60 per second."""
    capacity = max(1.0, per_minute * burst_s / 60.0)
    return AsyncLimiter(max_rate=capacity, time_period=capacity * 60.0 / per_minute)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute admission for one endpoint."""

    def __init__(self, rpm: float | None, tpm: float | None, burst_s: float = 1.0) -> None:
        self._rpm = _bucket(rpm, burst_s) if rpm else None
        self._tpm = _bucket(tpm, burst_s) if tpm else None

    @property
    def active(self) -> bool:
        """Whether any limit is configured."""
        return self._rpm is not None or self._tpm is not None

    async def acquire(self, tokens: int) -> None:
        """Wait (without blocking the loop) until one request of ~`tokens` tokens may start."""
        if self._rpm is not None:
            await self._rpm.acquire(1)
        if self._tpm is not None:
            await self._tpm.acquire(min(float(tokens), self._tpm.max_rate))

    async def settle(self, estimated: int, actual: int) -> None:
        """Charge tokens a response used beyond its estimate, so TPM tracks real usage."""
        if self._tpm is not None and actual > estimated:
            await self._tpm.acquire(min(float(actual - estimated), self._tpm.max_rate))
