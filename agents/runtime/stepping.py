"""How a group's agents step within a tick: a sliding window of agents in flight.

Putting a whole group's tick in flight at once would keep every agent's coroutine, requests,
prompts and hits alive together, so a tick's transient objects (and the run's peak RAM) would
grow with the group. `step_agents` keeps at most `in_flight` agents stepping: each worker
takes the next agent, in id order, as soon as its last one finished, so memory and LLM calls
still coalesce across the agents in flight and no wave waits for its slowest agent. With
`in_flight` at least the group's size every agent is in flight at once. Memory ids are taken
in stepping order; with the rules policy a run's Parquet results are the same whatever the
window (a test compares 3 with 30), and reruns with the same value replay byte for byte.

`run_all` runs the workers (and any coroutines) as tasks without `asyncio.gather`'s
per-child bookkeeping (a done-callback per child run through the loop's ready queue): the
caller awaits the tasks in order, suspending only on one not yet done. A failure cancels the
tasks still running, waits for them, and raises the first failure in task order (gather
raises the first in time and leaves the others running): nothing of a failed tick keeps
writing behind the caller's back.
"""

from __future__ import annotations

import asyncio
import logging
from asyncio import get_running_loop as running_loop
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Item = TypeVar("Item")
log = logging.getLogger(__name__)

AGENTS_IN_FLIGHT = 256  # per group; `cluster.agents_in_flight` in a scenario


def checked_in_flight(value: Any, cluster: Mapping[str, Any] | None = None) -> int:
    """A checked `agents_in_flight`: `value`, else the scenario's `cluster:` section's, else
    the default; a clear error naming the field and the value for anything else."""
    if value is None:
        value = (cluster or {}).get("agents_in_flight")
    if value is None:
        return AGENTS_IN_FLIGHT
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"cluster.agents_in_flight must be an integer >= 1, got {value!r}")
    return value


async def step_agents(contexts: Sequence[Any], in_flight: int) -> None:
    """Step every context's agent once, at most `in_flight` at a time, in order."""
    await step_window(contexts, _step_agent, in_flight)


def _step_agent(ctx: Any) -> Awaitable[None]:
    """One agent's step in its context."""
    return ctx.agent.step(ctx)


async def step_window(
    items: Sequence[Item], step: Callable[[Item], Awaitable[None]], in_flight: int
) -> None:
    """Await `step(item)` for every item, at most `in_flight` at a time, started in order."""
    queue = iter(items)

    async def worker() -> None:
        for item in queue:
            await step(item)

    await run_all([worker() for _ in range(min(in_flight, len(items)))])


async def run_all(coros: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """Run the coroutines concurrently, a task each, and return their results in order.

    If one fails (or the caller is cancelled) the tasks still running are cancelled and
    awaited, then the first failure in task order is raised; other failures are logged."""
    loop, task = running_loop(), asyncio.Task
    tasks = [task(coro, loop=loop) for coro in coros]
    try:
        return [await each for each in tasks]
    except BaseException as failure:
        await _cancel_and_wait(tasks, failure)
        raise


async def _cancel_and_wait(tasks: list[asyncio.Task[Any]], raised: BaseException) -> None:
    """Cancel the tasks not done, wait until all are, and log failures besides `raised`."""
    running = [each for each in tasks if not each.done()]
    for each in running:
        each.cancel()
    if running:
        await asyncio.wait(running)
    for each in tasks:
        if each.cancelled():
            continue
        error = each.exception()  # retrieved: asyncio does not report it again
        if error is not None and error is not raised:
            log.error("a concurrent step failed too: %r", error, exc_info=error)
