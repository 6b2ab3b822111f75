"""Peak proportional set size (PSS) of a process tree, sampled in a thread.

PSS splits each shared page among the processes mapping it, so the sum over the driver, the
Ray services (GCS, raylet, dashboard agents) and every Ray worker counts Ray's shared memory
(object store, shared libraries) once. Sampling reads /proc/PID/smaps_rollup (psutil's
memory_full_info), a few milliseconds per process; the default period is 0.5 s.
"""

from __future__ import annotations

import threading
from collections import defaultdict

import psutil


def kind_of(proc: psutil.Process) -> str:
    """A short name for what a process is (driver, raylet, gcs_server, a Ray worker...)."""
    try:
        name = proc.name()
        cmd = " ".join(proc.cmdline()[:3])
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return "gone"
    if proc.pid == psutil.Process().pid:
        return "driver"
    if "default_worker.py" in cmd or name.startswith("ray::"):
        return "ray_worker"
    for known in ("raylet", "gcs_server", "dashboard", "log_monitor", "runtime_env", "plasma"):
        if known in name or known in cmd:
            return known
    return name or "other"


class PssSampler:
    """Samples the summed PSS of this process and all its descendants until stopped."""

    def __init__(self, period_s: float = 0.5) -> None:
        self.period_s = period_s
        self.peak_bytes = 0
        self.peak_by_kind: dict[str, int] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pss-sampler", daemon=True)

    def sample(self) -> tuple[int, dict[str, int]]:
        """One reading: total PSS bytes and PSS per process kind."""
        root = psutil.Process()
        by_kind: dict[str, int] = defaultdict(int)
        for proc in [root, *root.children(recursive=True)]:
            try:
                by_kind[kind_of(proc)] += proc.memory_full_info().pss
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        return sum(by_kind.values()), dict(by_kind)

    def _run(self) -> None:
        while not self._stop.is_set():
            total, by_kind = self.sample()
            self.samples += 1
            if total > self.peak_bytes:
                self.peak_bytes, self.peak_by_kind = total, by_kind
            self._stop.wait(self.period_s)

    def __enter__(self) -> PssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
