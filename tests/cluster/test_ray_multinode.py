"""Real faults on a multi-node Ray (`ray.cluster_utils.Cluster`: a head and two workers
offering a custom resource, all on loopback), with real groups: `GroupEngine` actors, each with
its `GroupMemory` (Qdrant Edge shards and cold Parquet on disk) and a small tier budget so
memories migrate warm → cold during the run. A group whose process dies in the middle of a
tier migration, and a group whose node is removed, are recreated from the last checkpoint and
replayed; the run's Parquet results equal an uninterrupted run's, row for row, and the stores
hold every memory exactly once."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
import ray
import yaml
from faulty_engines import FaultyEngineFactory
from ray.cluster_utils import Cluster

from societas.agents.runtime.results import TABLES, read_table
from societas.agents.scenario import load_scenario
from societas.cluster.loop.local import partition
from societas.cluster.ray.runtime import (
    ClusterConfig,
    EngineFactory,
    InProcessGroup,
    RunSpec,
    make_ray_groups,
    run_groups,
    size_groups,
)

AGENTS, GROUPS, TICKS = 40, 2, 8
RESOURCE = "societas_group"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "node_ip_address": "127.0.0.1"},
    )
    workers = [
        c.add_node(num_cpus=2, resources={RESOURCE: 2}, node_ip_address="127.0.0.1")
        for _ in range(2)
    ]
    ray.init(address=c.address, log_to_driver=False)
    c.wait_for_nodes()
    # Every node of the test cluster talks over loopback only.
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    yield c, workers
    ray.shutdown()
    c.shutdown()


def _scenario():
    """The town, 40 agents in 2 groups, chats across groups on; at most 2 warm memories per
    agent and a migration every 2 ticks, so warm → cold moves happen between checkpoints."""
    data = yaml.safe_load((ROOT / "configs" / "town.yaml").read_text())
    data.update(ticks=TICKS, groups=GROUPS)
    data["agents"]["count"] = AGENTS
    data["memory"] = {"tiers": {"warm_cap_per_agent": 2, "migrate_every_ticks": 2}}
    return load_scenario(data)


def _spec(run_dir: Path) -> RunSpec:
    return RunSpec(run_dir=run_dir, ticks=TICKS, seed=0, agents=AGENTS)


def _parquet(run_dir: Path) -> dict[str, list[dict]]:
    return {table: read_table(run_dir, table).to_pylist() for table in TABLES}


def _tiers_recorder(store: dict):
    """An on_tick callback keeping each group's memories per tier after the last tick."""

    def on_tick(report):
        for s in report.groups:
            store[s.group_id] = s.memories_by_tier

    return on_tick


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted in-process run of the same groups: what every faulty run must equal."""
    run_dir = tmp_path_factory.mktemp("reference")
    scenario = _scenario()
    factory = EngineFactory(scenario, partition(AGENTS, GROUPS), run_dir)
    tiers: dict[int, dict[str, int]] = {}
    result, _ = asyncio.run(
        run_groups(
            [InProcessGroup(factory(g)) for g in range(GROUPS)],
            _spec(run_dir),
            ClusterConfig(),
            on_tick=_tiers_recorder(tiers),
        )
    )
    tables = _parquet(run_dir)
    assert len(tables["agent_state"]) == AGENTS * TICKS
    assert sum(t["cold"] for t in tiers.values()) > 0, "memories must have moved to cold"
    assert len(tables["dialogues"]) > 10, "conversations (across groups) must be replayed too"
    return result, tables, tiers


def _assert_same_run(run_dir: Path, result, tiers, reference) -> None:
    ref_result, ref_tables, ref_tiers = reference
    assert result.digest == ref_result.digest
    got = _parquet(run_dir)
    for table in TABLES:
        assert got[table] == ref_tables[table], table
    assert tiers == ref_tiers
    for g in range(GROUPS):  # every memory added is in the stores once: warm or cold
        added = sum(r["memories_added"] for r in got["llm"] if r["group_id"] == g)
        assert tiers[g]["warm"] + tiers[g]["cold"] == added, g
    for key in ("agent_steps", "llm_requests", "llm_tokens", "messages_out"):
        assert result.totals[key] == ref_result.totals[key], key


def _placed(cfg: ClusterConfig, factory) -> list:
    handles = make_ray_groups(factory, GROUPS, cfg)
    return handles


def test_group_dying_mid_tier_migration_is_recreated_and_loses_nothing(
    cluster, tmp_path, reference
):
    run_dir = tmp_path / "run"
    marker = tmp_path / "crashed.json"
    factory = FaultyEngineFactory(
        _scenario(),
        partition(AGENTS, GROUPS),
        run_dir,
        group_id=1,
        crash_tick=4,
        marker=marker,
    )
    cfg = ClusterConfig(
        placement="resource", resource=RESOURCE, checkpoint_every=3, keep_checkpoints=0
    )
    handles = _placed(cfg, factory)
    tiers: dict[int, dict[str, int]] = {}
    result, _ = asyncio.run(
        run_groups(handles, _spec(run_dir), cfg, on_tick=_tiers_recorder(tiers))
    )
    crash = json.loads(marker.read_text())
    assert crash["tick"] >= 4 and crash["ids"], "the process died inside a warm → cold move"
    assert handles[1].restarts == 1 and handles[0].restarts == 0
    assert result.recoveries == 1 and result.checkpoints[:2] == [3, 6]
    _assert_same_run(run_dir, result, tiers, reference)


def test_real_groups_spread_over_workers_and_survive_losing_one(cluster, tmp_path, reference):
    c, workers = cluster
    cfg = ClusterConfig(
        placement="resource", resource=RESOURCE, checkpoint_every=3, keep_checkpoints=0
    )
    resources = ray.cluster_resources()
    # The previous test's actors are torn down asynchronously: place once all units are free.
    deadline = time.monotonic() + 60
    while ray.available_resources().get(RESOURCE, 0) < resources[RESOURCE]:
        assert time.monotonic() < deadline, "the previous test's groups still hold the resource"
        time.sleep(0.2)
    assert size_groups(cfg.model_copy(update={"min_agents_per_group": 1}), 400, resources) == 4
    run_dir = tmp_path / "run"
    handles = _placed(cfg, EngineFactory(_scenario(), partition(AGENTS, GROUPS), run_dir))

    async def locate():
        return await asyncio.gather(*(h.where() for h in handles))

    nodes = [w["node_id"] for w in asyncio.run(locate())]
    worker_ids = {w.node_id for w in workers}
    assert set(nodes) == worker_ids, "one group per worker node (SPREAD over the resource)"
    victim = next(w for w in workers if w.node_id == nodes[1])
    state: dict[str, object] = {}
    tiers: dict[int, dict[str, int]] = {}
    record = _tiers_recorder(tiers)

    async def remove_worker_after_tick_4(report):
        record(report)
        if report.tick == 4 and "removed" not in state:
            state["removed"] = True
            c.remove_node(victim)
        if report.tick == 7:
            state["moved"] = (await handles[1].where())["node_id"]

    result, _ = asyncio.run(
        run_groups(handles, _spec(run_dir), cfg, on_tick=remove_worker_after_tick_4)
    )
    assert state["removed"] and result.recoveries == 1 and handles[1].restarts == 1
    assert result.checkpoints[:2] == [3, 6]
    assert state["moved"] != victim.node_id and state["moved"] in worker_ids
    assert victim.node_id not in {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    _assert_same_run(run_dir, result, tiers, reference)
