"""A resume goes on only from the files the run or experiment started with: its block code,
prompts and profiles file are digested into run.json / experiment.json at the start, and
`societas resume` refuses (exit 2, one line per file, nothing written) when one changed,
unless `--allow-changed-inputs`, which the record then names."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

from cli_processes import ROOT, societas, start, town, tree_digest
from test_resume_parent import interrupt

from societas.cluster.observe.inputs import run_input_changes, scenario_inputs
from societas.cluster.observe.run_folder import RunRecord
from societas.cluster.report import write_report

TICKS = 120  # room to interrupt the run (20 agents step a tick in ~20 ms)
BLOCK = ROOT / "tests" / "experiments" / "code" / "probe_blocks.py"
PROFILES = ROOT / "configs" / "examples" / "lab" / "profiles.csv"
MOOD = [{"name": "mood", "type": "float", "default": 0.5}]


def record(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


def test_digests_name_each_file_and_leave_out_caches_and_hidden_folders(tmp_path):
    code, prompts = tmp_path / "code", tmp_path / "prompts"
    for path in (code / "pkg" / "__pycache__", code / ".git", prompts):
        path.mkdir(parents=True)
    (code / "blocks.py").write_text("x = 1\n")
    (code / "pkg" / "util.py").write_text("y = 2\n")
    (code / "notes.md").write_text("not code\n")
    (code / "pkg" / "__pycache__" / "util.cpython-311.py").write_text("cache\n")
    (code / ".git" / "hook.py").write_text("hidden\n")
    (prompts / "daily_plan.txt").write_text("Plan {name}'s day.\n")
    config = {"code_dirs": [str(code)], "prompts": str(prompts), "agents": {}, "network": {}}

    first = scenario_inputs([config], tmp_path / "missing.yaml")
    assert list(first.files) == [
        "code:code/blocks.py",
        "code:code/pkg/util.py",
        "prompts:prompts/daily_plan.txt",
    ]
    assert scenario_inputs([config]) == first  # the same files, the same digests
    (code / "pkg" / "util.py").write_text("y = 3\n")
    second = scenario_inputs([config])
    assert second.digest != first.digest
    assert second.files["code:code/blocks.py"] == first.files["code:code/blocks.py"]

    old = RunRecord.model_validate({**_minimal_record(), "schema_version": 3})
    assert old.inputs is None and old.inputs_changed == []  # a run.json from before loads


def _minimal_record() -> dict:
    return {
        "status": "interrupted",
        "scenario": "town",
        "mode": "local",
        "run_id": "r",
        "pid": 1,
        "host": "h",
        "started_at": "t",
        "updated_at": "t",
        "ticks": 8,
    }


def test_resume_refuses_a_changed_block_names_it_and_goes_on_when_allowed(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    block = code / "probe_blocks.py"
    shutil.copy(BLOCK, block)
    cfg = town(
        tmp_path,
        ticks=TICKS,
        attributes=MOOD,
        blocks=[{"path": "probe_blocks:ProbeBlock"}],
        code_dirs=["code"],
        cluster={"checkpoint_every": 50},
    )
    run = tmp_path / "run"
    log = tmp_path / "run.log"
    proc = start("run", str(cfg), "--local", "--out", str(run), log=log)
    interrupt(log, proc, "progress tick=1/")
    started = record(run)
    assert started["status"] == "interrupted" and started["schema_version"] == 4
    assert list(started["inputs"]) == ["code:code/probe_blocks.py"]
    same = tmp_path / "same"  # the same interrupted run, resumed once the code is restored
    shutil.copytree(run, same)

    original = block.read_bytes()
    block.write_bytes(original + b"# edited\n")
    (code / "helper.py").write_text("HELP = 1\n")
    before = tree_digest(run)
    res = societas("resume", str(run))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines() == [
        f"error: {run}: code/helper.py is new since the run started",
        f"error: {run}: code/probe_blocks.py changed since the run started",
        "restore them, or go on with them anyway: "
        f"societas resume {run} --allow-changed-inputs (the record says which)",
    ]
    assert "resuming" not in res.stdout and tree_digest(run) == before

    res = societas("resume", str(run), "--allow-changed-inputs", timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    done = record(run)
    assert done["status"] == "completed" and done["inputs"] == started["inputs"]
    [change] = done["inputs_changed"]
    assert change["resume"] == 1
    assert change["changes"] == {
        "code:code/helper.py": "new",
        "code:code/probe_blocks.py": "changed",
    }
    first = done["segments"][1]["start_tick"]  # the resume's first tick
    assert first >= 1
    write_report(run)  # the page says which rows came from the changed code
    page = html.unescape((run / "report.html").read_text())
    assert (
        "This run was resumed with inputs that had changed since it started "
        f"(`resume --allow-changed-inputs`): from tick {first}: code:code/helper.py new, "
        "code:code/probe_blocks.py changed."
    ) in page

    block.write_bytes(original)
    (code / "helper.py").unlink()
    assert run_input_changes(same) == {}
    res = societas("resume", str(same), timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert record(same)["status"] == "completed" and record(same)["inputs_changed"] == []

    block.write_bytes(original + b"# edited again\n")  # a run.json from before: as it was
    old = {k: v for k, v in record(same).items() if not k.startswith("inputs")}
    (same / "run.json").write_text(json.dumps({**old, "status": "interrupted"}))
    assert run_input_changes(same) == {}


def test_resume_of_seeds_refuses_a_changed_profiles_file_unless_allowed(tmp_path):
    profiles = tmp_path / "people.csv"
    shutil.copy(PROFILES, profiles)
    cfg = town(tmp_path, agents={"profiles": "people.csv"}, attributes=MOOD)
    out = tmp_path / "reps"
    res = societas("run", str(cfg), "--local", "--seeds", "0,1", "--ticks", "6", "--out", str(out))
    assert res.returncode == 0, res.stderr
    plan = json.loads((out / "experiment.json").read_text())
    assert plan["schema_version"] == 2
    assert sorted(plan["inputs"]) == ["profiles:people.csv", "scenario"]
    shutil.rmtree(out / "seed-1")  # a seed that never started

    profiles.write_text(profiles.read_text().replace("Ana,39", "Ana,41"))
    before = tree_digest(out)
    res = societas("resume", str(out))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines()[0] == (
        f"error: {out}: profiles file people.csv changed since the experiment started"
    )
    assert len(res.stderr.splitlines()) == 2 and tree_digest(out) == before
    res = societas("run", str(cfg), "--local", "--seeds", "2", "--ticks", "6", "--out", str(out))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "holds the runs of another experiment (profiles file people.csv as then" in res.stderr

    res = societas("resume", str(out), "--allow-changed-inputs", timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{out / 'seed-1'}: not started; starting it" in res.stdout
    plan = json.loads((out / "experiment.json").read_text())
    [change] = plan["inputs_changed"]
    assert change["changes"] == {"profiles:people.csv": "changed"}
    assert record(out / "seed-1")["status"] == "completed"

    old = {k: v for k, v in plan.items() if not k.startswith("inputs")}  # a plan from before
    (out / "experiment.json").write_text(json.dumps({**old, "schema_version": 1}))
    res = societas("resume", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("left as it is") == 2
