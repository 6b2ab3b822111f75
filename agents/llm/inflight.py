"""Model calls in flight and since when: what a progress line shows during a long tick, so a
slow model is seen working rather than hung. Calls of this process are noted as they are
sent; calls of groups in other processes (Ray actors) are reported by the run loop, which
asks the groups (`report_elsewhere`)."""

from __future__ import annotations

import itertools
import time

__all__ = ["begin", "end", "local", "report_elsewhere", "snapshot"]

_started: dict[int, float] = {}
_ids = itertools.count()
_elsewhere: tuple[int, float] = (0, 0.0)  # (calls, monotonic start of the oldest)


def begin() -> int:
    """Note a call sent now; returns its handle for `end`."""
    handle = next(_ids)
    _started[handle] = time.monotonic()
    return handle


def end(handle: int) -> None:
    """Note a call answered, failed or cancelled."""
    _started.pop(handle, None)


def report_elsewhere(calls: int, oldest_age_s: float) -> None:
    """Note the calls in flight in other processes (0: none), the oldest `oldest_age_s` old."""
    global _elsewhere
    _elsewhere = (calls, time.monotonic() - oldest_age_s) if calls > 0 else (0, 0.0)


def local() -> tuple[int, float]:
    """(calls in flight in this process, age in seconds of the oldest)."""
    starts = list(_started.values())
    if not starts:
        return 0, 0.0
    return len(starts), time.monotonic() - min(starts)


def snapshot() -> tuple[int, float]:
    """(calls in flight here and elsewhere, age in seconds of the oldest); safe from
    another thread."""
    n, age = local()
    far, since = _elsewhere
    if far:
        n, age = n + far, max(age, time.monotonic() - since)
    return n, age
