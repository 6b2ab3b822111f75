"""Runs on Ray a user can trust, through the real `societas` CLI started as a subprocess:
SIGTERM and SIGKILL leave no process behind and `resume` finishes the run, and a run written
to an object-store URL resumes from it."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cli_processes import ROOT, societas, start, town, wait_for


def run_processes(run_dir: Path) -> list[int]:
    """Live processes carrying the run's id (the CLI, Ray's GCS, raylet, workers)."""
    import psutil

    run_id = json.loads((run_dir / "processes.json").read_text())["run_id"]
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("SOCIETAS_RUN_ID") == run_id:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def running(pids: list[int]) -> dict[int, float]:
    """Those of `pids` that run (not zombies), with their start times."""
    import psutil

    found = {}
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            if proc.status() != psutil.STATUS_ZOMBIE:
                found[pid] = proc.create_time()
        except psutil.Error:
            continue
    return found


def test_ray_run_sigterm_sigkill_cleanup_and_resume(tmp_path):
    """On Ray: SIGTERM checkpoints and stops the Ray it started;
    SIGKILL of a resumed run leaves Ray's agents running (they lack the run id in what psutil
    reads of their environment), `status` says the run is not running, and `societas cleanup`
    ends every process processes.json lists; a last resume ends like an uninterrupted run."""
    from societas.agents.runtime.results import read_table

    ticks = 16
    cfg = town(tmp_path, ticks=ticks, cluster={"checkpoint_every": 100})
    run_dir = tmp_path / "ray"
    log = tmp_path / "ray.log"
    proc = start("run", str(cfg), "--out", str(run_dir), "--groups", "2", log=log)
    try:
        wait_for(lambda: "progress tick=2/" in log.read_text(), 300, "tick 2 on Ray", log)
        assert len(run_processes(run_dir)) >= 3  # the CLI, Ray's GCS and raylet at least
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 130, log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "interrupted" and run["mode"] == "ray"
    assert run["last_checkpoint"] >= 2
    wait_for(lambda: not run_processes(run_dir), 30, "Ray to stop after SIGTERM")

    log2 = tmp_path / "resume.log"
    proc = start("resume", str(run_dir), log=log2)
    try:
        wait_for(lambda: "progress tick=" in log2.read_text(), 300, "the resumed run", log2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    left = running(json.loads((run_dir / "processes.json").read_text())["ray"]["pids"])
    assert left  # Ray's dashboard and runtime-env agents outlive the driver for a while
    status = json.loads(societas("status", str(run_dir)).stdout)
    assert status["status"] == "interrupted" and status["driver_running"] is False
    res = societas("cleanup", str(run_dir))
    assert res.returncode == 0, res.stderr
    assert run_processes(run_dir) == []
    still = {pid: t for pid, t in running(list(left)).items() if t == left[pid]}
    assert still == {}, res.stdout
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"

    res = societas("resume", str(run_dir), "--local", timeout=300)
    assert res.returncode == 0, res.stderr
    full = tmp_path / "full"
    res = societas("run", str(cfg), "--local", "--groups", "2", "--out", str(full), timeout=300)
    assert res.returncode == 0, res.stderr
    for table in ("agent_state", "needs"):
        assert read_table(full, table).to_pylist() == read_table(run_dir, table).to_pylist()


def test_out_to_object_store_url_and_resume_from_it(tmp_path):
    """`--out s3://...` against moto's S3 server on loopback (a real S3 protocol server; no
    cloud here): preflight checks the bucket, checkpoints and results land under the URL,
    a reused URL is refused, and `resume URL` continues from what the URL holds."""
    import pyarrow.parquet as pq
    from pyarrow import fs as pafs

    with moto_s3(tmp_path) as (s3, query, env):
        ticks = 48  # room to interrupt: 20 agents step a tick in ~20 ms
        cfg = town(tmp_path, ticks=ticks, cluster={"checkpoint_every": 100})

        missing = f"s3://no-such-bucket/run{query}"
        res = societas("run", str(cfg), "--local", "--out", missing, env=env, timeout=60)
        assert res.returncode == 2 and "--out" in res.stderr and "Traceback" not in res.stderr

        url = f"s3://runs/town{query}"
        log = tmp_path / "s3.log"
        proc = start("run", str(cfg), "--local", "--out", url, log=log, env=env)
        try:
            wait_for(lambda: "progress tick=2/" in log.read_text(), 120, "tick 2")
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=120) == 130, log.read_text()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        run = json.loads(s3.open_input_file("runs/town/run.json").read())
        assert run["status"] == "interrupted" and run["last_checkpoint"] >= 2
        res = societas("resume", url, env=env, timeout=300)
        assert res.returncode == 0, res.stderr
        run = json.loads(s3.open_input_file("runs/town/run.json").read())
        assert run["status"] == "completed" and run["last_checkpoint"] == ticks
        names = {i.path for i in s3.get_file_info(pafs.FileSelector("runs/town", recursive=True))}
        assert f"runs/town/checkpoints/tick={ticks}/manifest.json" in names
        assert "runs/town/config.json" in names
        rows = sum(
            pq.read_metadata(s3.open_input_file(n)).num_rows
            for n in names
            if n.endswith(".parquet") and "/results/agent_state/" in n
        )
        assert rows == 20 * ticks

        res = societas("run", str(cfg), "--local", "--out", url, env=env, timeout=60)
        assert res.returncode == 2 and "holds another run" in res.stderr
        res = societas("check", str(cfg), "--out", url, "--overwrite", env=env, timeout=60)
        assert res.returncode == 0, res.stderr


def test_seeds_into_an_object_store_url_land_under_it(tmp_path):
    """`--seeds` with `--out s3://bucket/prefix?query`: each seed's run lands under the URL
    (prefix/seed-N, the query kept), none in a local folder named after the URL."""
    with moto_s3(tmp_path) as (s3, query, env):
        cfg = town(tmp_path, ticks=6)
        res = societas(
            "run",
            str(cfg),
            "--local",
            "--seeds",
            "0,1",
            "--out",
            f"s3://runs/rep{query}",
            env=env,
            timeout=180,
        )
        assert res.returncode == 0, res.stderr
        for seed in (0, 1):
            run = json.loads(s3.open_input_file(f"runs/rep/seed-{seed}/run.json").read())
            assert run["status"] == "completed"
            assert (
                json.loads(s3.open_input_file(f"runs/rep/seed-{seed}/config.json").read())["seed"]
                == seed
            )
        assert not (ROOT / "s3:").exists()


def test_a_seed_or_arm_under_a_url_keeps_its_scheme_and_query():
    from societas.cluster.remote_out import child_out

    assert (
        child_out("s3://b/x?region=r&scheme=http", "seed-1")
        == "s3://b/x/seed-1?region=r&scheme=http"
    )
    assert child_out("s3://b/x/", "storm") == "s3://b/x/storm"
    assert child_out("runs/x", "storm") == str(Path("runs/x") / "storm")


@contextmanager
def moto_s3(tmp_path: Path) -> Iterator[tuple[Any, str, dict[str, str]]]:
    """moto's S3 server on loopback with a bucket `runs`: (its filesystem, the URL query that
    reaches it, the environment a CLI run needs)."""
    from moto.server import ThreadedMotoServer
    from pyarrow import fs as pafs

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        env = {
            **os.environ,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "SOCIETAS_STAGING_DIR": str(tmp_path / "staging"),
        }
        s3 = pafs.S3FileSystem(
            access_key="testing",
            secret_key="testing",
            endpoint_override=f"{host}:{port}",
            scheme="http",
            region="us-east-1",
            allow_bucket_creation=True,
        )
        s3.create_dir("runs")
        yield s3, f"?endpoint_override={host}:{port}&scheme=http&region=us-east-1", env
    finally:
        server.stop()
