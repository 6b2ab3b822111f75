"""Branches: the shared past re-simulated from the parent's checkpoint and LLM cache (rows
equal to the parent's, row for row, no live model call), then live with the patch."""

from __future__ import annotations

import asyncio
import json

import pyarrow.compute as pc
import pytest

from societas.agents.runtime.results import SCHEMAS, read_table
from societas.agents.scenario import load_scenario
from societas.cluster.experiments.arms import run_checkpointed
from societas.cluster.experiments.branch import BranchError, run_branch, run_branch_async
from societas.cluster.experiments.interview import inspect_agent
from societas.testing.emulator import EmulatorConfig, serve
from tests.experiments.conftest import CODE, scenario

AT, AT_TICK = "0:12", 10  # start 07:00, 30-minute ticks
SURVEY = {
    "id": "noon",
    "day": 0,
    "hour": 11,
    "questions": [{"id": "life", "kind": "likert", "attribute": "mood", "text": "Happy?"}],
}


def parent_data(**over):
    data = {
        "ticks": 16,
        "blocks": ["probe_blocks:ProbeBlock"],
        "code_dirs": [str(CODE)],
        "surveys": [SURVEY],
        "cluster": {"checkpoint_every": 4, "keep_checkpoints": 0},
    }
    return scenario(**{**data, **over})


def write_files(tmp_path, patch: str):
    exp = tmp_path / "exp.yaml"
    exp.write_text(
        json.dumps(
            {
                "blocks": ["probe_blocks:ProbeBlock"],
                "code_dirs": [str(CODE)],
                **{k: v for k, v in parent_data().items() if k not in ("blocks", "code_dirs")},
            }
        )
    )
    path = tmp_path / "patch.yaml"
    path.write_text(patch)
    return path


PATCH = """
scenario: exp.yaml
overrides: {economy: {meal_cost: 20}}
interventions:
  - {tick: 10, kind: set, values: {mood: 0.95}, select: {ids: [0, 1]}}
  - {tick: 11, kind: event, text: "A street festival starts.", importance: 0.6}
"""


def split(out, table, tick):
    data = read_table(out, table)
    before = data.filter(pc.less(data["tick"], tick)).to_pylist()
    after = data.filter(pc.greater_equal(data["tick"], tick)).to_pylist()
    return before, after


@pytest.fixture(scope="module")
def parent(tmp_path_factory):
    out = tmp_path_factory.mktemp("parent") / "run"
    asyncio.run(run_checkpointed(load_scenario(parent_data()), out))
    return out


def test_branch_rows_before_the_point_equal_the_parent_row_for_row(tmp_path, parent):
    info = run_branch(parent, AT, write_files(tmp_path, PATCH), tmp_path / "branch")
    out = tmp_path / "branch"
    assert info["branch"] == {
        "parent": str(parent),
        "at": AT,
        "tick": AT_TICK,
        "from_checkpoint": 8,
    }
    compared = replayed = 0
    for table in SCHEMAS:
        mine, theirs = split(out, table, AT_TICK)[0], split(parent, table, AT_TICK)[0]
        assert mine == theirs, table
        compared += len(mine)
        replayed += sum(1 for r in mine if r["tick"] >= 8)  # re-simulated, not copied
    assert compared > 500 and replayed > 50
    # after the branch point the patch applies: the set moods and the event
    probe_after = [r for r in split(out, "events", AT_TICK)[1] if r["kind"] == "probe"]
    assert any(r["agent_id"] == 0 and r["detail"].startswith("0.9600") for r in probe_after)
    run = json.loads((out / "run.json").read_text())
    assert run["llm_calls_replayed"] > 0 and run["llm_calls_live"] > 0
    assert run["llm_calls_replayed"] == info["llm_calls_replayed"]
    assert run["branch"]["from_checkpoint"] == 8
    config = json.loads((out / "config.json").read_text())
    assert config["economy"]["meal_cost"] == 20 and len(config["interventions"]) == 2


