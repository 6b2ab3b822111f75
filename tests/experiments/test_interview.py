"""Interviews and inspection of one agent from a run's last checkpoint, without changing the
run; a clear message when the run has none. Runs made locally and on Ray alike."""

from __future__ import annotations

import asyncio
import json

import pytest
import ray
from typer.testing import CliRunner

from societas.agents.population import population_for
from societas.agents.scenario import load_scenario
from societas.cluster.cli import app
from societas.cluster.experiments.arms import run_checkpointed
from societas.cluster.experiments.interview import NoCheckpointError, interview
from tests.experiments.conftest import scenario

SETS = [{"tick": 0, "kind": "set", "values": {"mood": 0.9}, "select": {"ids": [3]}}]


def name_of(agent_id: int) -> str:
    """The agent's generated name in the runs below (same scenario, same seed)."""
    cfg = load_scenario(scenario(ticks=6, interventions=SETS))
    return population_for(cfg).profiles[agent_id].name


def files_of(folder):
    return sorted(
        (p.relative_to(folder), p.stat().st_size) for p in folder.rglob("*") if p.is_file()
    )


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "run"
    cfg = load_scenario(scenario(ticks=6, interventions=SETS, cluster={"checkpoint_every": 3}))
    asyncio.run(run_checkpointed(cfg, out, groups=2))
    return out


def test_interview_answers_from_memory_and_status_without_changing_the_run(local_run):
    before = [f for f in files_of(local_run) if f[0].name != "interviews.jsonl"]
    out = CliRunner().invoke(
        app, ["interview", str(local_run), "--agent", "3", "How is your mood?"]
    )
    assert out.exit_code == 0, out.output
    assert out.output.startswith(f"{name_of(3)} (agent 3, tick 6): My mood is 0.9.")
    result = interview(local_run, 3, "What do you remember?")
    assert result["answer"].startswith("I remember: ") and result["checkpoint_tick"] == 6
    kept = (local_run / "interviews.jsonl").read_text().splitlines()
    assert [json.loads(x)["answer_source"] for x in kept[-2:]] == ["rules", "rules"]
    after = [f for f in files_of(local_run) if f[0].name != "interviews.jsonl"]
    assert after == before  # nothing else written into the run


def test_inspect_prints_profile_status_memories_relationships(local_run):
    out = CliRunner().invoke(app, ["inspect", str(local_run), "--agent", "3"])
    assert out.exit_code == 0, out.output
    text = out.output
    for part in (
        f"# agent 3: {name_of(3)}",
        "## profile",
        "## status",
        "mood: 0.9",
        "## memories: hot",
        "importance",
        "## relationships",
    ):
        assert part in text, part
    view = json.loads(
        CliRunner().invoke(app, ["inspect", str(local_run), "--agent", "3", "--json"]).output
    )
    assert view["status"]["mood"] == 0.9 and view["memories"] and view["checkpoint_tick"] == 6


def test_bad_agent_and_missing_checkpoint_are_clear(tmp_path, local_run):
    out = CliRunner().invoke(app, ["interview", str(local_run), "--agent", "40", "Hi?"])
    assert out.exit_code == 2 and "--agent: 40 is not in 0..11" in out.output
    assert "Traceback" not in out.output
    bare = tmp_path / "bare"
    cfg = load_scenario(
        scenario(ticks=2, cluster={"checkpoint_every": 0, "checkpoint_at_end": False})
    )
    asyncio.run(run_checkpointed(cfg, bare))
    for args in (
        ["interview", str(bare), "--agent", "1", "Hi?"],
        ["inspect", str(bare), "--agent", "1"],
    ):
        out = CliRunner().invoke(app, args)
        assert out.exit_code == 2 and "has no checkpoint" in out.output, out.output
    with pytest.raises(NoCheckpointError):
        interview(bare, 1, "Hi?")


