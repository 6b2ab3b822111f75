"""Calls in flight: the gateway notes each model call from send to answer (or failure), so a
progress line can show a slow model working during a long tick."""

from __future__ import annotations

import asyncio

from societas.agents.llm import inflight


async def test_calls_in_flight_and_the_oldest_age(emulator, make_gateway) -> None:
    async with emulator(base_latency_s=0.4) as (_emu, url), make_gateway(url) as gw:
        assert inflight.snapshot() == (0, 0.0)
        calls = [
            asyncio.create_task(gw.complete([{"role": "user", "content": f"hi {i}"}], task="t"))
            for i in range(3)
        ]
        await asyncio.sleep(0.25)
        n, age = inflight.snapshot()
        assert n == 3 and age >= 0.2  # sent at least as long ago as we waited
        await asyncio.gather(*calls)
        assert inflight.snapshot() == (0, 0.0)
        failing = asyncio.create_task(gw.complete([{"role": "user", "content": "x"}], task="t"))
        await asyncio.sleep(0.1)
        failing.cancel()  # a cancelled call leaves nothing behind
        await asyncio.gather(failing, return_exceptions=True)
        assert inflight.snapshot() == (0, 0.0)
