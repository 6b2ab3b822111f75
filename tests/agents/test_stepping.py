"""Agents in flight: a sliding window bounds how many of a group's agents step at once."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from societas.agents.runtime.stepping import AGENTS_IN_FLIGHT, checked_in_flight, step_agents
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
