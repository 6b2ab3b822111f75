"""The response cache: read-write stores, replay reproduces with zero HTTP, a miss is an error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from societas.agents.llm.errors import ReplayMissError
from societas.agents.llm.tasks import DailyPlan, ThoughtUpdate

CTXS = [
    {"name": f"a{i}", "recent": [f"heard about fire {i}"], "needs": {"energy": i / 10}}
    for i in range(8)
]


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


async def run_calls(gw) -> list[object]:
    thoughts = await asyncio.gather(
        *(
            gw.json(user(f"think {i}"), ThoughtUpdate, task="thought_update", context=c, seed=i)
            for i, c in enumerate(CTXS)
        )
    )
    text = await gw.complete(user("free text"), temperature=0.0)
    return [*thoughts, text]


async def test_replay_is_identical_and_makes_no_http_request(
    emulator, make_gateway, emu_stats, tmp_path: Path
) -> None:
    cache = {"mode": "read-write", "dir": str(tmp_path / "cache")}
    async with emulator(rate_malformed=0.3, seed=5) as (emu, url):
        async with make_gateway(url, cache=cache) as gw:
            first = await run_calls(gw)
        recorded = (await emu_stats(url))["chat_requests"]
        emu.reset()
        async with make_gateway(url, cache={**cache, "mode": "replay"}) as gw2:
            second = await run_calls(gw2)
        after = await emu_stats(url)
    assert recorded >= 9
    assert second == first
    assert after["requests"] == 0  # zero HTTP in replay
    assert gw2.accounting.events["cache.hit"] == recorded
    assert gw2.accounting.models["emulated"].cache_hits == recorded


async def test_read_write_hits_skip_http(emulator, make_gateway, emu_stats, tmp_path: Path) -> None:
    cache = {"mode": "read-write", "dir": str(tmp_path)}
    async with emulator() as (_, url):
        async with make_gateway(url, cache=cache) as gw:
            a = await gw.complete(user("same"))
            b = await gw.complete(user("same"))
            c = await gw.complete(user("same"), seed=99)  # the seed is part of the key
        stats = await emu_stats(url)
    assert a == b and c.startswith("echo") and stats["chat_requests"] == 2
    assert gw.accounting.events["cache.hit"] == 1


async def test_replay_miss_is_an_error_with_zero_http(
    emulator, make_gateway, emu_stats, tmp_path: Path
) -> None:
    async with emulator() as (_, url):
        async with make_gateway(url, cache={"mode": "replay", "dir": str(tmp_path)}) as gw:
            with pytest.raises(ReplayMissError, match="no cached response for task 'daily_plan'"):
                await gw.json(user("plan"), DailyPlan, task="daily_plan")
        assert (await emu_stats(url))["requests"] == 0


async def test_torn_last_line_is_ignored(emulator, make_gateway, tmp_path: Path) -> None:
    cache = {"mode": "read-write", "dir": str(tmp_path)}
    async with emulator() as (_, url):
        async with make_gateway(url, cache=cache) as gw:
            first = await gw.complete(user("keep me"))
        tear_last_line(tmp_path)
        async with make_gateway(url, cache={**cache, "mode": "replay"}) as gw2:
            assert await gw2.complete(user("keep me")) == first


def tear_last_line(directory: Path) -> None:
    seg = next(directory.glob("segment-*.jsonl"))
    with seg.open("a") as fh:
        fh.write('{"key": "trunc')
