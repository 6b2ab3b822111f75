"""Agents in flight: a sliding window bounds how many of a group's agents step at once."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from societas.agents.runtime.stepping import (
    AGENTS_IN_FLIGHT,
    checked_in_flight,
    run_all,
    step_agents,
    step_window,
)
from societas.cluster.cluster_config import ClusterConfig


class _Probe:
    """An agent whose step yields a few times and records how many are in flight."""

    def __init__(self, i: int, log: dict) -> None:
        self.i = i
        self.log = log

    async def step(self, ctx: object) -> None:
        log = self.log
        log["now"] += 1
        log["peak"] = max(log["peak"], log["now"])
        log["started"].append(self.i)
        for _ in range(self.i % 3 + 1):  # uneven steps: workers finish at different times
            await asyncio.sleep(0)
        log["now"] -= 1
        log["done"] += 1


@pytest.mark.parametrize(("agents", "in_flight"), [(50, 7), (50, 1), (5, 256), (0, 4)])
def test_at_most_in_flight_agents_step_at_once_all_once_in_order(agents, in_flight) -> None:
    log = {"now": 0, "peak": 0, "started": [], "done": 0}
    contexts = [SimpleNamespace(agent=_Probe(i, log)) for i in range(agents)]
    asyncio.run(step_agents(contexts, in_flight))
    assert log["done"] == agents and sorted(log["started"]) == list(range(agents))
    assert log["peak"] == min(in_flight, agents)
    assert log["started"][: min(in_flight, agents)] == list(range(min(in_flight, agents)))


def test_in_flight_value_checked_with_a_clear_error() -> None:
    assert checked_in_flight(None) == AGENTS_IN_FLIGHT == ClusterConfig().agents_in_flight
    assert checked_in_flight(3) == 3
    assert checked_in_flight(None, {"agents_in_flight": 5}) == 5
    assert checked_in_flight(7, {"agents_in_flight": 5}) == 7
    for bad in (0, -2, 2.5, "8", True):
        with pytest.raises(ValueError, match=r"cluster.agents_in_flight must be an integer >= 1"):
            checked_in_flight(bad)
        with pytest.raises(ValueError, match=r"cluster.agents_in_flight must be an integer >= 1"):
            checked_in_flight(None, {"agents_in_flight": bad})
    with pytest.raises(ValueError, match="agents_in_flight"):
        ClusterConfig(agents_in_flight=0)


def test_engine_takes_the_window_from_the_runtime_or_the_scenario(tmp_path) -> None:
    from societas.agents.runtime.engine import GroupEngine
    from tests.scenario_configs import scenario

    sc = scenario("town", cluster={"agents_in_flight": 3}, agents={"count": 10})
    assert GroupEngine(sc, 0, list(range(10)), tmp_path).in_flight == 3
    assert GroupEngine(sc, 0, list(range(10)), tmp_path, agents_in_flight=9).in_flight == 9
    plain = scenario("town", agents={"count": 10})
    assert GroupEngine(plain, 0, list(range(10)), tmp_path).in_flight == AGENTS_IN_FLIGHT


async def _after(turns: int, value: object, fail: bool = False) -> object:
    """`value` after `turns` loop turns (or a ValueError naming it)."""
    for _ in range(turns):
        await asyncio.sleep(0)
    if fail:
        raise ValueError(f"step {value} failed")
    return value


def test_run_all_returns_results_in_order_whatever_order_they_finish() -> None:
    turns = [5, 0, 3, 1, 4]
    got = asyncio.run(run_all([_after(n, f"r{i}") for i, n in enumerate(turns)]))
    assert got == ["r0", "r1", "r2", "r3", "r4"]
    assert asyncio.run(run_all([])) == []


def test_a_failure_cancels_the_rest_waits_for_them_and_raises_the_first_in_order(caplog) -> None:
    finished: list[int] = []
    cancelled: list[int] = []

    async def step(i: int, turns: int, fail: bool = False) -> int:
        try:
            await _after(turns, i, fail)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise
        finished.append(i)
        return i

    async def main() -> None:
        # 3 fails first in time, 1 first in order; 4 and 5 are still running then
        coros = [step(0, 2), step(1, 6, True), step(2, 1), step(3, 0, True), step(4, 50)]
        coros.append(step(5, 80))
        with pytest.raises(ValueError, match="step 1 failed"):
            await run_all(coros)
        assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    with caplog.at_level("ERROR"):
        asyncio.run(main())
    assert sorted(finished) == [0, 2] and sorted(cancelled) == [4, 5]
    assert "step 3 failed" in caplog.text and "step 1 failed" not in caplog.text


def test_cancelling_the_caller_cancels_every_task() -> None:
    cancelled: list[int] = []

    async def step(i: int) -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise

    async def main() -> None:
        outer = asyncio.ensure_future(run_all([step(i) for i in range(4)]))
        await asyncio.sleep(0.01)
        outer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await outer
        assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    asyncio.run(main())
    assert sorted(cancelled) == [0, 1, 2, 3]


def test_a_failed_step_stops_the_window_no_later_item_starts() -> None:
    started: list[int] = []

    async def step(i: int) -> None:
        started.append(i)
        await _after(i % 2 + 1, i, fail=i == 3)

    async def main() -> None:
        with pytest.raises(ValueError, match="step 3 failed"):
            await step_window(list(range(20)), step, 2)

    asyncio.run(main())
    assert started == sorted(started) and 3 in started and len(started) < 8
