"""Runs a user can trust, through the real `societas` CLI started as a subprocess: preflight
stops unreachable services early with one message, a reused --out is refused, Ctrl-C
checkpoints and `resume` ends identical to an uninterrupted run, an unreachable Ray address
times out, and a malformed-config corpus gives clear errors and no traceback."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SOCIETAS = [sys.executable, "-m", "societas.cluster.cli"]
BAD_CONFIGS = sorted((ROOT / "tests" / "data" / "bad_configs").iterdir())


def societas(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    """Run the CLI to its end; output as text."""
    return subprocess.run(
        [*SOCIETAS, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        **kw,
    )


def start(*args: str, log: Path) -> subprocess.Popen:
    """Start the CLI in the background (its own process group), output to `log`."""
    fh = log.open("w")
    return subprocess.Popen(
        [*SOCIETAS, *args], stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True
    )


def wait_for(predicate, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            tail = log.read_text()[-3000:] if log is not None else ""
            raise AssertionError(f"timed out waiting for {what}\n{tail}")
        time.sleep(0.2)


def closed_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def town(tmp_path: Path, name: str = "town.yaml", **over) -> Path:
    """configs/town.yaml, small, with overrides merged in."""
    data = yaml.safe_load((ROOT / "configs" / "town.yaml").read_text())
    data.update({"ticks": 8, "agents": {**data["agents"], "count": 20}})
    for key, value in over.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_unreachable_llm_and_qdrant_fail_preflight_fast(tmp_path):
    port = closed_port()
    llm_url = f"http://127.0.0.1:{port}/v1"
    cfg = town(
        tmp_path,
        "llm.yaml",
        llm={"provider": "openai", "endpoints": [{"base_url": llm_url, "model": "m"}]},
    )
    t0 = time.monotonic()
    res = societas("run", str(cfg), "--local", "--out", str(tmp_path / "a"), timeout=60)
    assert time.monotonic() - t0 < 15
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    lines = [ln for ln in res.stderr.splitlines() if llm_url in ln]
    assert len(lines) == 1 and "llm.endpoints.0.base_url" in lines[0], res.stderr
    assert not (tmp_path / "a").exists()  # nothing was started

    qdrant_url = f"http://127.0.0.1:{port}"
    store = {"vector_store": {"backend": "qdrant", "url": qdrant_url}}
    cfg = town(tmp_path, "qdrant.yaml", memory=store)
    t0 = time.monotonic()
    res = societas("run", str(cfg), "--local", "--out", str(tmp_path / "b"), timeout=60)
    assert time.monotonic() - t0 < 15
    assert res.returncode == 2 and "Traceback" not in res.stderr + res.stdout
    lines = [ln for ln in res.stderr.splitlines() if qdrant_url in ln]
    assert len(lines) == 1 and "memory.vector_store.url" in lines[0], res.stderr


def test_unreachable_ray_address_and_ctrl_c_while_attaching(tmp_path):
    cfg = town(tmp_path)
    t0 = time.monotonic()
    res = societas("run", str(cfg), "--address", "127.0.0.1:1", "--out", str(tmp_path / "a"))
    assert time.monotonic() - t0 < 45
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "--address 127.0.0.1:1" in res.stderr and "cannot connect" in res.stderr

    # A head that accepts connections and never answers: Ctrl-C while waiting on it.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(silent.accept()[0])
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    address = f"127.0.0.1:{silent.getsockname()[1]}"
    log = tmp_path / "attach.log"
    # A long attach timeout: the Ctrl-C, not a timeout, must end the wait, however loaded.
    args = ("--address", address, "--attach-timeout", "120", "--out", str(tmp_path / "b"))
    proc = start("run", str(cfg), *args, log=log)
    try:
        wait_for(lambda: held, 30, "the CLI to connect")
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=45)
        assert time.monotonic() - t0 < 45
    finally:
        stop.set()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        silent.close()
    out = log.read_text()
    assert code == 130 and "interrupted" in out and "Traceback" not in out


@pytest.mark.parametrize("how", ["blocked", "ignored"])
def test_ctrl_c_works_when_the_parent_blocked_sigint(tmp_path, how):
    """A signal mask and an ignored disposition survive exec: a CLI started by a process that
    had SIGINT blocked or ignored (a test process that ran Ray did) ignored Ctrl-C and sat in
    its Ray probe; it takes SIGINT back."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(silent.accept()[0]), daemon=True).start()
    address = f"127.0.0.1:{silent.getsockname()[1]}"
    log = tmp_path / "blocked.log"
    args = ("--address", address, "--attach-timeout", "120", "--out", str(tmp_path / "c"))
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.getsignal(signal.SIGINT)
    if how == "ignored":
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc = start("run", str(town(tmp_path)), *args, log=log)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        signal.signal(signal.SIGINT, handler)
    try:
        wait_for(lambda: held, 30, "the CLI to connect")
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=45)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        silent.close()
    assert code == 130 and "interrupted" in log.read_text()


