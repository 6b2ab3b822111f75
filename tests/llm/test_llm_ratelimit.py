"""RPM and TPM limits hold, measured as request times against the emulator."""

from __future__ import annotations

import asyncio
import time

from societas.agents.llm.ratelimit import RateLimiter


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


async def timed_batch(gw, n: int) -> float:
    t0 = time.perf_counter()
    await asyncio.gather(*(gw.complete(user(f"q{i}"), max_tokens=50) for i in range(n)))
    return time.perf_counter() - t0


async def test_rpm_limit_holds(emulator, make_gateway) -> None:
    async with emulator(base_latency_s=0.0) as (_, url):
        async with make_gateway(url) as free:
            unlimited = await timed_batch(free, 50)
        async with make_gateway(url, endpoint={"rpm": 1200}) as gw:  # 20/s, 1 s burst
            limited = await timed_batch(gw, 50)
    assert unlimited < 0.8
    assert 1.35 <= limited <= 3.0  # (50 - 20 burst) / 20 per s = 1.5 s


async def test_tpm_limit_holds(emulator, make_gateway) -> None:
    # each request is budgeted ~55 tokens (prompt + max_tokens 50); 400 tokens/s
    async with (
        emulator(base_latency_s=0.0) as (_, url),
        make_gateway(url, endpoint={"tpm": 24000}) as gw,
    ):
        limited = await timed_batch(gw, 20)
    assert 1.4 <= limited <= 3.5  # (20 * 55 - 400 burst) / 400 per s ≈ 1.75 s


async def test_limiter_admits_at_the_configured_rate() -> None:
    limiter = RateLimiter(rpm=600, tpm=None)  # 10/s with a burst of 10
    starts = []
    t0 = time.perf_counter()
    for _ in range(25):
        await limiter.acquire(1)
        starts.append(time.perf_counter() - t0)
    assert starts[9] < 0.1  # the burst
    assert 1.35 <= starts[-1] <= 1.8  # then 10/s: 15 more take 1.5 s
    window = [s for s in starts if 0.5 <= s < 1.5]
    assert len(window) <= 11
