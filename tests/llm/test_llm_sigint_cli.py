"""Ctrl-C on a real-model run, through the `societas` CLI as a user starts it: SIGINT during a
tick on a slow scripted server ends the run within 15 s, says the checkpoint holds the last
finished tick, and `societas resume` ends with an uninterrupted run's results."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

from societas.agents.runtime.results import read_table
from tests.cluster.cli_processes import closed_port, societas, start, town, wait_for

from .threaded_server import threaded_emulator

TICKS = 16
STOPPED = re.compile(r"interrupted after (\d+) ticks \(checkpoint tick=(\d+), the last finished")


def config(tmp_path: Path, url: str) -> Path:
    ep = {"base_url": url, "model": "emulated", "send_task_hints": True}
    return town(
        tmp_path,
        ticks=TICKS,
        agents={"count": 6},
        network={"k": 2},
        interventions=[],
        cluster={"checkpoint_every": 100},  # no cadence checkpoint before the stop
        llm={
            "provider": "openai",
            "endpoints": [ep],
            "timeout_s": 30,
            "fallback_stop": {"enabled": False},
        },
    )


def test_ctrl_c_on_a_slow_model_checkpoints_the_last_finished_tick(tmp_path) -> None:
    full, cut, log = tmp_path / "full", tmp_path / "cut", tmp_path / "cut.log"
    port = closed_port()  # one address for every server: the resumed run's config names it
    with threaded_emulator(base_latency_s=0.001, port=port) as (_emu, url):
        res = societas("run", str(config(tmp_path, url)), "--local", "--out", str(full))
        assert res.returncode == 0, res.stderr
    with threaded_emulator(base_latency_s=0.5, port=port) as (emu, url):  # ticks of seconds
        proc = start("run", str(config(tmp_path, url)), "--local", "--out", str(cut), log=log)
        try:
            wait_for(lambda: "progress tick=2/" in log.read_text(), 120, "tick 2", log)
            emu.config = emu.config.model_copy(update={"base_latency_s": 5.0})
            time.sleep(1.5)  # a tick is waiting on the slow model now
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=60)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    assert code == 130, text
    assert took < 15.0, (took, text[-2000:])
    assert "Traceback" not in text
    found = STOPPED.search(text)
    assert found is not None, text[-2000:]
    done, checkpoint = int(found[1]), int(found[2])
    assert done == checkpoint >= 2
    run = json.loads((cut / "run.json").read_text())
    assert run["status"] == "interrupted" and run["last_checkpoint"] == checkpoint
    with threaded_emulator(base_latency_s=0.001, port=port):
        res = societas("resume", str(cut), timeout=300)
    assert res.returncode == 0, res.stderr
    for table in ("agent_state", "needs", "plans", "thoughts", "importance"):
        assert read_table(full, table).to_pylist() == read_table(cut, table).to_pylist(), table
