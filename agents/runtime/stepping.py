"""How a group's agents step within a tick: a sliding window of agents in flight.

`asyncio.gather` over every agent of a group put the whole group's tick in flight at once:
every agent's coroutine, requests, prompts and hits were alive together, so a tick's
transient objects grew with the group (50,000 agents a group at 100,000 agents) and set the
run's peak RAM (a 2,000-agent group day: 111.7 MB of RSS with every agent in flight, 98.5 MB
with 250: benchmarks/RESULTS.md). `step_agents` keeps at most `in_flight` agents stepping:
each worker takes the next agent, in id order, as soon as its last one finished, so memory
and LLM calls still coalesce across the agents in flight and no wave waits for its slowest
agent. With `in_flight` at least the group's size it is the gather of before. Memory ids
are taken in stepping order; with the rules policy a run's Parquet results came out byte for
byte the same with 8, 256 or all agents in flight (600 agents, 48 ticks; a test compares 3
with 30), and reruns with the same value replay byte for byte.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

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
    queue = iter(contexts)

    async def worker() -> None:
        for ctx in queue:
            await ctx.agent.step(ctx)

    await asyncio.gather(*(worker() for _ in range(min(in_flight, len(contexts)))))
