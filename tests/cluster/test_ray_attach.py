"""What a local Ray start records for cleanup, through public APIs only: the session folder
from `ray.init`'s context and the processes that appeared under the driver."""

from __future__ import annotations

from pathlib import Path

import psutil
import ray

from societas.cluster.ray.attach import attach, started_processes


def test_a_local_start_records_its_session_and_processes():
    assert not ray.is_initialized()
    assert attach(None, num_cpus=1) is True
    try:
        started = started_processes()
        assert Path(started["session_dir"]).is_dir()
        names = " ".join(" ".join(psutil.Process(pid).cmdline()) for pid in started["pids"])
        assert "gcs_server" in names and "raylet" in names
        assert attach(None) is False  # already running: nothing new started
    finally:
        ray.shutdown()
