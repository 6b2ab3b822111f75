"""A stop during a slow model tick: the tick is cut short after the grace (its pending LLM
calls cancelled) instead of running to its end, the run ends within 15 s with a checkpoint of
its last finished tick (replayed from the LLM response cache), and resuming from it reaches
the results of a run never stopped."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from societas.agents.llm import inflight
from societas.cluster import checkpoint as ckpt
from societas.cluster.loop.local import run_local_async
from societas.cluster.loop.run import RunInterrupted
from societas.testing.emulator import EmulatorConfig, serve

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
TABLES = ("agent_state", "plans", "dialogues", "needs")


def town(url: str, every: int = 2) -> dict[str, Any]:
    data = yaml.safe_load(TOWN.read_text())
    data.update(ticks=5, interventions=[], cluster={"checkpoint_every": every})
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


def slow(emu: Any) -> None:
    """From now on the scripted server takes 5 s a call."""
    emu.config = emu.config.model_copy(update={"base_latency_s": 5.0})


@pytest.mark.parametrize("every", [2, 0])  # the cadence checkpointed tick 2; none was taken
async def test_a_stop_during_a_slow_tick_checkpoints_the_last_finished_tick_and_resumes(
    tmp_path, bm25_embedder, every: int
) -> None:
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (_emu, url):
        whole = await run_local_async(town(url), tmp_path / "whole", embedder=bm25_embedder)
    asked: dict[str, float] = {}
    split = tmp_path / "split"
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (emu, url):

        def stop() -> bool:
            return "at" in asked

        def finished(report: Any) -> None:
            if report.tick == 2:  # tick 3 runs slowly
                slow(emu)
                loop = asyncio.get_running_loop()
                loop.call_later(0.5, asked.setdefault, "at", time.monotonic())

        with pytest.raises(RunInterrupted) as ei:
            await run_local_async(
                town(url, every), split, embedder=bm25_embedder, stop=stop, on_tick=finished
            )
        took = time.monotonic() - asked["at"]
    assert took < 15.0, took  # the bound: the grace, cancelling, the checkpoint
    assert ei.value.tick == 3 and ei.value.checkpoint == 3  # the last finished tick
    assert "the last finished tick" in str(ei.value)
    assert ckpt.last_complete(split) == 3
    assert inflight.snapshot() == (0, 0.0)  # no call left behind
    manifest, _ = ckpt.load_checkpoint(split, 3)
    cached = sum(int(m.get("cache_hits", 0)) for m in manifest.llm_models.values())
    assert manifest.totals["llm_requests"] > 0 and cached == 0  # the run's calls, not replays
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (_emu, url):
        resumed = await run_local_async(
            town(url, every), split, embedder=bm25_embedder, resume=True
        )
    assert rows(split) == rows(tmp_path / "whole")
    assert resumed.ticks_run == 2  # ticks 3 and 4: nothing finished is run twice
    assert whole.ticks_run == 5


async def test_a_rules_run_cut_short_replays_its_finished_ticks_without_a_cache(
    tmp_path, bm25_embedder
) -> None:
    """The rules policy needs no response cache: the finished ticks after the last
    checkpoint are answered again, checkpointed, and the run resumes to the same rows."""
    import shutil

    from societas.agents.scenario import load_scenario
    from societas.cluster.cluster_config import cluster_config_of
    from societas.cluster.loop.catch_up import checkpoint_last_finished

    def rules() -> dict[str, Any]:
        data = town("http://127.0.0.1:9/v1")
        data["llm"] = {"provider": "rules"}
        return data

    await run_local_async(rules(), tmp_path / "whole", embedder=bm25_embedder)
    split = tmp_path / "split"
    asked: list[bool] = []

    def finished(report: Any) -> None:
        if report.tick == 2:
            asked.append(True)

    with pytest.raises(RunInterrupted):
        await run_local_async(
            rules(), split, embedder=bm25_embedder, stop=lambda: bool(asked), on_tick=finished
        )
    shutil.rmtree(ckpt.tick_dir(split, 3))  # as if tick 3 had been cut short: checkpoint 2
    assert ckpt.last_complete(split) == 2
    scenario = load_scenario(rules())
    stopped = await checkpoint_last_finished(
        scenario,
        split,
        cluster_config_of(scenario, None),
        RunInterrupted(3, 2),
        groups=1,
        embedder=bm25_embedder,
    )
    assert (stopped.tick, stopped.checkpoint) == (3, 3), str(stopped)
    assert ckpt.last_complete(split) == 3
    await run_local_async(rules(), split, embedder=bm25_embedder, resume=True)
    assert rows(split) == rows(tmp_path / "whole")
