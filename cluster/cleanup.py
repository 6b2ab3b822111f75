"""Ending what a run left running: the processes `processes.json` lists (the driver, what Ray
started, and earlier invocations' processes still running), each only while it is the very
process listed (same start time, so a reused pid is never touched), and the processes that
carry the run's id in their environment (the CLI sets `SOCIETAS_RUN_ID` before it starts
Ray, so Ray's GCS, raylet, dashboard and every worker inherit it).

`societas cleanup RUN` calls this after a SIGKILL; the next run into the same folder does too.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from societas.cluster.observe.run_folder import PROCESSES_FILE, RUN_ENV, read_record

GRACE_S = 5.0
SAME_START_S = 1.0  # a listed process is the one running under its pid if started this close


class ProcessEntry(BaseModel):
    """One process a run started: its pid and start time (a reused pid has another)."""

    pid: int
    create_time: float | None = None
    run_id: str | None = Field(None, description="The invocation that started it, if earlier.")

    @classmethod
    def of(cls, pid: int, run_id: str | None = None) -> ProcessEntry | None:
        """The entry of a running process (None when it has ended)."""
        import psutil

        try:
            return cls(pid=pid, create_time=psutil.Process(pid).create_time(), run_id=run_id)
        except psutil.Error:
            return None

    def running(self) -> Any:
        """The psutil process when this very process still runs (not a zombie), else None."""
        import psutil

        if self.create_time is None:
            return None
        try:
            proc = psutil.Process(self.pid)
            if abs(proc.create_time() - self.create_time) > SAME_START_S:
                return None  # the pid was reused by another process
            return proc if proc.status() != psutil.STATUS_ZOMBIE else None
        except psutil.Error:
            return None


class RayStarted(BaseModel):
    """The local Ray node a run started: its session folder and processes."""

    model_config = ConfigDict(extra="allow")

    session_dir: str = ""
    pids: list[int] = Field(default_factory=list)
    processes: list[ProcessEntry] = Field(default_factory=list)


class ProcessesRecord(BaseModel):
    """`processes.json`: what a run's cleanup ends."""

    model_config = ConfigDict(extra="allow")

    run_id: str = ""
    host: str | None = None
    driver: ProcessEntry | None = None
    ray: RayStarted = Field(default_factory=RayStarted)
    earlier: list[ProcessEntry] = Field(
        default_factory=list, description="Earlier invocations' processes still running."
    )

    def ray_processes(self) -> list[ProcessEntry]:
        """The processes this invocation's Ray started, tagged with its run id."""
        return [e.model_copy(update={"run_id": self.run_id}) for e in self.ray.processes]

    def listed(self) -> list[ProcessEntry]:
        """Every process listed: the driver, its Ray's, earlier invocations' still running."""
        own = [self.driver] if self.driver is not None else []
        return own + self.ray.processes + self.earlier

    def run_ids(self) -> set[str]:
        """The run ids of this invocation and of the earlier ones listed."""
        return {i for i in (self.run_id, *(e.run_id for e in self.earlier)) if i}


def read_processes(run_dir: Path) -> ProcessesRecord:
    """processes.json (empty when missing or unreadable)."""
    try:
        return ProcessesRecord.model_validate_json((Path(run_dir) / PROCESSES_FILE).read_bytes())
    except (OSError, ValidationError):
        return ProcessesRecord()


def driver_alive(run_dir: Path) -> int | None:
    """The pid of the run's driver if that very process (same start time) still runs."""
    return live_driver(read_processes(run_dir))


def live_driver(record: ProcessesRecord) -> int | None:
    """The pid of the driver a processes record lists if that very process (same start time)
    still runs and is not this one."""
    driver = record.driver
    if driver is None or driver.pid == os.getpid():
        return None
    return driver.pid if driver.running() is not None else None


def _environ(proc: Any) -> bytes:
    """A process's environment as its raw NUL-separated block; a process that set its title
    (Ray's `ray::DashboardAgent`) may start it with NULs, which psutil reads as empty."""
    if sys.platform.startswith("linux"):
        return Path(f"/proc/{proc.pid}/environ").read_bytes()
    return b"\0".join(f"{k}={v}".encode() for k, v in proc.environ().items())


def run_processes(run_dir: Path) -> list[Any]:
    """Live processes of this run: those processes.json lists that are still the processes
    listed, and those carrying its run id; never this process or its parents."""
    import psutil

    record = read_processes(run_dir)
    mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    found: dict[int, Any] = {}
    if record.host in (None, socket.gethostname()):
        for entry in record.listed():
            proc = entry.running()
            if proc is not None and proc.pid not in mine:
                found[proc.pid] = proc
    tags = [f"{RUN_ENV}={run_id}".encode() for run_id in record.run_ids()]
    for proc in psutil.process_iter(["pid"]) if tags else ():
        if proc.pid in mine or proc.pid in found:
            continue
        try:
            block = b"\0" + _environ(proc) + b"\0"
        except (psutil.Error, OSError):
            continue
        if any(b"\0" + tag + b"\0" in block for tag in tags):
            found[proc.pid] = proc
    return list(found.values())


def cleanup_run(run_dir: Path, grace_s: float = GRACE_S) -> list[str]:
    """End every process of the run (TERM, then KILL after `grace_s`); mark a run.json that
    still says `running` as `interrupted`. Returns one line per process ended."""
    import psutil

    from societas.cluster.checkpoint import write_json_atomic
    from societas.cluster.observe.run_folder import RUN_FILE, now

    procs = run_processes(run_dir)
    lines = []
    for proc in procs:
        try:
            lines.append(f"pid {proc.pid} {proc.name()}")
            proc.terminate()
        except psutil.Error:
            continue
    _gone, alive = psutil.wait_procs(procs, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(alive, timeout=grace_s)
    rec = read_record(run_dir)
    if rec is not None and rec.get("status") == "running" and driver_alive(run_dir) is None:
        rec.update(status="interrupted", ended_at=now(), error="the driver process ended")
        write_json_atomic(Path(run_dir) / RUN_FILE, rec)
    return lines
