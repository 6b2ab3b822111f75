"""Runs a user can trust, through the real `societas` CLI started as a subprocess: preflight
stops unreachable services early with one message, a reused --out is refused, Ctrl-C
checkpoints and `resume` ends identical to an uninterrupted run, an unreachable Ray address
times out, and a malformed-config corpus gives clear errors and no traceback."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import threading
import time

import pytest
from cli_processes import ROOT, closed_port, societas, start, town, tree_digest, wait_for

BAD_CONFIGS = sorted((ROOT / "tests" / "data" / "bad_configs").iterdir())


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
    finished = tree_digest(cut)  # resuming a finished run leaves it as it is
    res = societas("resume", str(cut), timeout=120)
    assert res.returncode == 0 and "nothing to resume" in res.stdout, res.stdout + res.stderr
    assert tree_digest(cut) == finished


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


def test_out_where_no_folder_can_be_made_fails_preflight_and_leaves_nothing(tmp_path):
    cfg = town(tmp_path, ticks=5)
    before = sorted(p.name for p in tmp_path.iterdir())
    res = societas("check", str(cfg), "--out", str(tmp_path / "new" / "run"))
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # the probe left nothing
    out = "/proc/societas-run"  # permission bits let root pass here; making a folder fails
    res = societas("check", str(cfg), "--out", out)
    assert res.returncode == 2 and f"--out {out}: cannot write in /proc" in res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    res = societas("run", str(cfg), "--local", "--out", out)
    assert res.returncode == 2 and "nothing was started" in res.stderr, res.stderr


def test_status_and_stop_of_a_missing_run_folder_name_it(tmp_path):
    for command in ("status", "stop"):
        res = societas(command, str(tmp_path / "gone"))
        assert res.returncode == 2 and f"{tmp_path / 'gone'}: no such run folder" in res.stderr
        assert "Traceback" not in res.stderr and "Ray" not in res.stderr
