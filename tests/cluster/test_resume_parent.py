"""`societas resume PARENT` on a folder of seeds or arms finishes the experiment through the
real CLI: the completed runs are left alone, the interrupted one resumed, the unstarted ones
started as the original command would, with results equal to a run never interrupted;
`societas run --arm NAME` runs one arm at a time into the folders a full run writes."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import yaml
from cli_processes import societas, start, town, tree_digest, wait_for

TICKS = 120  # room to interrupt the second seed (20 agents step a tick in ~20 ms)
ARMS = [
    {"name": "control"},
    {
        "name": "storm",
        "interventions": [
            {"tick": 2, "kind": "event", "text": "A storm hit the town.", "importance": 0.9}
        ],
    },
]


def results(run: Path) -> dict[str, str]:
    """Every Parquet file of a run's results, by path, with its digest."""
    digests = tree_digest(run / "results")
    assert digests and all(name.endswith(".parquet") for name in digests), sorted(digests)
    return digests


def same_rows(run: Path, other: Path) -> None:
    """The tables of `run` hold the same rows in the same order in `other` (a resumed run's
    files are cut at its interruption, so they are compared by content; a run reported has
    the report's derived tables besides)."""
    import pyarrow.parquet as pq

    def rows(table: Path) -> list[dict]:
        return [
            row for f in sorted(table.rglob("*.parquet")) for row in pq.read_table(f).to_pylist()
        ]

    tables = sorted(p.name for p in (run / "results").iterdir())
    assert len(tables) > 10 and "agent_state" in tables
    for table in tables:
        assert rows(run / "results" / table) == rows(other / "results" / table), table
    assert len(rows(run / "results" / "agent_state")) == 20 * TICKS


def status(run: Path) -> str:
    return json.loads((run / "run.json").read_text())["status"]


def interrupt(log: Path, proc, after: str) -> str:
    """SIGINT once the run logged tick 2 after the line `after`; its exit code must be 130."""

    def reached() -> bool:
        text = log.read_text()
        return after in text and "progress tick=2/" in text.split(after, 1)[1]

    try:
        wait_for(reached, 120, f"tick 2 after {after!r}", log)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130, log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return log.read_text()


