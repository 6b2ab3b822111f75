"""What `societas cleanup` ends, on real processes: those processes.json lists while each is
the very process listed (a pid now held by another process is left alone), earlier
invocations' processes a resume keeps listed, and `status` of a run whose driver is gone."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from societas.cluster.cleanup import ProcessEntry, ProcessesRecord, RayStarted, cleanup_run
from societas.cluster.cli import app
from societas.cluster.observe.run_folder import PROCESSES_FILE, RUN_FILE, RunFolder, RunRecord


@pytest.fixture
def sleepers() -> Iterator[list[subprocess.Popen]]:
    """Three processes that live until ended (none carries a run id)."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"]) for _ in range(3)
    ]
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def entry(proc: subprocess.Popen, shift_s: float = 0.0) -> ProcessEntry:
    """The processes.json entry of `proc`; a shifted start time stands for a reused pid."""
    return ProcessEntry(pid=proc.pid, create_time=psutil.Process(proc.pid).create_time() + shift_s)


def ended() -> ProcessEntry:
    """The entry of a process that has ended."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    made = psutil.Process(gone.pid).create_time()
    gone.wait()
    return ProcessEntry(pid=gone.pid, create_time=made)


def write_run(run_dir: Path, record: ProcessesRecord, status: str = "running") -> None:
    """A run folder as a driver killed with SIGKILL leaves it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / PROCESSES_FILE).write_text(record.model_dump_json())
    run = RunRecord(
        status=status,  # type: ignore[arg-type]
        scenario="town",
        mode="ray",
        run_id=record.run_id,
        pid=record.driver.pid if record.driver else 0,
        host=socket.gethostname(),
        started_at="",
        updated_at="",
        ticks=8,
    )
    (run_dir / RUN_FILE).write_text(run.model_dump_json())


def test_cleanup_ends_listed_processes_while_they_are_the_ones_listed(tmp_path, sleepers):
    ray_left, reused, _ = sleepers
    record = ProcessesRecord(
        run_id="r1",
        driver=ended(),
        ray=RayStarted(
            pids=[ray_left.pid, reused.pid], processes=[entry(ray_left), entry(reused, -50)]
        ),
    )
    write_run(tmp_path, record)
    res = CliRunner().invoke(app, ["cleanup", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert f"ended pid {ray_left.pid} " in res.output and "1 process(es) ended" in res.output
    assert ray_left.wait(timeout=10) is not None
    assert reused.poll() is None  # its pid is listed, its start time is not the one listed
    assert json.loads((tmp_path / RUN_FILE).read_text())["status"] == "interrupted"


def test_status_of_a_run_whose_driver_is_gone_is_not_running(tmp_path):
    write_run(tmp_path, ProcessesRecord(run_id="r1", driver=ended()))
    res = CliRunner().invoke(app, ["status", str(tmp_path)])
    assert res.exit_code == 0, res.output
    status = json.loads(res.output)
    assert status["status"] == "interrupted" and status["driver_running"] is False
    assert f"societas cleanup {tmp_path}" in status["error"]


def test_a_resume_keeps_earlier_processes_still_running_listed(tmp_path, sleepers):
    alive, other, _ = sleepers
    earlier = ProcessesRecord(
        run_id="first",
        driver=ended(),
        ray=RayStarted(processes=[entry(alive), ended(), entry(other, -50)]),
    )
    write_run(tmp_path, earlier, status="interrupted")
    record = RunRecord.model_validate_json((tmp_path / RUN_FILE).read_text())
    folder = RunFolder(tmp_path, record.model_copy(update={"run_id": "second"}))
    folder.record_processes({})
    now = json.loads((tmp_path / PROCESSES_FILE).read_text())
    assert now["run_id"] == "second" and now["driver"]["pid"] == psutil.Process().pid
    assert now["earlier"] == [{**entry(alive).model_dump(exclude_none=True), "run_id": "first"}]
    folder.record_processes({"pids": [other.pid]})  # Ray started: the earlier ones stay
    now = json.loads((tmp_path / PROCESSES_FILE).read_text())
    assert [e["pid"] for e in now["earlier"]] == [alive.pid]
    assert [e["pid"] for e in now["ray"]["processes"]] == [other.pid]

    ended_lines = cleanup_run(tmp_path, grace_s=5)
    assert sorted(int(line.split()[1]) for line in ended_lines) == sorted([alive.pid, other.pid])
    assert alive.wait(timeout=10) is not None and other.wait(timeout=10) is not None
