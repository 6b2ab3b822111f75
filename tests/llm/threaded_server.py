"""A scripted model server on loopback in a thread of its own: for runs whose driver blocks
its thread (the Ray backend runs its own event loop), reachable from Ray's worker processes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from societas.testing.emulator import Emulator, EmulatorConfig, serve


@contextmanager
def threaded_emulator(**fields: Any) -> Iterator[tuple[Emulator, str]]:
    """(emulator, base URL) of an emulator serving from a daemon thread until the block ends;
    `emu.config` may be replaced from any thread (it is read per request)."""
    found: dict[str, Any] = {}
    ready, done = threading.Event(), threading.Event()

    async def main() -> None:
        async with serve(EmulatorConfig(**fields)) as (emu, url):
            found.update(emu=emu, url=url)
            ready.set()
            await asyncio.to_thread(done.wait)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(30):
        raise RuntimeError("the scripted server did not start")
    try:
        yield found["emu"], found["url"]
    finally:
        done.set()
        thread.join(10)