def test_branch_replays_the_past_from_the_cache_without_live_calls(tmp_path):
    async def go():
        async with serve(EmulatorConfig(base_latency_s=0.0)) as (emu, url):
            llm = {
                "provider": "openai",
                "timeout_s": 10,
                "endpoints": [{"base_url": url, "model": "emulated", "send_task_hints": True}],
            }
            cfg = load_scenario(parent_data(ticks=12, llm=llm))
            await run_checkpointed(cfg, tmp_path / "parent")
            parent_requests = emu.stats["chat_requests"]
            assert parent_requests > 0 and (tmp_path / "parent" / "llm-cache").is_dir()
            at_switch: list[int] = []

            def progress(p):
                if p.tick == AT_TICK - 1:
                    at_switch.append(emu.stats["chat_requests"])

            info = await run_branch_async(
                tmp_path / "parent",
                AT,
                write_files(tmp_path, PATCH),
                tmp_path / "branch",
                on_progress=progress,
            )
            return parent_requests, at_switch, emu.stats["chat_requests"], info

    parent_requests, at_switch, total, info = asyncio.run(go())
    view = inspect_agent(tmp_path / "parent", 0)  # a model run keeps its prompts
    assert len(view["prompts"]) == 5 and all(p["prompt"] and p["answer"] for p in view["prompts"])
    # the replayed past: not one chat request (the preflight's probe lists the models)
    assert at_switch == [parent_requests]
    assert info["llm_calls_replayed"] == info["llm_cache_hits_replayed"] > 0
    assert 0 < total - parent_requests <= info["llm_calls_live"]
    for table in ("agent_state", "surveys", "dialogues"):
        assert (
            split(tmp_path / "branch", table, AT_TICK)[0]
            == split(tmp_path / "parent", table, AT_TICK)[0]
        )


@pytest.mark.parametrize(
    ("at", "patch", "message"),
    [
        ("noon", PATCH, "--at: expected DAY:HOUR"),
        ("0:25", PATCH, "is not a time of day"),
        ("3:08", PATCH, "outside the run's ticks 0..15"),
        ("0:07", PATCH, "before the run's first checkpoint"),
        (
            "0:12",
            "scenario: exp.yaml\ninterventions: [{tick: 9, kind: event, text: x}]",
            "interventions.0.tick 9 is before the branch point",
        ),
        ("0:12", "scenario: exp.yaml\noverrides: {seed: 9}", "cannot change ['seed']"),
        (
            "0:12",
            "scenario: exp.yaml\noverrides: {economy: {meal_cots: 1}}",
            "economy.meal_cots: unknown field",
        ),
        ("0:12", "interventions: []", "name the experiment YAML"),
    ],
)
def test_bad_branch_inputs_are_named_before_anything_runs(tmp_path, parent, at, patch, message):
    out = tmp_path / "branch"
    with pytest.raises(BranchError) as err:
        run_branch(parent, at, write_files(tmp_path, patch), out)
    assert message in str(err.value)
    assert not out.exists()


def test_branch_needs_a_checkpoint_and_a_new_folder(tmp_path, parent):
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text((parent / "config.json").read_text())
    with pytest.raises(BranchError, match="has no checkpoint"):
        run_branch(bare, AT, write_files(tmp_path, PATCH), tmp_path / "b1")
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("x")
    with pytest.raises(BranchError, match="is not empty"):
        run_branch(parent, AT, write_files(tmp_path, PATCH), used)
    assert (used / "keep.txt").read_text() == "x"


def test_branch_command_names_the_problem_without_a_traceback(tmp_path, parent):
    from typer.testing import CliRunner

    from societas.cluster.cli import app

    patch = write_files(tmp_path, PATCH)
    args = ["branch", str(parent), "--patch", str(patch), "--out", str(tmp_path / "b")]
    out = CliRunner().invoke(app, [*args, "--at", "noon"])
    assert out.exit_code == 2 and "--at: expected DAY:HOUR such as 1:08, got 'noon'" in out.output
    assert "Traceback" not in out.output
    out = CliRunner().invoke(app, [*args, "--at", "0:12"])
    assert out.exit_code == 0, out.output
    assert "branch of" in out.output and "replayed" in out.output and "live" in out.output


def test_a_branch_whose_model_is_down_is_named_before_anything_is_copied(tmp_path):
    """The parent ran on a model whose server has stopped since: the live part would fail."""

    async def parent_on_a_model() -> None:
        async with serve(EmulatorConfig(base_latency_s=0.0)) as (_emu, url):
            llm = {"provider": "openai", "timeout_s": 10,
                   "endpoints": [{"base_url": url, "model": "emulated",
                                  "send_task_hints": True}]}  # fmt: skip
            await run_checkpointed(load_scenario(parent_data(ticks=12, llm=llm)), tmp_path / "p")

    asyncio.run(parent_on_a_model())  # the server is gone once this returns
    out = tmp_path / "branch"
    with pytest.raises(BranchError, match=r"llm\.endpoints\.0\.base_url = http://127\.0\.0\.1:"):
        run_branch(tmp_path / "p", AT, write_files(tmp_path, PATCH), out)
    assert not out.exists()
