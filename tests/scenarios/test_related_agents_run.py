"""A town run's conversation and chat memories record whom they involve: each agent that
concluded a conversation with another finds it with `involving` in the run's group memory."""

from __future__ import annotations

from societas.agents.runtime.results import read_table
from societas.cluster.experiments.interview import open_memory
from societas.cluster.loop.local import partition

from .conftest import scenario

TALKATIVE = {"chat_prob": 0.6, "friend_chat_prob": 0.9, "message_prob": 0.05}


async def test_town_conversations_are_remembered_with_their_people(run, tmp_path, bm25_embedder):
    cfg = scenario("town", agents={"count": 12}, social=TALKATIVE, ticks=16, groups=2)
    out = await run(cfg, "town")
    talks = read_table(out, "relationships").to_pylist()
    assert talks  # (agent, other): the agent concluded a conversation with the other
    owner = {a: g for g, ids in enumerate(partition(12, 2)) for a in ids}
    groups = [
        await open_memory(out, g, tmp_path / f"open{g}", embedder=bm25_embedder) for g in (0, 1)
    ]
    try:
        for row in talks:
            agent, other = row["agent_id"], row["other_id"]
            stream = groups[owner[agent]].agent(agent).stream
            hits = await stream.search("talked", top_k=50, involving=other)
            assert any(h.topic == "dialogue" for h in hits), (agent, other)
            assert all(other in h.related_agents for h in hits)
            assert agent not in {o for h in hits for o in h.related_agents}
    finally:
        for g in groups:
            await g.close()
