"""An agent's `social_network` is its population friend list, read through (not stored per
agent), and still so after a checkpoint is restored into a fresh group memory."""

from __future__ import annotations

from societas.agents.runtime.engine import GroupEngine


def _friends(engine: GroupEngine, agent_id: int) -> list[list]:
    assert engine.population is not None
    return [[f, w] for f, w in engine.population.friends[agent_id]]


async def test_friend_lists_come_from_the_population(engine, tmp_path) -> None:
    assert engine.memory is not None
    assert any(_friends(engine, i) for i in engine.agents), "the small town has ties"
    for agent_id, agent in engine.agents.items():
        assert await agent.memory.status.get("social_network") == _friends(engine, agent_id)
    assert not engine.memory.kv_column("social_network")  # nothing stored per agent
    await engine.step(0, [])
    await engine.finish_tick(0)
    await engine.checkpoint(str(tmp_path / "ckpt"))
    await engine.restore(str(tmp_path / "ckpt"))
    for agent_id, agent in engine.agents.items():
        assert await agent.memory.status.get("social_network") == _friends(engine, agent_id)
