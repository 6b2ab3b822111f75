"""The worked experiment in configs/examples/lab, through the real `societas` command as a
user runs it: two arms, surveys on day 0 and day 1, an interview, a branch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow.compute as pc

from societas.agents.runtime.results import read_table
from tests.experiments.conftest import LAB


def societas(*args: str, cwd=None) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "societas.cluster.cli", *args],
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_lab_arms_surveys_interview_and_branch(tmp_path):
    out = tmp_path / "lab"
    said = societas("run", str(LAB / "experiment.yaml"), "--local", "--out", str(out))
    assert said.strip().splitlines()[-1].startswith(f"next: societas report {out}  (the arms")
    for arm in ("control", "treatment"):
        run = json.loads((out / arm / "run.json").read_text())
        assert run["arm"] == arm and run["status"] == "completed"
        surveys = read_table(out / arm, "surveys")
        assert set(surveys["survey"].to_pylist()) == {"evening_day0", "evening_day1"}
        assert set(surveys["day"].to_pylist()) == {0, 1} and surveys.num_rows == 20 * 5
        assert read_table(out / arm, "agent_state").num_rows == 20 * 96
        assert len(list((out / arm / "checkpoints").glob("tick=*"))) == 24  # every 2 hours
    control = read_table(out / "control", "agent_state")
    treatment = read_table(out / "treatment", "agent_state")
    # the same people; the treatment's low earners get the basic income from tick 4
    first = lambda t: t.filter(pc.equal(t["tick"], 0)).select(["agent_id", "income"])  # noqa: E731
    assert first(control).equals(first(treatment))
    assert max(treatment["transfers"].to_pylist()) == 800.0
    assert max(control["transfers"].to_pylist()) == 0.0
    said = societas("interview", str(out / "control"), "--agent", "3", "How was your day?")
    assert said.startswith("Dia (agent 3, tick 96): ") and len(said.strip()) > 30
    societas(
        "branch",
        str(out / "control"),
        "--at",
        "1:08",
        "--patch",
        str(LAB / "patch.yaml"),
        "--out",
        str(tmp_path / "branch"),
    )
    run = json.loads((tmp_path / "branch" / "run.json").read_text())
    assert run["llm_calls_replayed"] > 0 and run["llm_calls_live"] > 0
    assert run["branch"]["tick"] == 50 and run["branch"]["from_checkpoint"] == 48
    for table in ("agent_state", "surveys", "dialogues"):
        mine, theirs = read_table(tmp_path / "branch", table), read_table(out / "control", table)
        assert mine.filter(pc.less(mine["tick"], 50)).equals(
            theirs.filter(pc.less(theirs["tick"], 50))
        ), table
