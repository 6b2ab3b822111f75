"""Multi-node on one machine (`ray.cluster_utils.Cluster`): head + 2 workers with a custom
resource, groups spread over the workers, one worker removed mid-run; the lost group is
recreated on the surviving worker from the last checkpoint and the run ends identical."""

from __future__ import annotations

import asyncio

import pytest
import ray
from ray.cluster_utils import Cluster

from societas.cluster.ray_runtime import (
    ClusterConfig,
    InProcessGroup,
    RunSpec,
    make_ray_groups,
    run_groups,
    size_groups,
)
from societas.cluster.testing import SyntheticConfig, SyntheticFactory, results_digest

AGENTS, GROUPS, TICKS = 400, 2, 10
RESOURCE = "societas_group"


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


def _factory(run_dir, delay=0.0):
    return SyntheticFactory(
        SyntheticConfig(
            agents=AGENTS,
            groups=GROUPS,
            seed=5,
            results_dir=str(run_dir / "results"),
            step_delay_s=delay,
        )
    )


def test_groups_spread_over_workers_and_survive_losing_one(cluster, tmp_path):
    c, workers = cluster
    cfg = ClusterConfig(
        placement="resource", resource=RESOURCE, checkpoint_every=3, keep_checkpoints=0
    )
    assert (
        size_groups(
            cfg.model_copy(update={"min_agents_per_group": 1}), AGENTS, ray.cluster_resources()
        )
        == 4
    )  # 2 workers x 2 units

    ref_dir = tmp_path / "reference"
    f = _factory(ref_dir)
    ref, _ = asyncio.run(
        run_groups(
            [InProcessGroup(f(g)) for g in range(GROUPS)],
            RunSpec(run_dir=ref_dir, ticks=TICKS, seed=5, agents=AGENTS),
            ClusterConfig(),
        )
    )

    run_dir = tmp_path / "ray"
    f = _factory(run_dir, delay=0.05)
    handles = make_ray_groups(f, GROUPS, cfg)

    async def locate():
        return await asyncio.gather(*(h.where() for h in handles))

    where = asyncio.run(locate())
    nodes = [w["node_id"] for w in where]
    worker_ids = {w.node_id for w in workers}
    assert set(nodes) == worker_ids, "one group per worker node (SPREAD over the resource)"
    victim_node = next(w for w in workers if w.node_id == nodes[1])
    state: dict[str, object] = {"removed": False}

    async def remove_worker_after_tick_4(report):
        if report.tick == 4 and not state["removed"]:
            state["removed"] = True
            c.remove_node(victim_node)
        if report.tick == 7:
            state["moved"] = (await handles[1].where())["node_id"]

    async def go():
        summary, _ = await run_groups(
            handles,
            RunSpec(run_dir=run_dir, ticks=TICKS, seed=5, agents=AGENTS),
            cfg,
            on_tick=remove_worker_after_tick_4,
        )
        return summary

    summary = asyncio.run(go())
    assert state["removed"]
    assert summary.recoveries == 1 and handles[1].restarts == 1
    assert summary.checkpoints == [3, 6, 9, 10]  # every 3 ticks and after the last one
    moved = state["moved"]
    assert moved != victim_node.node_id and moved in worker_ids
    assert summary.digest == ref.digest
    assert summary.totals == ref.totals
    assert results_digest(run_dir / "results") == results_digest(ref_dir / "results")
    alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert victim_node.node_id not in alive