def test_reused_out_is_refused_and_left_unchanged(tmp_path):
    cfg = town(tmp_path, ticks=5)
    out = tmp_path / "run"
    res = societas("run", str(cfg), "--local", "--out", str(out))
    assert res.returncode == 0, res.stderr
    before = tree_digest(out)
    res = societas("run", str(cfg), "--local", "--out", str(out))
    assert res.returncode == 2 and "holds another run" in res.stderr
    assert "--overwrite" in res.stderr and "Traceback" not in res.stderr
    assert tree_digest(out) == before


def test_societas_stop_run_folder_checkpoints(tmp_path):
    cfg = town(tmp_path, ticks=5000)
    run_dir = tmp_path / "run"
    log = tmp_path / "run.log"
    proc = start("run", str(cfg), "--local", "--out", str(run_dir), log=log)
    try:
        wait_for(lambda: "progress tick=2/" in log.read_text(), 120, "tick 2", log)
        status = json.loads(societas("status", str(run_dir)).stdout)
        assert status["status"] == "running" and status["driver_running"]
        # the run goes on meanwhile: any simulated time of the run, in its display form
        assert re.fullmatch(r"day \d+ \d\d:\d\d", status["progress"]["sim_time"])
        assert {"agent_steps_per_s", "llm_requests", "fallbacks"} <= set(status["progress"])
        res = societas("stop", str(run_dir), timeout=180)
        assert res.returncode == 0 and "interrupted" in res.stdout, res.stdout + res.stderr
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "interrupted" and run["error"] == "stopped by SIGTERM"
    assert (run_dir / "checkpoints" / f"tick={run['last_checkpoint']}" / "manifest.json").is_file()
    assert societas("stop", str(run_dir)).stdout.endswith("not running\n")


def test_sigint_checkpoints_and_resume_matches_uninterrupted(tmp_path):
    from societas.agents.runtime.results import read_table

    ticks = 24
    cfg = town(tmp_path, ticks=ticks, cluster={"checkpoint_every": 100})
    full = tmp_path / "full"
    res = societas("run", str(cfg), "--local", "--out", str(full), timeout=300)
    assert res.returncode == 0, res.stderr
    cut = tmp_path / "cut"
    log = tmp_path / "cut.log"
    proc = start("run", str(cfg), "--local", "--out", str(cut), log=log)
    try:
        wait_for(lambda: "progress tick=3/" in log.read_text(), 120, "tick 3")
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    assert code == 130, text
    assert "Traceback" not in text and f"societas resume {cut}" in text
    run = json.loads((cut / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert 3 <= run["last_checkpoint"] < ticks  # the final checkpoint, off the cadence
    config = json.loads((cut / "config.json").read_text())
    assert config["ticks"] == ticks and config["versions"]["societas"]
    assert (cut / "checkpoints" / f"tick={run['last_checkpoint']}" / "manifest.json").is_file()

    res = societas("resume", str(cut), timeout=300)
    assert res.returncode == 0, res.stderr
    assert json.loads((cut / "run.json").read_text())["status"] == "completed"
    for table in ("agent_state", "needs"):
        a = read_table(full, table).to_pylist()
        b = read_table(cut, table).to_pylist()
        assert len(a) == 20 * ticks and a == b, table


def test_malformed_config_corpus_gives_clear_errors(tmp_path):
    assert len(BAD_CONFIGS) >= 30
    res = societas("check", *map(str, BAD_CONFIGS), "--skip-service-checks", timeout=120)
    out = res.stdout + res.stderr
    assert res.returncode == 2
    assert "Traceback" not in out and "sk-secret-123" not in out
    blocks = [b for b in res.stderr.split("error: ") if b.strip()]
    assert f"{len(BAD_CONFIGS)} of {len(BAD_CONFIGS)} configs have problems" in blocks[-1]
    named = {p.name for p in BAD_CONFIGS if any(p.name in b for b in blocks)}
    assert named == {p.name for p in BAD_CONFIGS}
    for block in blocks[:-1]:  # each names a field path and says what is wrong
        assert "invalid field" in block and ":" in block.splitlines()[1], block


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


def test_ray_run_sigterm_sigkill_cleanup_and_resume(tmp_path):
    """On Ray: SIGTERM checkpoints and stops the Ray it started;
    SIGKILL of a resumed run plus `societas cleanup` leaves nothing; a last resume ends like
    an uninterrupted run."""
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
    res = societas("cleanup", str(run_dir))
    assert res.returncode == 0, res.stderr
    assert run_processes(run_dir) == []
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
        query = f"?endpoint_override={host}:{port}&scheme=http&region=us-east-1"
        ticks = 48  # room to interrupt: 20 agents step a tick in ~20 ms
        cfg = town(tmp_path, ticks=ticks, cluster={"checkpoint_every": 100})

        missing = f"s3://no-such-bucket/run{query}"
        res = societas("run", str(cfg), "--local", "--out", missing, env=env, timeout=60)
        assert res.returncode == 2 and "--out" in res.stderr and "Traceback" not in res.stderr

        url = f"s3://runs/town{query}"
        log = tmp_path / "s3.log"
        fh = log.open("w")
        proc = subprocess.Popen(
            [*SOCIETAS, "run", str(cfg), "--local", "--out", url],
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
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
    finally:
        server.stop()
