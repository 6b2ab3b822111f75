"""Model calls in flight in this process and since when: what a progress line shows during
a long tick, so a slow model is seen working rather than hung."""

from __future__ import annotations

import itertools
import time

__all__ = ["begin", "end", "snapshot"]

_started: dict[int, float] = {}
_ids = itertools.count()


def begin() -> int:
    """Note a call sent now; returns its handle for `end`."""
    handle = next(_ids)
    _started[handle] = time.monotonic()
    return handle


def end(handle: int) -> None:
    """Note a call answered, failed or cancelled."""
    _started.pop(handle, None)


def snapshot() -> tuple[int, float]:
    """(calls in flight, age in seconds of the oldest); safe from another thread."""
    starts = list(_started.values())
    if not starts:
        return 0, 0.0
    return len(starts), time.monotonic() - min(starts)
