"""`societas resume URL` and `status URL` on an experiment whose seeds or arms went into an
object store: the plan and each child's record are read at the URL, the interrupted run is
resumed and the unstarted one started there, with the rows of a run never interrupted; the
arms stay named as one experiment, and `report URL` and `export URL` read it from a local
copy of its results."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from cli_processes import ROOT, societas, start, town
from test_cli_ray_trust import moto_s3
from test_resume_parent import ARMS, TICKS, interrupt, same_rows


def test_resume_of_seeds_at_a_url_finishes_them_there(tmp_path):
    with moto_s3(tmp_path) as (s3, query, env):
        cfg = town(tmp_path, ticks=TICKS, cluster={"checkpoint_every": 50})
        url = f"s3://runs/reps{query}"
        log = tmp_path / "run.log"
        proc = start("run", str(cfg), "--local", "--seeds", "0,1,2", "--out", url, log=log, env=env)
        text = interrupt(log, proc, "replicate seed 1")
        assert f"or finish every seed with: societas resume {shlex.quote(url)}" in text

        def record(seed: int) -> dict:
            return json.loads(s3.open_input_file(f"runs/reps/seed-{seed}/run.json").read())

        plan = json.loads(s3.open_input_file("runs/reps/experiment.json").read())
        assert [c["seed"] for c in plan["children"]] == [0, 1, 2]
        assert record(0)["status"] == "completed" and record(1)["status"] == "interrupted"
        seed0 = s3.get_file_info("runs/reps/seed-0/run.json").mtime

        res = societas("status", url, env=env)
        assert res.returncode == 0, res.stderr
        runs = json.loads(res.stdout)["runs"]
        assert [runs[f"seed-{s}"]["status"] for s in (0, 1, 2)] == [
            "completed",
            "interrupted",
            "not started",
        ]

        res = societas("resume", url, env=env, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        child = {s: url.replace("/reps?", f"/reps/seed-{s}?") for s in (0, 1, 2)}
        lines = res.stdout.splitlines()
        assert f"{child[0]}: complete ({TICKS} ticks), left as it is" in lines
        assert any(line.startswith(f"resuming {child[1]} at tick ") for line in lines)
        assert f"{child[2]}: not started; starting it" in lines
        assert f"{url}: every run of the experiment is complete" in lines
        assert all(record(s)["status"] == "completed" for s in (0, 1, 2))
        assert s3.get_file_info("runs/reps/seed-0/run.json").mtime == seed0  # not touched
        assert not (ROOT / "s3:").exists()

        ref = tmp_path / "ref"
        res = societas("run", str(cfg), "--local", "--seeds", "1,2", "--out", str(ref), timeout=300)
        assert res.returncode == 0, res.stderr
        for seed in (1, 2):
            local = tmp_path / f"pulled-{seed}"
            s3_copy(s3, f"runs/reps/seed-{seed}", local)
            same_rows(local, ref / f"seed-{seed}")


def s3_copy(s3, prefix: str, dest: Path) -> None:
    """Copy what the store holds under `prefix` into `dest`."""
    from pyarrow import fs as pafs

    pafs.copy_files(prefix, str(dest), source_filesystem=s3)


def test_a_run_at_a_url_that_runs_elsewhere_or_here_is_not_resumed(tmp_path):
    import socket
    import sys

    import psutil

    with moto_s3(tmp_path) as (s3, query, env):
        url = f"s3://runs/one{query}"
        record = {"status": "running", "scenario": "town", "host": "gone-host", "pid": 4242}
        record["updated_at"] = "then"
        put(s3, "runs/one/run.json", record)
        put(s3, "runs/one/processes.json", {"host": "gone-host", "driver": {"pid": 4242}})
        res = societas("resume", url, env=env)
        assert res.returncode == 2, res.stdout + res.stderr
        assert res.stderr.strip() == (
            f"error: {url}: recorded as running on gone-host (pid 4242, last update then), not "
            f"resumed: it may still run there; once that host is gone for good: societas "
            f"resume {shlex.quote(url)} --take-over"
        )
        res = societas("status", url, env=env)
        assert res.returncode == 0 and json.loads(res.stdout)["status"] == "running", res.stderr

        with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as driver:
            try:
                here = {"pid": driver.pid, "create_time": psutil.Process(driver.pid).create_time()}
                put(s3, "runs/one/processes.json", {"host": socket.gethostname(), "driver": here})
                put(s3, "runs/one/run.json", {**record, "host": socket.gethostname()})
                res = societas("resume", url, env=env)
                assert res.returncode == 2, res.stdout + res.stderr
                assert res.stderr.startswith(f"error: {url}: still running here (pid {driver.pid})")
                assert json.loads(societas("status", url, env=env).stdout)["driver_running"]
            finally:
                driver.kill()
        res = societas("status", url, env=env)  # its driver ended without a record
        assert json.loads(res.stdout)["status"] == "interrupted", res.stdout + res.stderr


def put(s3, path: str, data: dict) -> None:
    """Write `data` as JSON at `path` in the store."""
    with s3.open_output_stream(path) as out:
        out.write(json.dumps(data).encode())


def test_a_url_no_store_opens_is_named_as_such_not_as_bad_json():
    for command in ("resume", "status"):
        res = societas(command, "nostore://bucket/exp")
        assert res.returncode == 2, res.stdout + res.stderr
        assert "Traceback" not in res.stderr
        assert "error: nostore://bucket/exp: cannot open: " in res.stderr, res.stderr
        assert "JSON" not in res.stderr


def test_arms_at_a_url_resume_report_and_export_as_one_experiment(tmp_path):
    with moto_s3(tmp_path) as (s3, query, env):
        cfg = town(tmp_path, ticks=TICKS, arms=ARMS, cluster={"checkpoint_every": 50})
        url = f"s3://runs/exp{query}"
        log = tmp_path / "run.log"
        proc = start("run", str(cfg), "--local", "--out", url, log=log, env=env)
        text = interrupt(log, proc, "arm storm:")
        assert f"finish every arm with: societas resume {shlex.quote(url)}" in text

        def record(arm: str) -> dict:
            return json.loads(s3.open_input_file(f"runs/exp/{arm}/run.json").read())

        for arm, status in (("control", "completed"), ("storm", "interrupted")):
            assert (record(arm)["status"], record(arm)["experiment"], record(arm)["arm"]) == (
                status,
                "town",
                arm,
            )
        res = societas("report", url, env=env, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        assert res.stderr.startswith(
            f"note: {url}: not complete: storm (interrupted); the report covers what has run; "
            f"`societas resume {shlex.quote(url)}` finishes the experiment"
        ), res.stderr

        res = societas("resume", url, env=env, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        storm = url.replace("/exp?", "/exp/storm?")
        assert f"next: societas report {shlex.quote(storm)}" in res.stdout  # not its staging
        assert f"next: societas report {shlex.quote(url)}" in res.stdout
        for arm in ("control", "storm"):  # the resumed arm's new record is named again
            assert (record(arm)["status"], record(arm)["experiment"], record(arm)["arm"]) == (
                "completed",
                "town",
                arm,
            )

        res = societas("report", url, env=env, timeout=300)
        assert res.returncode == 0 and not res.stderr, res.stdout + res.stderr
        html = Path(res.stdout.split("wrote ", 1)[1].split(" (", 1)[0])
        summary = json.loads((html.parent / "summary.json").read_text())
        assert summary["arms"] == ["control", "storm"]  # one experiment, side by side
        assert any(
            f["series"].startswith("difference: storm") for f in summary["findings"]["reach"]
        )
        res = societas("export", url, "--tidy", "--format", "csv", env=env, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        tidy = Path(res.stdout.split("wrote ", 1)[1].strip())
        assert {row.split(",")[0] for row in tidy.read_text().splitlines()[1:]} == {
            "control",
            "storm",
        }
        assert html.is_file()  # the export's refresh of the copy left the report in place
        assert not list(html.parent.rglob("checkpoints")) and not list(html.parent.rglob("memory"))

        control = url.replace("/exp?", "/exp/control?")  # restored from its last checkpoint
        res = societas("inspect", control, "--agent", "3", "--json", env=env, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        assert json.loads(res.stdout)["agent_id"] == 3
        res = societas("interview", control, "How was your day?", "--agent", "3", "--json", env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        said = json.loads(res.stdout)
        assert (said["checkpoint_tick"], said["answer_source"]) == (TICKS, "rules"), said
