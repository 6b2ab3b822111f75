"""Starting or attaching Ray without ever hanging: a bounded probe of the address first, then
`ray.init` in a helper thread that the main thread waits for in short steps (so Ctrl-C and
the timeout both work while Ray's C++ client retries), and a record of what a local start
launched (session folder, process ids) for `societas cleanup`.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

DEFAULT_ATTACH_TIMEOUT_S = 30.0
# HTTP/2 client preface + an empty SETTINGS frame: a gRPC server (Ray's GCS) answers with its
# own SETTINGS frame at once; a closed port refuses, a silent one stays silent.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


_STARTED: dict[str, Any] = {}  # what the last local `ray.init` of this driver started


class RayAttachError(RuntimeError):
    """The Ray address cannot be reached (the message names it and what to do)."""


def split_address(address: str) -> tuple[str, int]:
    """host and port of a Ray GCS address (`host:port`, `ray://` is not a GCS address)."""
    text = address.strip()
    if "://" in text:
        raise RayAttachError(
            f"--address {address!r}: give the head's GCS address host:port (e.g. "
            "10.0.0.5:6379); http:// dashboard URLs are for `societas submit`"
        )
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayAttachError(f"--address {address!r}: expected host:port, e.g. 10.0.0.5:6379")
    return host.strip("[]"), int(port)


def probe_address(
    address: str, timeout_s: float = 5.0, stop: Callable[[], bool] | None = None
) -> None:
    """Raise RayAttachError unless a gRPC server answers at `address` within `timeout_s`;
    KeyboardInterrupt as soon as `stop()` turns true (Ctrl-C under a stop handler)."""
    if address == "auto":
        return
    host, port = split_address(address)
    deadline = time.monotonic() + timeout_s
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(_H2_PREFACE)
            head = _recv_until(sock, 9, deadline, stop)
    except TimeoutError:
        raise RayAttachError(
            f"--address {address}: no answer within {timeout_s:g} s; check that the Ray "
            "head runs there (`ray status` on it) and that the port is open"
        ) from None
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise RayAttachError(
            f"--address {address}: cannot connect ({reason}); start the head with "
            "`ray start --head` or fix the address"
        ) from None
    if len(head) < 9 or head[3] != 0x04:
        raise RayAttachError(
            f"--address {address}: something answers there, but not a Ray head (GCS port, "
            "default 6379)"
        )


def _recv_until(
    sock: socket.socket, size: int, deadline: float, stop: Callable[[], bool] | None
) -> bytes:
    """Up to `size` bytes, waiting in short steps so a stop request is seen within 0.2 s."""
    while True:
        if stop is not None and stop():
            raise KeyboardInterrupt
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(min(0.2, max(0.01, left)))
        try:
            return sock.recv(size)
        except TimeoutError:
            continue


def attach(
    address: str | None,
    timeout_s: float = DEFAULT_ATTACH_TIMEOUT_S,
    num_cpus: int | None = None,
    stop: Callable[[], bool] | None = None,
    **kwargs: Any,
) -> bool:
    """Start local Ray or attach to `address` within `timeout_s`; True if this call started
    Ray (then the caller shuts it down). Raises RayAttachError, or KeyboardInterrupt (Ctrl-C,
    or `stop()` turning true while waiting on the head)."""
    import ray

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    address = address or os.environ.get("RAY_ADDRESS")  # set inside a Ray job
    if address:
        probe_address(address, min(timeout_s, 10.0), stop)
        init_kwargs: dict[str, Any] = {"address": address, "log_to_driver": True, **kwargs}
    else:
        # A local start runs in this (main) thread: Ray ties its GCS and raylet to the life
        # of the starting *thread* (PR_SET_PDEATHSIG), so a helper thread would kill them.
        before = _children()
        context = ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=True, **kwargs)
        info: dict[str, Any] = getattr(context, "address_info", None) or {}  # a RayContext's
        _STARTED.clear()
        _STARTED.update(
            session_dir=str(info.get("session_dir") or ""),
            pids=sorted(_children() - before),
        )
        return True
    _STARTED.clear()
    box: dict[str, Any] = {}

    def init() -> None:
        try:
            ray.init(**init_kwargs)
            box["ok"] = True
        except BaseException as err:  # handed to the main thread below
            box["error"] = err

    worker = threading.Thread(target=init, name="societas-ray-init", daemon=True)
    deadline = time.monotonic() + timeout_s
    worker.start()
    while worker.is_alive() and time.monotonic() < deadline:
        worker.join(0.2)  # short waits: Ctrl-C reaches the main thread in between
        if stop is not None and stop():
            raise KeyboardInterrupt
    if worker.is_alive():
        where = f"the Ray head at {address}"
        raise RayAttachError(
            f"{where} did not answer within {timeout_s:g} s (cluster.attach_timeout_s / "
            "--attach-timeout); check `ray status` on the head"
        )
    if "error" in box:
        err = box["error"]
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise RayAttachError(f"Ray at {address}: {first}") from None
    return False


def _children() -> set[int]:
    """Process ids of every descendant of this process."""
    import psutil

    try:
        return {p.pid for p in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return set()


def started_processes() -> dict[str, Any]:
    """Session folder and process ids of the Ray node this driver started (for cleanup):
    the session folder from `ray.init`'s context, the processes that appeared under this
    driver while it started; empty when this driver attached to a running cluster."""
    return (
        {"session_dir": _STARTED["session_dir"], "pids": list(_STARTED["pids"])} if _STARTED else {}
    )
