"""Conversations between agents of different Ray actors: the coordinator routes the turns in
sub-rounds to each actor (`converse_round`), both sides remember the conversation and update
their relationship, and the run equals the same run on in-process groups."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from societas.agents.cognition.persona import plain_name
from societas.agents.population import population_for
from societas.agents.runtime.results import read_table
from societas.agents.scenario import load_scenario
from societas.cluster import checkpoint as ckpt
from societas.cluster.loop.local import partition, run_local
from societas.cluster.ray.runtime import run_on_ray
from societas.memory import GroupMemory

ROOT = Path(__file__).resolve().parents[2]
AGENTS, GROUPS, TICKS = 16, 2, 6


pytestmark = pytest.mark.usefixtures("own_local_ray")


def _town() -> dict:
    cfg = yaml.safe_load((ROOT / "configs" / "town.yaml").read_text())
    cfg.update(ticks=TICKS, groups=GROUPS, start_hour=8)
    cfg["agents"] = {**cfg["agents"], "count": AGENTS}
    cfg["social"] = {**cfg["social"], "chat_prob": 0.9, "friend_chat_prob": 1.0}
    cfg["interventions"] = [{"tick": 1, "kind": "fact", "fact": "festival", "select": {"count": 3}}]
    return cfg


async def _remembers(folder: Path, root: Path, me: int, other_name: str, other: int, emb) -> None:
    """The agent's memory (restored from the final checkpoint) holds the conversation."""
    from societas.agents.experiments import custom

    sc = load_scenario(_town())
    memory = await GroupMemory.restore(
        folder, root, memory_config=custom.memory_config_of(sc), embedder=emb
    )
    try:
        mem = memory.agent(me)
        hits = [h.text for h in await mem.stream.search(other_name, topic="dialogue", top_k=50)]
        assert any(other_name in t for t in hits), (me, other_name, hits[:3])
        kv = await mem.status.get("relationships")
        assert kv[str(other)]["talks"] >= 1
    finally:
        await memory.close()


def test_cross_group_conversation_on_ray_actors_stores_both_sides(tmp_path, bm25_embedder):
    summary = run_on_ray(_town(), tmp_path / "ray", GROUPS, cluster={"metrics": {"port": 0}})
    assert summary.cross_group_conversations > 0
    owner = {a: g for g, ids in enumerate(partition(AGENTS, GROUPS)) for a in ids}
    talk = [r for r in read_table(tmp_path / "ray", "dialogues").to_pylist() if r["turn"] > 0]
    cross = next(r for r in talk if owner[r["speaker"]] != owner[r["listener"]])
    a, b, cid = cross["speaker"], cross["listener"], cross["conversation_id"]
    rel = read_table(tmp_path / "ray", "relationships").to_pylist()
    assert {(r["agent_id"], r["other_id"]) for r in rel if r["conversation_id"] == cid} == {
        (a, b),
        (b, a),
    }
    last = ckpt.last_complete(tmp_path / "ray")
    profiles = population_for(load_scenario(_town())).profiles
    for me, other in ((a, b), (b, a)):
        g = owner[me]
        folder = ckpt.group_dir(tmp_path / "ray", last, g) / f"group-{g:04d}-memory"
        root = tmp_path / f"restored-{me}"
        asyncio.run(
            _remembers(folder, root, me, plain_name(profiles[other].name), other, bm25_embedder)
        )
    local = run_local(_town(), tmp_path / "local", GROUPS, embedder=bm25_embedder)
    assert local.conversation_turns == summary.conversation_turns
    for table in ("dialogues", "relationships", "knowledge", "agent_state"):
        rows = read_table(tmp_path / "local", table).to_pylist()
        assert rows == read_table(tmp_path / "ray", table).to_pylist(), table
