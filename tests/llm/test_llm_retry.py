"""Retries against the real openai client and a live emulator: counts, Retry-After, timeouts,
failover, and proof that waiting never blocks the event loop."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from societas.agents.llm.errors import LLMRequestError, LLMRetryExhaustedError
from societas.agents.llm.gateway import LLMGateway


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def dead_port() -> int:
    """A loopback port with nothing listening."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("fault", ["429", "500"])
async def test_each_injected_error_costs_exactly_one_retry(
    emulator, make_gateway, emu_stats, fault: str
) -> None:
    retry = {"max_attempts": 12, "base_delay_s": 0.005, "max_delay_s": 0.02}
    faults = {f"rate_{fault}": 0.4, "retry_after_s": 0.01, "seed": 3}
    async with emulator(**faults) as (_, url), make_gateway(url, retry=retry) as gw:
        outs = await asyncio.gather(*(gw.complete(user(f"q{i}")) for i in range(60)))
        stats = await emu_stats(url)
    injected = stats["injected"][fault]
    kind = "429" if fault == "429" else "5xx"
    assert len(outs) == 60 and all(outs)
    assert injected > 5  # the fault really happened
    assert gw.accounting.events[f"retry.{kind}"] == injected
    assert gw.accounting.events["http.requests"] == 60 + injected
    assert stats["served"] == 60


async def test_persistent_429_gives_up_after_max_attempts_honouring_retry_after(
    emulator, make_gateway, emu_stats
) -> None:
    async with emulator(rate_429=1.0, retry_after_s=0.2) as (_, url):
        async with make_gateway(url, retry={"max_attempts": 3, "base_delay_s": 0.001}) as gw:
            t0 = time.perf_counter()
            with pytest.raises(LLMRetryExhaustedError) as ei:
                await gw.complete(user("hi"))
            elapsed = time.perf_counter() - t0
        stats = await emu_stats(url)
    assert ei.value.attempts == 3 and ei.value.last_kind == "429"
    assert "429" in str(ei.value)
    assert stats["injected"]["429"] == 3
    assert gw.accounting.events["retry.429"] == 2
    assert elapsed >= 0.38  # two waits of Retry-After 0.2 s, not the 1 ms backoff


async def test_backoff_does_not_block_the_loop(emulator, make_gateway) -> None:
    ticks = 0

    async def ticker(stop: asyncio.Event) -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    async with (
        emulator(rate_429=1.0, retry_after_s=0.3) as (_, url),
        make_gateway(url, retry={"max_attempts": 3}) as gw,
    ):
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(stop))
        t0 = time.perf_counter()
        with pytest.raises(LLMRetryExhaustedError):
            await gw.complete(user("hi"))
        elapsed = time.perf_counter() - t0
        stop.set()
        await task
    assert elapsed >= 0.55
    assert ticks >= 0.6 * elapsed / 0.01  # the ticker kept running during the backoff


async def test_timeouts_are_retried_then_reported(emulator, make_gateway, emu_stats) -> None:
    async with emulator(rate_timeout=1.0, hang_s=5.0) as (_, url):
        async with make_gateway(url, timeout_s=0.2, retry={"max_attempts": 2}) as gw:
            t0 = time.perf_counter()
            with pytest.raises(LLMRetryExhaustedError) as ei:
                await gw.complete(user("slow"))
            elapsed = time.perf_counter() - t0
        stats = await emu_stats(url)
    assert ei.value.last_kind == "timeout"
    assert gw.accounting.events["retry.timeout"] == 1
    assert stats["injected"]["timeout"] == 2
    assert 0.35 < elapsed < 2.0


async def test_connection_errors_fail_over_to_a_live_endpoint(emulator) -> None:
    async with emulator() as (_, url):
        gw = LLMGateway(
            {
                "endpoints": [
                    {"base_url": f"http://127.0.0.1:{dead_port()}/v1", "model": "emulated"},
                    {"base_url": url, "model": "emulated"},
                ],
                "retry": {"max_attempts": 4, "base_delay_s": 0.001},
            }
        )
        async with gw:
            outs = [await gw.complete(user(f"q{i}")) for i in range(10)]
            dead, live = gw.pool.endpoints  # type: ignore[union-attr]
    assert all(o.startswith("echo") for o in outs)
    assert live.served == 10 and dead.served == 0
    assert gw.accounting.events["retry.connection"] <= 2  # the dead one is avoided after failing


async def test_unreachable_endpoint_is_a_clear_bounded_error() -> None:
    gw = LLMGateway(
        {
            "endpoints": [{"base_url": f"http://127.0.0.1:{dead_port()}/v1", "model": "m"}],
            "retry": {"max_attempts": 3, "base_delay_s": 0.001},
        }
    )
    async with gw:
        with pytest.raises(LLMRetryExhaustedError, match="gave up after 3 attempts") as ei:
            await gw.complete(user("x"))
    assert ei.value.last_kind == "connection"
    assert gw.accounting.events["http.failed"] == 1


async def test_client_errors_are_not_retried(
    emulator, make_gateway, emu_stats, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOCIETAS_TEST_SERVER_KEY", "server-side-key-123")
    monkeypatch.setenv("SOCIETAS_TEST_CLIENT_KEY", "client-side-wrong-key-456")
    async with emulator(api_key_env="SOCIETAS_TEST_SERVER_KEY") as (_, url):
        async with make_gateway(url, endpoint={"api_key_env": "SOCIETAS_TEST_CLIENT_KEY"}) as gw:
            with pytest.raises(LLMRequestError) as ei:
                await gw.complete(user("x"))
        stats = await emu_stats(url)
    assert ei.value.status == 401
    assert stats["auth_failures"] == 1  # one attempt only
    assert not any(k.startswith("retry.") for k in gw.accounting.events)


async def test_least_loaded_dispatch_respects_weights(emulator) -> None:
    async with emulator(base_latency_s=0.05) as (_, a), emulator(base_latency_s=0.05) as (_, b):
        gw = LLMGateway(
            {
                "endpoints": [
                    {"base_url": a, "model": "emulated", "weight": 3, "max_concurrency": 30},
                    {"base_url": b, "model": "emulated", "weight": 1, "max_concurrency": 30},
                ]
            }
        )
        async with gw:
            await asyncio.gather(*(gw.complete(user(f"q{i}")) for i in range(40)))
            ea, eb = gw.pool.endpoints  # type: ignore[union-attr]
    assert ea.served == 30 and eb.served == 10  # 3:1 while both have room
