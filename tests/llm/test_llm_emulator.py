"""The emulator speaks the OpenAI protocol to the real openai client, queues at capacity,
and runs as `societas llm-emulator`."""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
import time

import aiohttp
import openai


async def test_models_embeddings_and_json_mode_via_openai_client(emulator) -> None:
    async with emulator(models=["m1", "m2"], embedding_dim=32) as (_, url):
        client = openai.AsyncOpenAI(
            api_key="unused", base_url=url, max_retries=0, http_client=openai.DefaultAioHttpClient()
        )
        async with client:
            models = [m.id async for m in client.models.list()]
            emb = await client.embeddings.create(model="m1", input=["a storm", "a storm", "x"])
            flt = await client.embeddings.create(
                model="m1", input="a storm", encoding_format="float"
            )
            chat = await client.chat.completions.create(
                model="m1",
                messages=[{"role": "user", "content": "hi"}],
                response_format={"type": "json_object"},
            )
    assert models == ["m1", "m2"]
    v = [d.embedding for d in emb.data]
    assert len(v[0]) == 32 and v[0] == v[1] != v[2]
    assert math.isclose(sum(x * x for x in v[0]), 1.0, rel_tol=1e-5)
    assert all(
        math.isclose(a, b, rel_tol=1e-5) for a, b in zip(flt.data[0].embedding, v[0], strict=True)
    )
    assert chat.choices[0].message.content.startswith('{"echo": "hi"')  # type: ignore[union-attr]
    assert chat.usage is not None and chat.usage.completion_tokens > 0


async def test_capacity_queues_requests(emulator, emu_stats) -> None:
    async with emulator(capacity=4, base_latency_s=0.1) as (_, url), aiohttp.ClientSession() as s:

        async def one(i: int) -> int:
            body = {"model": "emulated", "messages": [{"role": "user", "content": str(i)}]}
            async with s.post(url + "/chat/completions", json=body) as r:
                return r.status

        t0 = time.perf_counter()
        statuses = await asyncio.gather(*(one(i) for i in range(12)))
        elapsed = time.perf_counter() - t0
        stats = await emu_stats(url)
    assert statuses == [200] * 12
    assert 0.29 <= elapsed < 0.9  # 3 waves of 0.1 s
    assert stats["max_in_flight"] == 4 and stats["max_queued"] >= 8


async def test_latency_grows_with_tokens(emulator) -> None:
    async with (
        emulator(base_latency_s=0.0, tokens_per_s=200) as (_, url),
        aiohttp.ClientSession() as s,
    ):

        async def timed(text: str) -> float:
            body = {"model": "emulated", "messages": [{"role": "user", "content": text}]}
            t0 = time.perf_counter()
            async with s.post(url + "/chat/completions", json=body) as r:
                await r.read()
            return time.perf_counter() - t0

        short, long = await timed("x"), await timed("y" * 160)  # echo ~4 vs ~45 tokens
    assert long - short > 0.12


async def test_bad_requests_get_400(emulator, emu_stats) -> None:
    async with emulator() as (_, url), aiohttp.ClientSession() as s:
        async with s.post(url + "/chat/completions", data=b"{not json") as r:
            assert r.status == 400
        async with s.post(url + "/chat/completions", json={"messages": []}) as r:
            assert r.status == 400 and "messages" in (await r.json())["error"]["message"]
        assert (await emu_stats(url))["bad_requests"] == 2


def test_cli_serves_on_loopback() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "societas.cluster.cli",
            "llm-emulator",
            "--port",
            "0",
            "--latency-ms",
            "1",
            "--model",
            "cli-model",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert "listening on http://127.0.0.1:" in line and "not a model" in line
        url = line.split("listening on ")[1].split()[0]

        async def models() -> list[str]:
            async with aiohttp.ClientSession() as s, s.get(url + "/models") as r:
                return [m["id"] for m in (await r.json())["data"]]

        assert asyncio.run(models()) == ["cli-model"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
