"""LLM saturation: achieved vs ideal throughput of the gateway against the emulated server.

The emulator runs as a subprocess (`societas llm-emulator`) so the client's CPU time is
measured alone. Capacity 64 requests at once, 200 ms each: ideal 320 req/s. Two passes:
clean, and faulty (5% 429 with Retry-After, 2% 500). The faulty figures are nested under
the key `faulty`. Usage: python benchmarks/llm_saturation.py [--requests N] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed
from pathlib import Path
from typing import Any

import aiohttp

from societas.agents.llm.errors import LLMError
from societas.agents.llm.gateway import LLMGateway

CAPACITY = 64
CPU = "client_cpu_ms_per_call"
LATENCY_S = 0.2


def start_emulator(extra: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Launch the emulator subprocess on a free loopback port; return (process, base url)."""
    cmd = [
        sys.executable,
        "-m",
        "societas.cluster.cli",
        "llm-emulator",
        "--port",
        "0",
        "--capacity",
        str(CAPACITY),
        "--latency-ms",
        str(LATENCY_S * 1000),
        *extra,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"emulator did not start: {line!r}")
    return proc, line.split("listening on ")[1].split()[0]


async def emulator_stats(url: str) -> dict[str, Any]:
    """The emulator's /stats counters."""
    async with aiohttp.ClientSession() as s, s.get(url.removesuffix("/v1") + "/stats") as r:
        return dict(await r.json())


def version(package: str) -> str | None:
    """The installed version of `package` (the SDK's CPU per call depends on it), or None."""
    try:
        return installed(package)
    except PackageNotFoundError:
        return None


def shares(requests: int, agents: int) -> list[int]:
    """How many of `requests` each of `agents` sends (the same on every pass)."""
    return [requests // agents + (1 if a < requests % agents else 0) for a in range(agents)]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_pass(url: str, requests: int, agents: int, concurrency: int) -> dict[str, Any]:
    """Send `requests` calls from `agents` concurrent agents; measure throughput and CPU."""
    gw = LLMGateway(
        {
            "endpoints": [{"base_url": url, "model": "emulated", "max_concurrency": concurrency}],
            "timeout_s": 10,
            "retry": {"max_attempts": 8, "base_delay_s": 0.05, "max_delay_s": 2.0},
            "max_tokens": 64,
        }
    )
    latencies: list[float] = []
    lost = 0
    per_agent = shares(requests, agents)

    async def agent(a: int) -> None:
        nonlocal lost
        for i in range(per_agent[a]):
            msgs = messages(a, i)
            t0 = time.perf_counter()
            try:
                await gw.complete(msgs)
            except LLMError:
                lost += 1
                continue
            latencies.append(time.perf_counter() - t0)

    async with gw:
        await gw.complete([{"role": "user", "content": "warm-up"}])  # connect outside timing
        cpu0, t0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(agent(a) for a in range(agents)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        events = gw.stats()["events"]
    ideal = CAPACITY / LATENCY_S
    achieved = (requests - lost) / wall
    return {
        "requests": requests,
        "ideal_rps": ideal,
        "achieved_rps": round(achieved, 1),
        "efficiency": round(achieved / ideal, 3),
        "client_cpu_ms_per_call": round(cpu * 1000 / requests, 3),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 1),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
        "retries": sum(v for k, v in events.items() if k.startswith("retry.")),
        "lost": lost,
        "wall_s": round(wall, 3),
    }


def messages(a: int, i: int) -> list[dict[str, str]]:
    """Agent `a`'s request number `i` (the same on every pass)."""
    return [
        {"role": "system", "content": "You are a villager in a small town."},
        {"role": "user", "content": f"Agent {a}, step {i}: what do you do next?"},
    ]


async def sdk_pass(url: str, requests: int, agents: int, concurrency: int) -> dict[str, Any]:
    """The same calls through the bare openai SDK: the client CPU no gateway can go below."""
    import openai

    client = openai.AsyncOpenAI(
        api_key="unused",
        base_url=url,
        max_retries=0,
        http_client=openai.DefaultAioHttpClient(),
    )
    slots = asyncio.Semaphore(concurrency)
    per_agent = shares(requests, agents)

    async def call(msgs: list[dict[str, str]]) -> None:
        body = {"model": "emulated", "messages": msgs, "temperature": 0.7, "max_tokens": 64}
        async with slots:
            raw = await client.post("/chat/completions", cast_to=str, body=body)
        json.loads(raw)["choices"][0]["message"]["content"]

    async def agent(a: int) -> None:
        for i in range(per_agent[a]):
            await call(messages(a, i))

    await call([{"role": "user", "content": "warm-up"}])  # connect outside timing
    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(agent(a) for a in range(agents)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    await client.close()
    return {
        "requests": requests,
        "efficiency": round(requests / wall / (CAPACITY / LATENCY_S), 3),
        "client_cpu_ms_per_call": round(cpu * 1000 / requests, 3),
        "wall_s": round(wall, 3),
    }


async def bench_one(
    requests: int, agents: int, concurrency: int, faults: list[str], sdk_repeats: int = 0
) -> dict[str, Any]:
    """One pass against a fresh emulator subprocess; with `sdk_repeats`, that many gateway
    and bare-SDK passes interleaved on it, and the medians of their CPU per call (the
    gateway's then stands as this pass's `client_cpu_ms_per_call`)."""
    proc, url = start_emulator(faults)
    try:
        out = await run_pass(url, requests, agents, concurrency)
        stats = await emulator_stats(url)
        out["injected_errors"] = sum(stats["injected"].values())
        out["emulator_max_in_flight"] = stats["max_in_flight"]
        if sdk_repeats:
            gateway = [out["client_cpu_ms_per_call"]]
            bare = [await sdk_pass(url, requests, agents, concurrency)]
            for _ in range(sdk_repeats - 1):
                gateway.append((await run_pass(url, requests, agents, concurrency))[CPU])
                bare.append(await sdk_pass(url, requests, agents, concurrency))
            out[CPU], sdk_cpu = statistics.median(gateway), statistics.median(b[CPU] for b in bare)
            out["sdk"] = {
                "efficiency": statistics.median(b["efficiency"] for b in bare),
                CPU: sdk_cpu,
                "cpu_ms_each_run": [b[CPU] for b in bare],
            }
            out["gateway_cpu_ms_each_run"] = gateway
            out["gateway_own_cpu_ms_per_call"] = round(out[CPU] - sdk_cpu, 3)
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    """Run the clean and the faulty pass, print JSON, optionally write it."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--agents", type=int, default=256, help="Concurrent simulated agents.")
    ap.add_argument("--concurrency", type=int, default=128, help="Gateway max_concurrency.")
    ap.add_argument("--repeats", type=int, default=3, help="Gateway and bare-SDK passes.")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    clean = asyncio.run(
        bench_one(args.requests, args.agents, args.concurrency, [], sdk_repeats=args.repeats)
    )
    faulty = asyncio.run(
        bench_one(
            args.requests,
            args.agents,
            args.concurrency,
            ["--rate-429", "0.05", "--rate-500", "0.02", "--retry-after", "0.5", "--seed", "1"],
        )
    )
    result = {
        **clean,
        "faulty": {**faulty, "rate_429": 0.05, "rate_500": 0.02, "retry_after_s": 0.5},
        "emulator": {"capacity": CAPACITY, "latency_ms": LATENCY_S * 1000, "process": "subprocess"},
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "versions": {name: version(name) for name in ("openai", "httpx2", "httpx", "aiohttp")},
        "date": time.strftime("%Y-%m-%d"),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
