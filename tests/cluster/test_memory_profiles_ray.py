"""Memory profiles per agent type on Ray actors: every actor's agents run their type's
profile (the cognitive ones perceiving through attention), and the run equals the same run
on in-process groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from societas.agents.experiments.memory_profiles import read_agent_profiles
from societas.agents.runtime.results import read_table
from societas.cluster import checkpoint as ckpt
from societas.cluster.loop.local import run_local
from societas.cluster.ray.runtime import run_on_ray

ROOT = Path(__file__).resolve().parents[2]
AGENTS, GROUPS, TICKS = 16, 2, 6


pytestmark = pytest.mark.usefixtures("own_local_ray")


def _town() -> dict:
    cfg = yaml.safe_load((ROOT / "configs" / "town-memory-profiles.yaml").read_text())
    cfg.update(ticks=TICKS, groups=GROUPS, start_hour=8)
    cfg["agents"] = {**cfg["agents"], "count": AGENTS}
    cfg["social"] = {**cfg["social"], "chat_prob": 0.9, "friend_chat_prob": 1.0}
    cfg["interventions"] = [{"tick": 1, "kind": "fact", "fact": "festival", "select": {"count": 3}}]
    scholar = cfg["memory"]["agent_types"]["scholar"]["cognitive"]
    scholar.update(attention={"every": 2}, sensory_buffer_size=3)
    return cfg


def test_agent_type_profiles_on_ray_actors_equal_in_process(tmp_path, bm25_embedder):
    run_on_ray(_town(), tmp_path / "ray", GROUPS, cluster={"metrics": {"port": 0}})
    rows = read_agent_profiles(tmp_path / "ray").to_pylist()
    assert [r["agent_id"] for r in rows] == list(range(AGENTS))
    assert {r["group_id"] for r in rows} == set(range(GROUPS))
    expect = {"citizen": "default", "trader": "finmem", "scholar": "cognitive"}
    assert all(r["memory_profile"] == expect[r["agent_type"]] for r in rows)
    # the actors' cognitive layers went through their checkpoints
    last = ckpt.last_complete(tmp_path / "ray")
    states = []
    for g in range(GROUPS):
        state = ckpt.group_dir(tmp_path / "ray", last, g) / f"group-{g:04d}-memory/state.json"
        states.append(json.loads(state.read_text())["cognitive"])
    scholars = {str(r["agent_id"]) for r in rows if r["agent_type"] == "scholar"}
    held = {a for s in states for a in s["agents"]}
    assert held and held <= scholars
    assert sum(s["counters"]["observations"] for s in states) > 0
    run_local(_town(), tmp_path / "local", GROUPS, embedder=bm25_embedder)
    assert read_agent_profiles(tmp_path / "local").equals(read_agent_profiles(tmp_path / "ray"))
    for table in ("dialogues", "relationships", "knowledge", "agent_state", "llm"):
        rows = read_table(tmp_path / "local", table).to_pylist()
        assert rows == read_table(tmp_path / "ray", table).to_pylist(), table
