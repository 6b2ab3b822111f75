"""A stop during a slow model tick: the tick is cut short after the grace (its pending LLM
calls cancelled) instead of running to its end, the run keeps its last checkpoint, and
resuming reaches the results of a run never stopped."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from societas.agents.llm import inflight
from societas.cluster.loop import run as run_loop
from societas.cluster.loop.local import run_local_async
from societas.cluster.loop.run import RunInterrupted
from societas.testing.emulator import EmulatorConfig, serve

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
TABLES = ("agent_state", "plans", "dialogues", "needs")


def town(url: str) -> dict[str, Any]:
    data = yaml.safe_load(TOWN.read_text())
    data.update(ticks=4, interventions=[], cluster={"checkpoint_every": 1})
    data["agents"] = {**data["agents"], "count": 4}
    data["network"] = {**data["network"], "k": 2}
    ep = {"base_url": url, "model": "emulated", "send_task_hints": True, "name": "scripted"}
    data["llm"] = {"endpoints": [ep], "timeout_s": 30}
    return data


def rows(run: Path) -> dict[str, list[tuple[Any, ...]]]:
    out = {}
    for table in TABLES:
        found = []
        for f in sorted((run / "results" / table).glob("*/*.parquet")):
            found += [tuple(r.values()) for r in pq.read_table(f).to_pylist()]
        out[table] = sorted(found, key=repr)
    return out


async def test_a_stop_during_a_slow_tick_cuts_it_short_and_resumes_to_the_same_results(
    tmp_path, bm25_embedder, monkeypatch
) -> None:
    monkeypatch.setattr(run_loop, "STOP_GRACE_S", 1.0)
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (_emu, url):
        await run_local_async(town(url), tmp_path / "whole", embedder=bm25_embedder)
    asked: dict[str, float] = {}

    def stop() -> bool:
        return "at" in asked

    def checkpointed(tick: int, _totals: Any) -> None:
        if tick == 2:  # the third tick runs on a slow server: ask to stop during it
            asyncio.get_running_loop().call_later(0.5, asked.setdefault, "at", time.monotonic())

    split = tmp_path / "split"
    async with serve(EmulatorConfig(base_latency_s=5.0)) as (_emu, url):
        slow = town(url)
        with pytest.raises(RunInterrupted) as ei:
            await run_local_async(
                slow, split, embedder=bm25_embedder, stop=stop, on_checkpoint=checkpointed
            )
        took = time.monotonic() - asked["at"]
    assert took < 1.0 + 3.0, took  # the grace, then the cancelled calls and closing
    assert ei.value.checkpoint == 2 and ei.value.tick == 2
    assert inflight.snapshot() == (0, 0.0)  # no call left behind
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (_emu, url):
        await run_local_async(town(url), split, embedder=bm25_embedder, resume=True)
    assert rows(split) == rows(tmp_path / "whole")
