"""Scenarios on Ray: what `societas run` without --local, `resume` and the benchmark call.

The driver calls `step(tick, inbox)` on every group, runs the tick's conversation
rounds, takes each group's stats of the whole tick (`finish_tick`), routes the outboxes (and
cross-group encounters from reported positions) in a deterministic order, updates the
Prometheus metrics, and checkpoints every K ticks. The same `run_groups` runs in-process
groups (`InProcessGroup`, for `--local` and tests) and Ray actors (`RayGroupHandle`), so a
seed gives the same routing digests and results either way. The pieces live in
`cluster_config` (the `cluster:` section), `loop.groups` (in-process + recovery), `ray.groups`
(actors) and `loop.run` (the coordinator loop with checkpoints); this module re-exports them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from societas.cluster import checkpoint as ckpt
from societas.cluster.cluster_config import (
    ClusterConfig,
    cluster_config_of,
    load_cluster_config,
    size_groups,
)
from societas.cluster.loop.engines import EngineFactory
from societas.cluster.loop.groups import (
    GroupLost,
    InProcessGroup,
    NonDeterministicReplay,
    ResilientGroup,
    inbox_digest,
    outbox_digest,
)
from societas.cluster.loop.local import drop_results_from
from societas.cluster.loop.run import TOTAL_KEYS, RunInterrupted, RunResult, RunSpec, run_groups
from societas.cluster.observe.metrics import RunMetrics
from societas.cluster.ray.groups import (
    GroupActor,
    RayGroupHandle,
    actor_options,
    ensure_ray,
    make_ray_groups,
)

__all__ = [
    "TOTAL_KEYS",
    "ClusterConfig",
    "EngineFactory",
    "GroupActor",
    "GroupLost",
    "InProcessGroup",
    "NonDeterministicReplay",
    "RayGroupHandle",
    "ResilientGroup",
    "RunResult",
    "RunSpec",
    "actor_options",
    "cluster_config_of",
    "drop_results_from",
    "ensure_ray",
    "inbox_digest",
    "load_cluster_config",
    "make_ray_groups",
    "outbox_digest",
    "resume_on_ray",
    "run_groups",
    "run_on_ray",
    "size_groups",
]


def run_on_ray(
    scenario: Any,
    run_dir: str | Path,
    groups: int | None = None,
    *,
    address: str | None = None,
    on_progress: Callable[[Any], Any] | None = None,
    on_tick: Callable[[Any], Any] | None = None,
    cluster: ClusterConfig | dict[str, Any] | None = None,
    metrics: RunMetrics | None = None,
    resume: bool = False,
    num_cpus: int | None = None,
    stop: Callable[[], bool] | None = None,
    on_checkpoint: Callable[[int, dict[str, float]], Any] | None = None,
    on_ray_started: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """Run a scenario with one Ray actor per group; returns the coordinator's RunSummary.

    Starts local Ray (or attaches to `address` within cluster.attach_timeout_s), sizes the
    groups (`groups`, else the cluster config, else one per free CPU/resource unit), places
    them, serves `/metrics`, checkpoints (default every 6 simulated hours and at the end),
    stops after a tick when `stop()` is true (a slow model tick is cut short and the last
    finished tick checkpointed, `loop.catch_up`), writes `config.json`/`run.json` like
    `--local`, and shuts down the Ray it started on every way out.
    """
    from societas.agents.scenario import load_scenario
    from societas.cluster.loop.local import partition, run_spec_of, write_run_manifest
    from societas.cluster.ray.attach import started_processes

    scenario = load_scenario(scenario)
    run_dir = Path(run_dir)
    cfg = cluster_config_of(scenario, cluster)
    started = ensure_ray(address, num_cpus=num_cpus, timeout_s=cfg.attach_timeout_s, stop=stop)
    import ray

    # Ray's core installs its own SIGTERM handler (it aborts); the stop handler goes back on.
    reinstall = getattr(stop, "install", None)
    if reinstall is not None:
        reinstall()

    own_metrics = metrics is None and cfg.metrics.enabled
    try:
        if started and on_ray_started is not None:
            on_ray_started(started_processes())
        count = scenario.agents.count
        n = groups if groups is not None else size_groups(cfg, count, ray.available_resources())
        ids = partition(count, n)
        if resume:
            last = ckpt.last_complete(run_dir)
            if last is not None:
                drop_results_from(run_dir, last)
        factory = EngineFactory(scenario, ids, run_dir, cfg.agents_in_flight)
        handles = make_ray_groups(factory, len(ids), cfg)
        if own_metrics:
            metrics = RunMetrics(cfg.metrics)
            metrics.serve()
        spec = run_spec_of(scenario, run_dir, len(ids), cfg)
        try:
            result, summary = asyncio.run(
                run_groups(
                    handles,
                    spec,
                    cfg,
                    metrics,
                    on_progress,
                    on_tick,
                    resume=resume,
                    stop=stop,
                    on_checkpoint=on_checkpoint,
                )
            )
        except RunInterrupted as stopped:  # a cut tick: checkpoint the last finished one
            from societas.cluster.loop.catch_up import checkpoint_last_finished

            catch_up = checkpoint_last_finished(
                scenario, run_dir, cfg, stopped, groups=len(ids), on_checkpoint=on_checkpoint
            )
            raise asyncio.run(catch_up) from None
    finally:
        if own_metrics and metrics is not None:
            metrics.close()
        if started:
            ray.shutdown()
    summary.checkpoints = list(result.checkpoints)
    write_run_manifest(
        run_dir,
        scenario,
        summary,
        {
            "mode": "ray",
            "groups_placed": len(ids),
            "digest": result.digest,
            "totals": result.totals,
            "recoveries": result.recoveries,
            "checkpoints": result.checkpoints,
            "start_tick": result.start_tick,
            "llm_tasks": result.llm_tasks,  # calls, tokens and json outcomes per task
            "llm": result.llm_models,  # per model, over every invocation
        },
    )
    return summary


def resume_config(run_dir: str | Path) -> dict[str, Any]:
    """The config stored in the last complete checkpoint (scenario, cluster, groups)."""
    run_dir = Path(run_dir)
    last = ckpt.last_complete(run_dir)
    if last is None:
        raise FileNotFoundError(f"{run_dir}: no complete checkpoint to resume from")
    manifest, _ = ckpt.load_checkpoint(run_dir, last)
    conf = manifest.config
    if "scenario" not in conf:
        raise ValueError(f"{run_dir}: checkpoint tick={last} does not name its scenario")
    return conf


def resume_on_ray(
    run_dir: str | Path,
    *,
    address: str | None = None,
    on_progress: Callable[[Any], Any] | None = None,
    metrics: RunMetrics | None = None,
    **kwargs: Any,
) -> Any:
    """Continue a run from its last complete checkpoint with the config stored there."""
    conf = resume_config(run_dir)
    return run_on_ray(
        conf["scenario"],
        run_dir,
        conf.get("groups"),
        address=address,
        on_progress=on_progress,
        cluster=kwargs.pop("cluster", None) or conf.get("cluster"),
        metrics=metrics,
        resume=True,
        **kwargs,
    )
