"""Run folders through the real `societas` CLI started as a subprocess: `check` judges the
folder `run` would write, given or not, and a run of several seeds interrupted in one says
how to finish them all, and that way works."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from pathlib import Path

from cli_processes import SOCIETAS, societas, start, town, wait_for


def societas_in(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI run with `folder` as its working folder (where runs/<name> goes)."""
    return subprocess.run(
        [*SOCIETAS, *args], check=False, capture_output=True, text=True, timeout=120, cwd=folder
    )


def test_check_names_a_default_out_that_holds_another_run(tmp_path):
    cfg = town(tmp_path, ticks=5)
    res = societas_in(tmp_path, "run", str(cfg), "--local")
    assert res.returncode == 0 and (tmp_path / "runs" / "town" / "run.json").is_file(), res.stderr
    res = societas_in(tmp_path, "check", str(cfg))
    assert res.returncode == 2, res.stdout
    assert (
        "--out runs/town: holds another run 'town' (completed); choose another --out, pass "
        "--overwrite to replace it" in res.stderr
    )
    assert "Traceback" not in res.stderr
    res = societas_in(tmp_path, "check", str(cfg), "--overwrite")
    assert res.returncode == 0 and res.stdout.startswith("ok: "), res.stderr


def test_seeds_interrupted_in_the_first_say_how_to_finish_and_that_works(tmp_path):
    ticks = 120  # room to interrupt seed 0 (20 agents step a tick in ~20 ms)
    cfg = town(tmp_path, ticks=ticks, cluster={"checkpoint_every": 50})
    root = tmp_path / "reps"
    log = tmp_path / "seeds.log"
    proc = start("run", str(cfg), "--local", "--seeds", "0,1,2", "--out", str(root), log=log)
    try:
        wait_for(lambda: "progress tick=2/" in log.read_text(), 120, "tick 2 of seed 0", log)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130, log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    assert f"continue with: societas resume {root / 'seed-0'}" in text
    hint = next(line for line in text.splitlines() if line.startswith("seeds 1, 2 did not start"))
    again = hint.split("run them with: ", 1)[1]
    assert again == f"societas run {cfg} --seeds 1,2 --out {root} --local"
    assert not (root / "seed-1").exists() and not (root / "seed-2").exists()

    res = societas("run", str(cfg), "--local", "--seeds", "0,1,2", "--out", str(root))
    assert res.returncode == 2 and "holds another run" in res.stderr  # the same command: refused
    res = societas("resume", str(root / "seed-0"), timeout=300)
    assert res.returncode == 0, res.stderr
    res = societas(*shlex.split(again)[1:], timeout=300)
    assert res.returncode == 0, res.stderr
    for seed in (0, 1, 2):
        run = json.loads((root / f"seed-{seed}" / "run.json").read_text())
        assert run["status"] == "completed" and run["ticks_done"] == ticks, seed
