"""Ctrl-C and SIGTERM during a run: the first one asks the run to stop after the current tick
(it writes a final checkpoint, marks run.json `interrupted` and stops what it started; a slow
model tick is cut short and the last finished tick checkpointed); a second Ctrl-C aborts at
once."""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import Any

from societas.cluster.loop.run import STOP_GRACE_S


class StopFlag:
    """A stop request the tick loop polls; installed as the SIGINT/SIGTERM handler."""

    def __init__(self) -> None:
        self.requested = False
        self.signal_name: str | None = None
        self._previous: dict[int, Any] = {}

    def __call__(self) -> bool:
        """Whether a stop was requested."""
        return self.requested

    def request(self, reason: str = "stop") -> None:
        """Ask the run to stop after the current tick."""
        self.requested = True
        self.signal_name = self.signal_name or reason

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        """First signal: ask to stop; a second Ctrl-C: abort now."""
        name = signal.Signals(signum).name
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if not self.requested:
            print(
                f"\n{name}: stopping after the current tick and writing a checkpoint; a tick "
                f"still running in {STOP_GRACE_S:.0f} s is cut short, its LLM calls cancelled, "
                "and the last finished tick is checkpointed (Ctrl-C again to abort at once)",
                file=sys.stderr,
                flush=True,
            )
        self.request(name)

    def install(self) -> StopFlag:
        """Take over SIGINT and SIGTERM (main thread only; elsewhere a no-op)."""
        import threading

        if threading.current_thread() is not threading.main_thread():
            return self
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous.setdefault(sig, signal.getsignal(sig))
            signal.signal(sig, self._handle)
        return self

    def restore(self) -> None:
        """Give the signals back to whoever had them."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
