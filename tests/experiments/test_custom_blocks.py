"""A researcher's block by import path and a custom status attribute, in one process and on
real Ray actors (the block runs inside the group actors' processes)."""

from __future__ import annotations

import asyncio
import os

import pytest
import ray

from societas.agents.runtime.results import read_table
from societas.agents.scenario import load_scenario
from societas.cluster.experiments.arms import run_checkpointed
from societas.cluster.report.memories import agent_status

TICKS = 4


def probes(out) -> dict[tuple[int, int], tuple[float, int]]:
    """(tick, agent) -> (mood, pid) from the probe block's events."""
    out_rows = {}
    for r in read_table(out, "events").to_pylist():
        if r["kind"] == "probe":
            mood, pid = r["detail"].split(" pid=")
            out_rows[(r["tick"], r["agent_id"])] = (float(mood), int(pid))
    return out_rows


def check_moods(out, agents: int) -> set[int]:
    seen = probes(out)
    assert len(seen) == TICKS * agents
    for (tick, _agent), (mood, _) in seen.items():
        assert mood == pytest.approx(0.5 + 0.01 * (tick + 1))
    assert agent_status(out, 3)["mood"] == pytest.approx(0.5 + 0.01 * TICKS)
    return {pid for _, pid in seen.values()}


def test_custom_block_and_attribute_in_process(tmp_path, probe_scenario):
    cfg = load_scenario({**probe_scenario, "ticks": TICKS})
    asyncio.run(run_checkpointed(cfg, tmp_path / "run"))
    assert check_moods(tmp_path / "run", 12) == {os.getpid()}


def test_custom_block_on_real_ray_actors(tmp_path, probe_scenario):
    from societas.cluster.ray.runtime import run_on_ray

    cfg = load_scenario({**probe_scenario, "ticks": TICKS})
    ray.init(
        address="local",  # a Ray of its own, even when another is running on this machine
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
    )
    try:
        run_on_ray(cfg, tmp_path / "ray", 2, cluster={"metrics": {"port": 0}})
    finally:
        ray.shutdown()
    pids = check_moods(tmp_path / "ray", 12)
    assert len(pids) == 2 and os.getpid() not in pids  # two group actors, not this process
    # the same scenario in one process gives the same rows
    asyncio.run(run_checkpointed(cfg, tmp_path / "local", groups=2))
    strip = lambda rows: [(r["tick"], r["agent_id"], r["detail"].split(" pid=")[0]) for r in rows]  # noqa: E731
    assert strip(read_table(tmp_path / "ray", "events").to_pylist()) == strip(
        read_table(tmp_path / "local", "events").to_pylist()
    )
