"""An agent's hot state written back to its KV memory, the two then holding one object per
value, not two."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from societas.agents.agent import Agent
    from societas.memory import GroupMemory


async def write_back(agents: Mapping[int, Agent], memory: GroupMemory) -> None:
    """Every agent's changed hot state in one batched, validated KV write; then each list or
    dict in hot state points at the KV memory's own copy (a KV write keeps a private deep
    copy), so a plan and its hourly steps exist once per agent instead of twice. A value the
    agent set again during the write is left alone; blocks replace values through
    `Agent.set`, never mutate them in place."""
    check = memory.check_update
    updates = []
    for i, agent in agents.items():
        if agent.dirty:
            updates += [check(i, k, agent.state[k], "replace") for k in sorted(agent.dirty)]
            agent.dirty.clear()
    if not updates:
        return
    sent = [agents[u.agent_id].state[u.key] for u in updates]
    await memory.update_many(updates)
    for update, value in zip(updates, sent, strict=True):
        state = agents[update.agent_id].state
        if isinstance(value, list | dict) and state.get(update.key) is value:
            state[update.key] = memory.kv_peek(update.agent_id, update.key)
