"""Per-tick figures of a group: running totals turned into deltas, and the event-loop lag.

The gateway's accounting and the memory's counters only ever grow; a group reports what
changed since its previous report (each event counted once, however many ticks it runs).
`LoopLagMonitor` is a small ticker task on the group's loop: how late it wakes is how long
something held the loop (a blocking call stalls every agent of the group).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from societas.agents.llm.accounting import Accounting
from societas.agents.runtime.protocol import (
    LLM_LATENCY_BUCKETS,
    LOOP_LAG_BUCKETS,
    BucketCounts,
    LLMCalls,
)


class Deltas:
    """What each named running total gained since it was last read."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._money: dict[str, float] = {}

    def __call__(self, key: str, total: int) -> int:
        """total - the total seen at the previous call (the first call: total)."""
        delta = total - self._seen.get(key, 0)
        self._seen[key] = total
        return delta

    def rebase(self, prefix: str, totals: Mapping[str, int]) -> None:
        """Take `totals` as seen (a component was swapped, e.g. memory restored)."""
        for key in [k for k in self._seen if k.startswith(prefix)]:
            del self._seen[key]
        for key, value in totals.items():
            self._seen[prefix + key] = int(value)

    def unread(self, totals: Mapping[str, int]) -> dict[str, int]:
        """What each total gained since it was last read, without reading it (zeros left out)."""
        gained = {k: int(v) - self._seen.get(k, 0) for k, v in sorted(totals.items())}
        return {k: n for k, n in gained.items() if n}

    def owe(self, amounts: Mapping[str, int]) -> None:
        """Report `amounts` again with the next reads (carried over a checkpoint)."""
        for key, amount in amounts.items():
            self._seen[key] = self._seen.get(key, 0) - int(amount)

    def money(self, key: str, total: float) -> float:
        """As a call, for a running total in dollars."""
        delta = total - self._money.get(key, 0.0)
        self._money[key] = total
        return delta

    def memory(self, counters: Mapping[str, int]) -> dict[str, int]:
        """Deltas of every memory counter (keys as in `GroupMemory.counters`)."""
        return {k: self("mem." + k, int(v)) for k, v in counters.items()}


def task_deltas(
    deltas: Deltas, tasks: Mapping[str, Mapping[str, int]]
) -> dict[str, dict[str, int]]:
    """This tick's calls, tokens and json outcomes per task (tasks with no change left out)."""
    out = {}
    for task, counters in sorted(tasks.items()):
        got = {k: deltas(f"task.{task}\x00{k}", int(v)) for k, v in counters.items()}
        if any(got.values()):
            out[task] = got
    return out


def model_deltas(deltas: Deltas, accounting: Accounting) -> dict[str, dict[str, float]]:
    """This tick's requests, tokens, cache hits and cost per model (models with no change
    left out): what run.json's `llm` sums over ticks and resumes."""
    out: dict[str, dict[str, float]] = {}
    for model, usage in sorted(accounting.models.items()):
        key = f"model.{model}\x00"
        got: dict[str, float] = {
            name: deltas(key + name, getattr(usage, name))
            for name in ("requests", "prompt_tokens", "completion_tokens", "cache_hits")
        }
        got["cost_usd"] = deltas.money(key + "cost_usd", usage.cost_usd)
        if any(got.values()):
            out[model] = got
    return out


def llm_calls_delta(deltas: Deltas, accounting: Accounting) -> list[LLMCalls]:
    """This tick's calls per (model, endpoint), latencies as bucket counts; drains them."""
    latencies = accounting.drain_latencies()
    out = []
    for (model, endpoint), c in sorted(accounting.calls.items()):
        key = f"llm.{model}\x00{endpoint}."
        hist = BucketCounts.empty(LLM_LATENCY_BUCKETS)
        for seconds in latencies.get((model, endpoint), ()):
            hist.observe(seconds)
        calls = LLMCalls(
            model=model,
            endpoint=endpoint,
            requests=deltas(key + "requests", c.requests),
            tokens=deltas(key + "tokens", c.tokens),
            errors=deltas(key + "errors", c.errors),
            latency=hist,
        )
        if calls.requests or calls.errors:
            out.append(calls)
    return out


class LoopLagMonitor:
    """Wakes every `interval_s` and counts how late it woke (the loop's lag)."""

    def __init__(self, interval_s: float = 0.02) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be > 0, got {interval_s!r}")
        self.interval_s = interval_s
        self._counts = BucketCounts.empty(LOOP_LAG_BUCKETS)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start ticking on the running loop (idempotent)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(self.interval_s)
            self._counts.observe(max(0.0, loop.time() - asked - self.interval_s))

    def drain(self) -> BucketCounts:
        """Lag samples since the previous drain."""
        out, self._counts = self._counts, BucketCounts.empty(LOOP_LAG_BUCKETS)
        return out

    async def stop(self) -> None:
        """Stop ticking."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # our caller is being cancelled too: propagate it
