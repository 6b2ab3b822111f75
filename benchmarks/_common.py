"""Shared bits of the benchmarks: machine description, RSS, percentiles, JSON output."""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def peak_rss_mb() -> float:
    """Peak resident set of this process (Linux ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def emit(result: dict[str, Any], json_path: str | None) -> None:
    """Print the JSON and write it to `json_path` if given."""
    text = json.dumps(result, indent=2)
    print(text)
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(text + "\n")


class CollectorClock:
    """Seconds the cyclic garbage collector ran from `start()` on (timed by `gc.callbacks`),
    and its longest single pass: a pause of the whole process, event loop included."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.longest = 0.0
        self.passes = 0
        self._began = 0.0

    def start(self) -> None:
        import gc

        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
            return
        spent = time.perf_counter() - self._began
        self.seconds += spent
        self.longest = max(self.longest, spent)
        self.passes += 1

    def figures(self) -> dict[str, float]:
        """`gc_s`, `gc_longest_ms`, `gc_passes` for a benchmark's JSON."""
        return {
            "gc_s": round(self.seconds, 3),
            "gc_longest_ms": round(self.longest * 1e3, 1),
            "gc_passes": self.passes,
        }
