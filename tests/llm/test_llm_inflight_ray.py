"""Calls in flight under the Ray backend: the groups' model calls run in actor processes, and
the run loop asks the groups for them, so what the progress line reads in the driver
(`inflight.snapshot`) shows a slow model working during a long tick, as in local mode."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from societas.agents.llm import inflight
from societas.cluster.observe.calls_in_flight import merged
from societas.cluster.ray.runtime import run_on_ray

from .threaded_server import threaded_emulator

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
LATENCY_S = 2.0


@pytest.fixture
def slow_server() -> Iterator[str]:
    """A scripted model server on loopback, `LATENCY_S` a call."""
    with threaded_emulator(base_latency_s=LATENCY_S) as (_emu, url):
        yield url


def town(url: str) -> dict[str, Any]:
    data = yaml.safe_load(TOWN.read_text())
    data.update(ticks=2, groups=2, interventions=[])
    data["agents"] = {**data["agents"], "count": 4}
    data["network"] = {**data["network"], "k": 2}
    ep = {"base_url": url, "model": "emulated", "send_task_hints": True}
    data["llm"] = {"endpoints": [ep], "timeout_s": 30}
    return data


def test_merged_counts_other_processes_only() -> None:
    replies = [
        {"pid": 1, "calls": 2, "oldest_s": 3.0},
        {"pid": 2, "calls": 1, "oldest_s": 7.5},
        {"pid": 9, "calls": 4, "oldest_s": 60.0},  # this process: counted where sent
        {"pid": 3, "calls": 0, "oldest_s": 0.0},
        TimeoutError(),  # a group that did not answer
        {},
    ]
    assert merged(replies, me=9) == (3, 7.5)


def test_a_ray_run_shows_its_actors_calls_in_flight(own_local_ray, slow_server, tmp_path) -> None:
    seen: list[tuple[int, float]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            seen.append(inflight.snapshot())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        summary = run_on_ray(
            town(slow_server), tmp_path / "run", 2, cluster={"metrics": {"port": 0}}
        )
    finally:
        stop.set()
        sampler.join(5)
    assert summary.llm_requests > 0
    assert inflight.local() == (0, 0.0)  # the driver sent none itself
    calls = max(n for n, _ in seen)
    age = max(a for _, a in seen)
    assert calls > 0, "the actors' calls were never seen in the driver"
    assert age >= LATENCY_S / 2, age  # the oldest call's age grows while it waits
    assert inflight.snapshot() == (0, 0.0)  # cleared when the run ends
