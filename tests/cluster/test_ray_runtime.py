"""The Ray runtime on one local Ray instance: same results as in-process, checkpoints, resume,
metrics equal to the run's totals (synthetic groups; the fault tests with real groups on a
multi-node cluster are in test_ray_multinode.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import ray
from synthetic_groups import SyntheticConfig, SyntheticFactory, results_digest

from societas.cluster import checkpoint as ckpt
from societas.cluster.observe.metrics import MetricsConfig, RunMetrics
from societas.cluster.ray.runtime import (
    ClusterConfig,
    InProcessGroup,
    RunSpec,
    make_ray_groups,
    run_groups,
)

AGENTS, GROUPS, TICKS = 300, 2, 8


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    yield
    ray.shutdown()


def _factory(run_dir: Path, **kw) -> SyntheticFactory:
    cfg = SyntheticConfig(
        agents=AGENTS, groups=GROUPS, seed=11, results_dir=str(run_dir / "results"), **kw
    )
    return SyntheticFactory(cfg)


def _spec(run_dir: Path) -> RunSpec:
    return RunSpec(run_dir=run_dir, ticks=TICKS, seed=11, agents=AGENTS)


def _local(run_dir: Path, every: int = 0):
    f = _factory(run_dir)
    handles = [InProcessGroup(f(g)) for g in range(GROUPS)]
    cluster = ClusterConfig(checkpoint_every=every)
    return asyncio.run(run_groups(handles, _spec(run_dir), cluster))[0]


def _on_ray(run_dir: Path, every: int = 0, on_tick=None, resume=False, metrics=None, state=None):
    f = _factory(run_dir)
    cluster = ClusterConfig(checkpoint_every=every, keep_checkpoints=0)
    handles = make_ray_groups(f, GROUPS, cluster)
    if state is not None:
        state["handles"] = handles

    async def go():
        return await run_groups(
            handles, _spec(run_dir), cluster, metrics=metrics, on_tick=on_tick, resume=resume
        )

    return asyncio.run(go())[0], handles


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted in-process run: what every Ray run must reproduce."""
    run_dir = tmp_path_factory.mktemp("reference")
    summary = _local(run_dir)
    return summary, results_digest(run_dir / "results")


def test_ray_run_equals_in_process_run_and_metrics_equal_totals(tmp_path, reference):
    ref_summary, ref_results = reference
    metrics = RunMetrics(MetricsConfig(port=0))
    summary, _handles = _on_ray(tmp_path, metrics=metrics)
    assert summary.digest == ref_summary.digest
    assert summary.digests == ref_summary.digests
    assert results_digest(tmp_path / "results") == ref_results
    assert len(ref_results) == GROUPS * TICKS
    assert summary.totals == ref_summary.totals
    assert summary.totals["agent_steps"] == AGENTS * TICKS
    assert summary.totals["messages_out"] > 0
    for key in ("agent_steps", "llm_requests", "messages_out", "vector_queries"):
        name = "messages_total" if key == "messages_out" else key + "_total"
        assert metrics.totals[name] == summary.totals[key]
    assert metrics.value("ticks_total") == TICKS
    assert metrics.value("group_rss_bytes", group="0") > 10_000_000  # filled in by the actor
    saved = json.loads((tmp_path / "ray_run.json").read_text())
    assert saved["digest"] == summary.digest


def test_resume_from_last_complete_checkpoint_gives_identical_results(tmp_path, reference):
    ref_summary, ref_results = reference

    class Crash(Exception):
        pass

    def crash_after_tick_6(report):
        if report.tick == 6:
            raise Crash

    with pytest.raises(Crash):
        _on_ray(tmp_path, every=3, on_tick=crash_after_tick_6)
    assert ckpt.complete_ticks(tmp_path) == [3, 6]  # tick 6's on_tick ran before its checkpoint
    # A checkpoint without its manifest (a crash while writing) is ignored.
    (ckpt.tick_dir(tmp_path, 7) / "group-0").mkdir(parents=True)
    assert ckpt.last_complete(tmp_path) == 6
    manifest, inbox = ckpt.load_checkpoint(tmp_path, 6)
    assert manifest.tick == 6 and sorted(manifest.groups) == [0, 1]
    assert manifest.digests == ref_summary.digests[:6]
    assert sum(len(v) for v in inbox.values()) > 0  # messages in flight are saved

    summary, _ = _on_ray(tmp_path, every=3, resume=True)
    assert summary.start_tick == 6
    assert summary.digest == ref_summary.digest
    assert summary.totals == ref_summary.totals
    assert results_digest(tmp_path / "results") == ref_results


def test_resume_without_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no complete checkpoint"):
        _on_ray(tmp_path, resume=True)


def test_town_on_ray_crash_then_societas_resume_matches_uninterrupted(tmp_path):
    """The real GroupEngine in actors: a run that dies after its tick-4 checkpoint, then
    `societas resume RUN_DIR`, ends with the same per-agent results as an uninterrupted run."""
    from typer.testing import CliRunner

    from societas.agents.runtime.results import read_table
    from societas.agents.scenario import load_scenario
    from societas.cluster.cli import app
    from societas.cluster.ray.runtime import run_on_ray

    root = Path(__file__).resolve().parents[2]
    scenario = load_scenario(root / "configs" / "town.yaml").with_overrides(
        agents=80, ticks=7, groups=2
    )
    cluster = {"checkpoint_every": 4, "metrics": {"port": 0}}
    full = run_on_ray(scenario, tmp_path / "full", 2, cluster=cluster)
    assert full.agent_steps == 80 * 7

    class Crash(Exception):
        pass

    def crash_at_5(report):
        if report.tick == 5:
            raise Crash

    with pytest.raises(Crash):
        run_on_ray(scenario, tmp_path / "crashed", 2, cluster=cluster, on_tick=crash_at_5)
    assert ckpt.last_complete(tmp_path / "crashed") == 4
    out = CliRunner().invoke(app, ["resume", str(tmp_path / "crashed")])
    assert out.exit_code == 0, out.output
    assert "resuming" in out.output and "at tick 4" in out.output
    run = json.loads((tmp_path / "crashed" / "run.json").read_text())
    assert run["mode"] == "ray" and run["start_tick"] == 4
    assert run["totals"]["agent_steps"] == 80 * 7
    for table in ("agent_state", "needs", "attitudes", "knowledge"):
        a = read_table(tmp_path / "full", table).to_pylist()
        b = read_table(tmp_path / "crashed", table).to_pylist()
        assert a == b, table
        assert len(a) > 0 or table in ("attitudes", "knowledge"), table  # town: no topics
