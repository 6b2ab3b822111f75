"""The running event loop and task without a system call a call.

CPython 3.11's `asyncio.get_running_loop` (and `current_task()` without a loop, which calls
it) asks the kernel for the process id each time, to tell a forked child's copy of a loop
from the loop itself: ~0.25 µs, and a group asks ~4 times an agent-turn (queued adds, the
search batcher, the operation lock). The loop last seen is kept and used while it runs in
this thread (only one loop can); a fork forgets it. Python 3.12 dropped the system call:
there, these are asyncio's own functions.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

_get_ident = threading.get_ident
_last: asyncio.AbstractEventLoop | None = None


def _cached_running_loop() -> asyncio.AbstractEventLoop:
    """`asyncio.get_running_loop()` (RuntimeError outside a running loop, as it)."""
    loop = _last
    # BaseEventLoop sets `_thread_id` while it runs (uvloop has none: asyncio's path).
    if loop is not None and getattr(loop, "_thread_id", None) == _get_ident():
        return loop
    return _remember()


def _remember() -> asyncio.AbstractEventLoop:
    global _last
    _last = loop = asyncio.get_running_loop()
    return loop


def _forget() -> None:
    global _last
    _last = None


def _cached_current_task() -> asyncio.Task | None:
    """`asyncio.current_task()` of the running loop."""
    return asyncio.current_task(_cached_running_loop())


if sys.version_info >= (3, 12):  # no system call there
    running_loop = asyncio.get_running_loop
    current_task = asyncio.current_task
else:
    running_loop = _cached_running_loop
    current_task = _cached_current_task
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forget)
