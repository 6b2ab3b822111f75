"""The token budget through the real CLI: `societas run --budget-tokens N` stops with a
checkpoint and a clear message, `societas resume RUN --budget-tokens M` continues to the
same results as an uninterrupted run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXIT_INTERRUPTED = 130


def societas(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "societas.cluster.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)


def test_budget_stop_then_resume_matches_uninterrupted(tmp_path) -> None:
    from societas.agents.runtime.results import read_table

    data = yaml.safe_load((ROOT / "configs" / "town.yaml").read_text())
    data.update(ticks=6, interventions=[], cluster={"checkpoint_every": 100})
    data["agents"] = {**data["agents"], "count": 10}
    cfg = tmp_path / "town.yaml"
    cfg.write_text(yaml.safe_dump(data))
    full, cut = tmp_path / "full", tmp_path / "cut"
    res = societas("run", str(cfg), "--local", "--out", str(full))
    assert res.returncode == 0, res.stderr
    tokens = int(json.loads((full / "run.json").read_text())["llm_tokens"])
    assert tokens > 0

    res = societas(
        "run", str(cfg), "--local", "--out", str(cut), "--budget-tokens", str(tokens // 2)
    )
    text = res.stdout + res.stderr
    assert res.returncode == EXIT_INTERRUPTED, text
    assert "token budget" in text and f"societas resume {cut}" in text and "Traceback" not in text
    run = json.loads((cut / "run.json").read_text())
    assert run["status"] == "interrupted" and 0 < run["last_checkpoint"] < 6

    res = societas("resume", str(cut), "--budget-tokens", str(tokens * 10))
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((cut / "run.json").read_text())["status"] == "completed"
    for table in ("agent_state", "needs", "llm"):
        a = read_table(full, table).to_pylist()
        b = read_table(cut, table).to_pylist()
        assert a == b, table


def test_a_server_answering_garbage_stops_the_cli_run_loudly(tmp_path) -> None:
    from societas.testing.local_server import free_port

    port = free_port()
    cmd = [sys.executable, "-m", "societas.cluster.cli", "llm-emulator", "--port", str(port)]
    emu = subprocess.Popen(
        [*cmd, "--rate-garbage", "1", "--latency-ms", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_http(f"http://127.0.0.1:{port}/v1/models")
        data = yaml.safe_load((ROOT / "configs" / "town.yaml").read_text())
        data.update(ticks=6, interventions=[])
        data["agents"] = {**data["agents"], "count": 6}
        data["network"] = {**data["network"], "k": 2}
        url = f"http://127.0.0.1:{port}/v1"
        data["llm"] = {
            "endpoints": [{"base_url": url, "model": "emulated", "name": "garbage-server"}],
            "json_reasks": 0,
            "fallback_stop": {"min_calls": 3},
        }
        cfg = tmp_path / "town.yaml"
        cfg.write_text(yaml.safe_dump(data))
        out = tmp_path / "run"
        res = societas("run", str(cfg), "--local", "--out", str(out))
    finally:
        emu.terminate()
        emu.wait(timeout=10)
    text = res.stdout + res.stderr
    assert res.returncode == EXIT_INTERRUPTED, text
    assert "Traceback" not in text
    assert "garbage-server" in text and "I'm sorry, but I can't help with that" in text
    assert "fell back" in text and "task '" in text and f"societas resume {out}" in text
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "interrupted" and run["last_checkpoint"] is not None
    assert "garbage-server" in run["error"]


def _wait_http(url: str, timeout_s: float = 30.0) -> None:
    import time
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
