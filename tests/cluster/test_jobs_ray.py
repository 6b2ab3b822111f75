"""`societas submit|status|logs|stop` against a real `ray start --head` on loopback with
token auth on: no token and a wrong token are clear errors, the right one runs a job."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from societas.cluster.cli import app
from societas.cluster.ray import jobs

TINY = """\
name: tiny
seed: 1
ticks: {ticks}
groups: 1
agents:
  count: 20
llm:
  provider: rules
"""


def _free_ports(count: int) -> list[int]:
    """Distinct free loopback ports: each socket stays bound until all are chosen."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    """A Ray head (own temp dir, own ports, token auth), stopped by its process group id."""
    tmp = tmp_path_factory.mktemp("rayhead")
    token = secrets.token_hex(16)
    dash, gcs, agent_http, agent_grpc, runtime_env, metrics = _free_ports(6)
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": token,
        "RAY_USAGE_STATS_ENABLED": "0",
        "HF_HUB_OFFLINE": "1",
        "SOCIETAS_METRICS_PORT": "0",
    }
    temp_dir = f"/tmp/ray-sj-{os.getpid()}"
    cmd = [
        str(Path(bindir) / "ray"),
        "start",
        "--head",
        "--block",
        f"--port={gcs}",
        "--dashboard-host=127.0.0.1",
        f"--dashboard-port={dash}",
        "--num-cpus=2",
        "--node-ip-address=127.0.0.1",
        f"--temp-dir={temp_dir}",
        "--disable-usage-stats",
        # Own agent ports: Ray's defaults (52365, ...) clash with any other Ray on the host.
        f"--dashboard-agent-listen-port={agent_http}",
        f"--dashboard-agent-grpc-port={agent_grpc}",
        f"--runtime-env-agent-port={runtime_env}",
        f"--metrics-export-port={metrics}",
    ]
    log = open(tmp / "head.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    address = f"http://127.0.0.1:{dash}"
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(address + "/api/version", timeout=2)
            break
        except urllib.error.HTTPError as err:
            if err.code == 401:  # up, and asking for a token
                break
        except OSError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("ray start --head did not come up: " + (tmp / "head.log").read_text())
        time.sleep(0.5)
    yield address, token, tmp
    os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    # Whatever of the head's process group outlived SIGTERM; none left is fine.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    log.close()


def test_read_token_precedence(tmp_path):
    f = tmp_path / "tok"
    f.write_text("from-file\n")
    assert jobs.read_token({"RAY_AUTH_TOKEN": "env", "RAY_AUTH_TOKEN_PATH": str(f)}) == "env"
    assert jobs.read_token({"RAY_AUTH_TOKEN_PATH": str(f)}) == "from-file"
    assert jobs.read_token({"RAY_AUTH_MODE": "disabled", "RAY_AUTH_TOKEN": "x"}) is None
    assert jobs.read_token({"RAY_AUTH_TOKEN_PATH": str(tmp_path / "none")}) is None
    assert jobs.auth_headers({"RAY_AUTH_TOKEN": "t"}) == {"Authorization": "Bearer t"}
    with pytest.raises(jobs.JobsError, match="dashboard URL"):
        jobs.client("127.0.0.1:8265")


def _forget_ray_token() -> None:
    """Ray's client caches the token it loaded once per process (an earlier test's token
    would be sent): make it read the environment again, as a fresh CLI process does."""
    from ray._raylet import AuthenticationTokenLoader

    AuthenticationTokenLoader.instance().reset_cache()


def test_missing_or_wrong_token_is_a_clear_error(head, tmp_path, monkeypatch):
    address, _token, _ = head
    runner = CliRunner()
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    # Ray's own client also reads ~/.ray/auth_token, which another head on this machine may
    # have written: a home without one makes "no token at all" true.
    monkeypatch.setenv("HOME", str(tmp_path))
    _forget_ray_token()
    out = runner.invoke(app, ["status", "nope", "--address", address])
    assert out.exit_code == 2 and "requires a token" in out.output
    monkeypatch.setenv("RAY_AUTH_TOKEN", "wrong")
    _forget_ray_token()
    out = runner.invoke(app, ["status", "nope", "--address", address])
    assert out.exit_code == 2 and "rejected" in out.output
    assert "wrong" not in out.output  # the token is never echoed


def test_submit_status_logs_stop_with_token(head, tmp_path, monkeypatch):
    address, token, _ = head
    monkeypatch.setenv("RAY_AUTH_TOKEN", token)
    runner = CliRunner()
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(TINY.format(ticks=3))
    run_dir = tmp_path / "run"
    out = runner.invoke(
        app,
        [
            "submit",
            str(cfg),
            "--address",
            address,
            "--out",
            str(run_dir),
            "--job-id",
            "tiny-ok",
            "--wait",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "tiny-ok: SUCCEEDED" in out.output
    status = json.loads(runner.invoke(app, ["status", "tiny-ok", "--address", address]).output)
    assert status["status"] == "SUCCEEDED"
    assert "societas.cluster.cli run tiny.yaml" in status["entrypoint"]
    logs = runner.invoke(app, ["logs", "tiny-ok", "--address", address]).output
    assert "60 agent-steps" in logs
    assert token not in logs
    run = json.loads((run_dir / "run.json").read_text())
    assert run["mode"] == "ray" and run["agent_steps"] == 60

    long_cfg = tmp_path / "long.yaml"
    long_cfg.write_text(TINY.format(ticks=100000))
    out = runner.invoke(
        app,
        [
            "submit",
            str(long_cfg),
            "--address",
            address,
            "--out",
            str(tmp_path / "long"),
            "--job-id",
            "tiny-stop",
        ],
    )
    assert out.exit_code == 0, out.output
    deadline = time.monotonic() + 60
    while jobs.status("tiny-stop", address)["status"] != "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    while "progress tick=" not in jobs.logs("tiny-stop", address):
        assert time.monotonic() < deadline + 60
        time.sleep(0.5)
    status = json.loads(runner.invoke(app, ["status", "tiny-stop", "--address", address]).output)
    assert int(status["progress"]["tick"].split("/")[0]) >= 1  # progress from the job's log
    assert {"sim", "steps_per_s", "llm_calls", "fallbacks"} <= set(status["progress"])
    out = runner.invoke(app, ["stop", "tiny-stop", "--address", address])
    assert out.exit_code == 0 and "stopping" in out.output
    while jobs.status("tiny-stop", address)["status"] not in ("STOPPED", "FAILED"):
        assert time.monotonic() < deadline + 120
        time.sleep(0.5)
    assert jobs.status("tiny-stop", address)["status"] == "STOPPED"
    # SIGTERM from `stop` reached the run, which wrote a final checkpoint and its record.
    run = json.loads((tmp_path / "long" / "run.json").read_text())
    assert run["status"] == "interrupted" and run["last_checkpoint"] >= 1


def test_submit_needs_a_named_results_location(tmp_path):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(TINY.format(ticks=3))
    runner = CliRunner()
    out = runner.invoke(app, ["submit", str(cfg)])
    assert out.exit_code == 2 and "--out" in out.output and "s3://" in out.output
    out = runner.invoke(app, ["submit", str(cfg), "--out", "runs/x"])
    assert out.exit_code == 2 and "absolute" in out.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY.format(ticks=0))
    out = runner.invoke(app, ["submit", str(bad), "--out", str(tmp_path / "r")])
    assert out.exit_code == 2 and "ticks" in out.output  # validated before any submission
