"""A group's hot state and its KV memory hold one object per structured value after a tick."""

from __future__ import annotations

from societas.agents.runtime.engine import GroupEngine
from societas.agents.runtime.hot_state import write_back
from societas.agents.scenario import load_scenario
from tests.scenario_configs import scenario


async def _engine(tmp_path) -> GroupEngine:
    sc = load_scenario(scenario("town", agents={"count": 12}, ticks=8))
    engine = GroupEngine(sc, 0, list(range(12)), tmp_path)
    await engine.setup()
    return engine


async def test_plan_is_one_object_in_hot_state_and_kv(tmp_path) -> None:
    engine = await _engine(tmp_path)
    try:
        for tick in range(3):
            await engine.step(tick, [])
        assert engine.memory is not None
        for agent_id, agent in engine.agents.items():
            stored = engine.memory.kv_peek(agent_id, "plan")
            assert stored["items"], "a plan was made on the first tick"
            assert agent.state["plan"] is stored
            # a read through the memory API is still a private copy
            read = await agent.memory.status.get("plan")
            assert read == stored and read is not stored
    finally:
        await engine.close()


async def test_a_value_set_again_during_the_write_is_kept(tmp_path) -> None:
    engine = await _engine(tmp_path)
    try:
        agent = engine.agents[0]
        agent.set("knowledge", ["the river floods"])
        assert engine.memory is not None
        memory = engine.memory
        update_many = memory.update_many

        async def set_meanwhile(updates):  # an agent changes the value while it is written
            out = await update_many(updates)
            agent.state["knowledge"] = newer
            return out

        newer = ["the river floods", "the bridge is closed"]
        memory.update_many = set_meanwhile  # type: ignore[method-assign]
        await write_back(engine.agents, memory)
        assert agent.state["knowledge"] is newer
        assert memory.kv_peek(0, "knowledge") == ["the river floods"]
    finally:
        await engine.close()