def test_interview_and_branch_a_ray_run(tmp_path):
    from societas.agents.runtime.results import read_table
    from societas.cluster.experiments.branch import run_branch
    from societas.cluster.ray.runtime import run_on_ray

    cfg = load_scenario(scenario(ticks=4, interventions=SETS))
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
    )
    try:
        run_on_ray(
            cfg, tmp_path / "ray", 2, cluster={"metrics": {"port": 0}, "checkpoint_every": 2}
        )
    finally:
        ray.shutdown()
    result = interview(tmp_path / "ray", 3, "How is your mood?")
    assert result["answer"].startswith("My mood is 0.9") and result["checkpoint_tick"] == 4
    patch = tmp_path / "patch.yaml"
    patch.write_text("interventions: [{tick: 3, kind: set, values: {mood: 0.2}}]\n")
    info = run_branch(tmp_path / "ray", "0:08:30", patch, tmp_path / "branch")  # tick 3
    assert info["branch"]["from_checkpoint"] == 2 and info["llm_calls_replayed"] > 0
    for table in ("agent_state", "needs", "dialogues", "llm"):
        mine = [r for r in read_table(tmp_path / "branch", table).to_pylist() if r["tick"] < 3]
        theirs = [r for r in read_table(tmp_path / "ray", table).to_pylist() if r["tick"] < 3]
        assert mine == theirs and mine, table
    assert interview(tmp_path / "branch", 3, "How is your mood?")["answer"].startswith(
        "My mood is 0.2"
    )


@pytest.mark.parametrize("layout", ["arms", "seeds"])
def test_a_folder_of_arms_or_seeds_is_named_with_the_runs_to_pass(tmp_path, local_run, layout):
    """inspect, interview, resume, status, cleanup, stop and branch of the folder above arms
    or seed-N replicates say what it holds and which folders to pass, exit 2."""
    import shutil

    names = ["control", "treatment"] if layout == "arms" else ["seed-0", "seed-1"]
    for name in names:
        shutil.copytree(local_run, tmp_path / name)
    held = "arms control, treatment" if layout == "arms" else "seeds 0, 1"
    runs = ", ".join(str(tmp_path / name) for name in names)
    patch = tmp_path / "patch.yaml"
    patch.write_text("interventions: []\n")
    for args in (
        ["inspect", str(tmp_path), "--agent", "3"],
        ["interview", str(tmp_path), "--agent", "3", "Hi?"],
        ["resume", str(tmp_path)],
        ["status", str(tmp_path)],
        ["cleanup", str(tmp_path)],
        ["stop", str(tmp_path)],
        ["branch", str(tmp_path), "--at", "0:08", "--patch", str(patch), "--out", "b"],
    ):
        out = CliRunner().invoke(app, args)
        assert out.exit_code == 2, (args, out.output)
        assert f"error: {tmp_path} holds {held}: pass one of {runs}\n" in out.output, out.output


def test_an_interview_that_fell_back_says_why(local_run):
    """A model whose every reply is garbage: the answer is the fallback's, and the record
    (printed and kept in interviews.jsonl) says what was wrong with the model's replies."""
    import threading

    from societas.testing.emulator import EmulatorConfig, serve

    ready, stop, urls = threading.Event(), threading.Event(), []

    async def emulate() -> None:  # in its own thread: the CLI runs its own event loop
        async with serve(EmulatorConfig(rate_garbage=1.0, base_latency_s=0.001)) as (_, url):
            urls.append(url)
            ready.set()
            await asyncio.to_thread(stop.wait)

    thread = threading.Thread(target=asyncio.run, args=(emulate(),))
    thread.start()
    try:
        assert ready.wait(30)
        args = ["interview", str(local_run), "--agent", "2", "--endpoint", urls[0]]
        res = CliRunner().invoke(app, [*args, "--model", "emulated", "How was your day?"])
    finally:
        stop.set()
        thread.join()
    assert res.exit_code == 0, res.output
    kept = json.loads((local_run / "interviews.jsonl").read_text().splitlines()[-1])
    assert kept["answer_source"] == "fallback"
    assert kept["fallback_reason"] and kept["fallback_reason"] != "no reply"
    assert res.output.rstrip().endswith(f"[fallback: {kept['fallback_reason']}]"), res.output
