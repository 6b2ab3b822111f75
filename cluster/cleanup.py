"""Ending what a run left running: the processes that carry its run id in their environment
(the CLI sets `SOCIETAS_RUN_ID` before it starts Ray, so Ray's GCS, raylet, dashboard and
every worker inherit it) and the driver recorded in `processes.json`.

`societas cleanup RUN` calls this after a SIGKILL; the next run into the same folder does too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from societas.cluster.observe.run_folder import PROCESSES_FILE, RUN_ENV, read_record

GRACE_S = 5.0


def _record(run_dir: Path) -> dict[str, Any]:
    """processes.json as a dict ({} when missing or unreadable)."""
    try:
        data = json.loads((Path(run_dir) / PROCESSES_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def driver_alive(run_dir: Path) -> int | None:
    """The pid of the run's driver if that very process (same start time) still runs."""
    import psutil

    driver = _record(run_dir).get("driver") or {}
    pid, created = driver.get("pid"), driver.get("create_time")
    if not isinstance(pid, int) or pid == os.getpid():
        return None
    try:
        proc = psutil.Process(pid)
        if created is not None and abs(proc.create_time() - float(created)) > 1.0:
            return None  # the pid was reused by another process
        return pid if proc.status() != psutil.STATUS_ZOMBIE else None
    except psutil.Error:
        return None


def run_processes(run_dir: Path) -> list[Any]:
    """Live processes of this run (by inherited run id), never this process or its parents."""
    import psutil

    run_id = _record(run_dir).get("run_id")
    if not run_id:
        return []
    mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    found = []
    for proc in psutil.process_iter(["pid"]):
        if proc.pid in mine:
            continue
        try:
            if proc.environ().get(RUN_ENV) == run_id:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


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
