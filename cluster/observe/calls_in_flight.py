"""The model calls in flight in groups of other processes (Ray actors), asked through the
groups' own call path once a second while a run goes, so the progress line shows a slow model
working under any backend. Groups in the driver's process are seen directly (`inflight`)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from societas.agents.llm import inflight

EVERY_S = 1.0  # how often the groups are asked
ANSWER_S = 5.0  # a group that does not answer within this long counts as none in flight


def merged(replies: Sequence[Any], me: int) -> tuple[int, float]:
    """(calls, oldest age in s) over the groups' replies, leaving out this process's own
    (already counted where they are sent) and groups that did not answer."""
    calls, oldest = 0, 0.0
    for reply in replies:
        if not isinstance(reply, dict) or not reply or reply.get("pid") == me:
            continue
        n = int(reply.get("calls", 0))
        if n > 0:
            calls += n
            oldest = max(oldest, float(reply.get("oldest_s", 0.0)))
    return calls, oldest


async def ask(handles: Sequence[Any]) -> tuple[int, float]:
    """The calls in flight in the groups' processes other than this one."""
    askers = [h.in_flight for h in handles if hasattr(h, "in_flight")]
    replies = await asyncio.gather(
        *(asyncio.wait_for(a(), ANSWER_S) for a in askers), return_exceptions=True
    )
    return merged(replies, os.getpid())


async def poll(handles: Sequence[Any], every_s: float = EVERY_S) -> None:
    """Until cancelled: every `every_s`, note the groups' calls in flight for the progress
    line (`inflight.report_elsewhere`); cleared when it ends."""
    try:
        while True:
            await asyncio.sleep(every_s)
            inflight.report_elsewhere(*await ask(handles))
    finally:
        inflight.report_elsewhere(0, 0.0)