def test_resume_of_seeds_finishes_the_interrupted_and_starts_the_unstarted(tmp_path):
    cfg = town(tmp_path, ticks=TICKS, cluster={"checkpoint_every": 50})
    root = tmp_path / "reps"
    log = tmp_path / "run.log"
    proc = start("run", str(cfg), "--local", "--seeds", "0,1,2", "--out", str(root), log=log)
    text = interrupt(log, proc, "replicate seed 1")
    assert f"or finish every seed with: societas resume {root}" in text
    assert status(root / "seed-0") == "completed" and status(root / "seed-1") == "interrupted"
    assert not (root / "seed-2").exists()
    plan = json.loads((root / "experiment.json").read_text())
    assert plan["kind"] == "seeds" and plan["schema_version"] == 2
    assert [c["seed"] for c in plan["children"]] == [0, 1, 2]
    assert plan["options"]["local"] is True and "overwrite" not in plan["options"]
    seed0 = tree_digest(root / "seed-0")

    res = societas("resume", str(root), timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert f"{root / 'seed-0'}: complete ({TICKS} ticks), left as it is" in lines
    assert any(line.startswith(f"resuming {root / 'seed-1'} at tick ") for line in lines)
    assert f"{root / 'seed-2'}: not started; starting it" in lines
    assert f"{root}: every run of the experiment is complete" in lines
    assert tree_digest(root / "seed-0") == seed0  # the completed seed is not touched

    ref = tmp_path / "ref"
    res = societas("run", str(cfg), "--local", "--seeds", "1,2", "--out", str(ref), timeout=300)
    assert res.returncode == 0, res.stderr
    assert status(root / "seed-1") == "completed" and status(root / "seed-2") == "completed"
    same_rows(root / "seed-1", ref / "seed-1")
    assert results(root / "seed-2") == results(ref / "seed-2")  # started by the resume

    res = societas("resume", str(root), timeout=120)  # all done: nothing changes
    assert res.returncode == 0 and res.stdout.count("left as it is") == 3, res.stdout
    assert tree_digest(root / "seed-0") == seed0


def test_arms_one_at_a_time_equal_all_at_once_and_resume_finishes_each(tmp_path):
    cfg = town(tmp_path, ticks=TICKS, arms=ARMS, cluster={"checkpoint_every": 50})
    one = tmp_path / "one"  # one arm per command, as on two machines
    res = societas("run", str(cfg), "--local", "--arm", "storm", "--out", str(one), timeout=300)
    assert res.returncode == 0, res.stderr
    assert "not run by this command: arms control" in res.stdout
    res = societas("report", str(one), timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stderr.startswith(f"note: {one}: not complete: control (not started); ")
    res = societas("resume", str(one), timeout=300)  # starts control as --arm control would
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{one / 'storm'}: complete ({TICKS} ticks), left as it is" in res.stdout
    assert f"{one / 'control'}: not started; starting it" in res.stdout

    every = tmp_path / "every"  # every arm in one command, interrupted in the second
    log = tmp_path / "run.log"
    proc = start("run", str(cfg), "--local", "--out", str(every), log=log)
    text = interrupt(log, proc, "arm storm:")
    assert f"finish every arm with: societas resume {every}" in text
    assert status(every / "control") == "completed" and status(every / "storm") == "interrupted"
    res = societas("resume", str(every), timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"resuming {every / 'storm'} at tick " in res.stdout

    for arm in ("control", "storm"):
        for run in (one / arm, every / arm):
            record = json.loads((run / "run.json").read_text())
            assert record["status"] == "completed", run
            assert (record["experiment"], record["arm"]) == ("town", arm), run
    assert results(one / "control") == results(every / "control")
    same_rows(every / "storm", one / "storm")  # `one` was reported
    plan = json.loads((one / "experiment.json").read_text())
    assert (plan["kind"], [c["arm"] for c in plan["children"]]) == ("arms", ["control", "storm"])


def test_bad_arms_and_changed_scenarios_are_one_line_before_any_work(tmp_path):
    cfg = town(tmp_path, arms=ARMS)
    plain = town(tmp_path, name="plain.yaml")
    out = tmp_path / "out"
    for args, words in (
        (
            [str(cfg), "--arm", "rain"],
            "--arm 'rain': no such arm; the arms of 'town' are control, storm",
        ),
        ([str(cfg), "--arm", "control,rain"], "--arm 'rain': no such arm"),
        ([str(plain), "--arm", "control"], "--arm control: scenario 'town' declares no arms"),
        ([str(plain), "--seeds", "0,1", "--arm", "control"], "--arm control: scenario"),
    ):
        res = societas("run", *args, "--local", "--out", str(out))
        assert res.returncode == 2, res.stdout + res.stderr
        assert res.stderr.startswith(f"error: {words}"), res.stderr
        assert len(res.stderr.splitlines()) == 1 and not out.exists()

    res = societas("run", str(plain), "--local", "--seeds", "0", "--out", "/proc/societas-run")
    assert res.returncode == 2 and "Traceback" not in res.stderr  # nowhere to write the plan
    assert res.stderr.startswith("error: --out /proc/societas-run: cannot write experiment.json")
    assert len(res.stderr.splitlines()) == 1

    res = societas(
        "run", str(plain), "--local", "--seeds", "0,1", "--ticks", "6", "--out", str(out)
    )
    assert res.returncode == 0, res.stderr
    before = tree_digest(out)
    data = yaml.safe_load(plain.read_text())
    plain.write_text(yaml.safe_dump({**data, "description": "edited"}))
    res = societas("resume", str(out))
    assert res.returncode == 2 and res.stderr.startswith(f"error: {plain}: the scenario changed")
    assert len(res.stderr.splitlines()) == 1 and tree_digest(out) == before
    res = societas("run", str(plain), "--local", "--seeds", "2", "--out", str(out))
    assert res.returncode == 2 and "holds the runs of another experiment" in res.stderr

    (out / "experiment.json").unlink()  # a folder of seeds from before plans: named, exit 2
    res = societas("resume", str(out))
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == (
        f"error: {out} holds seeds 0, 1: pass one of {out / 'seed-0'}, {out / 'seed-1'}"
    )


def test_a_seed_recorded_running_on_another_host_is_taken_over_only_when_asked(tmp_path):
    cfg = town(tmp_path)
    root = tmp_path / "reps"
    res = societas("run", str(cfg), "--local", "--seeds", "0,1", "--out", str(root), timeout=300)
    assert res.returncode == 0, res.stderr
    seed1 = root / "seed-1"
    rows = results(seed1)
    done = json.loads((seed1 / "run.json").read_text())
    claim = {"status": "running", "host": "gone-host", "pid": 4242, "updated_at": "then"}
    (seed1 / "run.json").write_text(json.dumps({**done, **claim}))
    procs = json.loads((seed1 / "processes.json").read_text())
    procs.update(host="gone-host", driver={"pid": 4242, "create_time": 1.0})
    (seed1 / "processes.json").write_text(json.dumps(procs))
    before = tree_digest(seed1)

    take_over = f"once that host is gone for good: societas resume {seed1} --take-over"
    res = societas("resume", str(root))
    assert res.returncode == 1, res.stdout + res.stderr
    assert (
        f"{seed1}: recorded as running on gone-host (pid 4242, last update then), left alone; "
        f"{take_over}"
    ) in res.stdout.splitlines()
    assert res.stderr.strip().endswith(
        f"`societas resume {root} --take-over` resumes those recorded on another host, once "
        "that host is gone for good"
    )
    res = societas("resume", str(seed1))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip() == (
        f"error: {seed1}: recorded as running on gone-host (pid 4242, last update then), not "
        f"resumed: it may still run there; {take_over}"
    )
    assert tree_digest(seed1) == before  # neither resume touched it
    assert json.loads(societas("status", str(root)).stdout)["runs"]["seed-1"]["status"] == (
        "running"
    )

    res = societas("resume", str(root), "--take-over", timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{seed1}: recorded as running on gone-host; taking it over (--take-over)" in (
        res.stdout.splitlines()
    )
    assert status(seed1) == "completed" and status(root / "seed-0") == "completed"
    assert results(seed1) == rows
