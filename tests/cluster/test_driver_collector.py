"""Process tuning is opt-in: the run loop leaves the collector alone; the CLI's run/resume
and every Ray group actor call `memory.tuning.tune_worker()` for the process they host."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path

from synthetic_groups import SyntheticConfig, SyntheticFactory
from typer.testing import CliRunner

from societas.cluster.cli import app
from societas.cluster.ray.groups import GroupActor
from societas.cluster.ray.runtime import ClusterConfig, InProcessGroup, RunSpec, run_groups
from societas.memory import tuning

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"


def test_run_groups_leaves_the_collector_alone(tmp_path):
    factory = SyntheticFactory(SyntheticConfig(agents=20, groups=2, seed=5))
    handles = [InProcessGroup(factory(g)) for g in range(2)]
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's default
    try:
        frozen = gc.get_freeze_count()
        spec = RunSpec(run_dir=tmp_path, ticks=2, seed=5, agents=20)
        result, _ = asyncio.run(run_groups(handles, spec, ClusterConfig(checkpoint_every=0)))
        assert result.ticks == 2 and len(result.digests) == 2
        assert gc.get_threshold() == (700, 10, 10)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.set_threshold(*saved)


def test_cli_run_and_resume_and_group_actors_tune_their_process(tmp_path, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(tuning, "tune_worker", lambda: calls.append("tuned"))
    out = tmp_path / "run"
    runner = CliRunner()
    args = ["run", str(TOWN), "--local", "--agents", "20", "--ticks", "6", "--out", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert calls == ["tuned"]
    record = json.loads((out / "run.json").read_text())  # as if stopped at its last checkpoint:
    record["status"] = "interrupted"  # a finished run has nothing to resume
    (out / "run.json").write_text(json.dumps(record))
    res = runner.invoke(app, ["resume", str(out), "--local"])
    assert res.exit_code == 0, res.output
    assert calls == ["tuned", "tuned"]
    factory = SyntheticFactory(SyntheticConfig(agents=4, groups=1, seed=1))
    GroupActor(factory, 0)  # the actor's body, outside Ray
    assert calls == ["tuned"] * 3
