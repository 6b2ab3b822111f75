"""A stop during a slow model tick under the Ray backend: the tick is cut short, the run ends
within 15 s with a checkpoint of its last finished tick (the finished ticks replayed from the
LLM response cache in the driver), and resuming on Ray reaches an uninterrupted run's rows."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from societas.cluster import checkpoint as ckpt
from societas.cluster.loop.run import RunInterrupted
from societas.cluster.ray.runtime import run_on_ray

from .threaded_server import threaded_emulator

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
TABLES = ("agent_state", "plans", "dialogues", "needs", "thoughts", "importance")


def town(url: str) -> dict[str, Any]:
    data = yaml.safe_load(TOWN.read_text())
    data.update(ticks=4, groups=2, interventions=[])
    data["cluster"] = {"checkpoint_every": 0, "metrics": {"port": 0}}
    data["agents"] = {**data["agents"], "count": 4}
    data["network"] = {**data["network"], "k": 2}
    ep = {"base_url": url, "model": "emulated", "send_task_hints": True}
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


def test_a_stop_during_a_slow_tick_on_ray_checkpoints_the_last_finished_tick(
    own_local_ray, tmp_path
) -> None:
    with threaded_emulator(base_latency_s=0.001) as (_emu, url):
        run_on_ray(town(url), tmp_path / "whole", 2)
    asked = threading.Event()
    at: list[float] = []
    split = tmp_path / "split"
    with threaded_emulator(base_latency_s=0.001) as (emu, url):

        def finished(report: Any) -> None:
            if report.tick == 1:  # tick 2 runs on a slow server; stop during it
                emu.config = emu.config.model_copy(update={"base_latency_s": 5.0})
                threading.Timer(0.5, lambda: (at.append(time.monotonic()), asked.set())).start()

        with pytest.raises(RunInterrupted) as ei:
            run_on_ray(town(url), split, 2, stop=asked.is_set, on_tick=finished)
        took = time.monotonic() - at[0]
    assert took < 15.0, took
    assert ei.value.tick == 2 and ei.value.checkpoint == 2, str(ei.value)
    assert ckpt.last_complete(split) == 2
    with threaded_emulator(base_latency_s=0.001) as (_emu, url):
        run_on_ray(town(url), split, 2, resume=True)
    assert rows(split) == rows(tmp_path / "whole")
