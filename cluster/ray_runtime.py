"""Groups of agents as async Ray actors, and the driver that runs the tick loop over them.

Design §2: the driver calls `step(tick, inbox)` on every group, routes the outboxes (and
cross-group encounters from reported positions) in a deterministic order, updates the
Prometheus metrics, and checkpoints every K ticks. The same `Driver` runs in-process
groups (`InProcessGroup`, for `--local` and tests) and Ray actors (`RayGroupHandle`), so a
seed gives the same routing digests and results either way.

Faults: a group whose actor dies (its node went away, OOM, a crash) is recreated, restored
from the last complete checkpoint and replayed with the inboxes it saw since; replayed
outboxes are checked against the originals, so a non-deterministic group is an error and
never a silent divergence.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from societas.agents.runtime.protocol import GroupHandle, Message, StepResult
from societas.cluster import checkpoint as ckpt
from societas.cluster.metrics import MetricsConfig, RunMetrics

log = logging.getLogger(__name__)

GroupFactory = Callable[[int], GroupHandle]
Owner = Callable[[int], int]


class GroupLost(RuntimeError):
    """A group's process is gone (actor died, node removed); it can be recreated."""

    def __init__(self, group_id: int, cause: BaseException | None = None) -> None:
        super().__init__(f"group {group_id} lost: {cause!r}")
        self.group_id = group_id


class NonDeterministicReplay(RuntimeError):
    """A replayed tick produced a different outbox than the original run."""


# ---------------------------------------------------------------------------------------
# configuration and sizing
# ---------------------------------------------------------------------------------------
class ClusterConfig(BaseModel):
    """The `cluster:` section of a run config: group sizing, placement, checkpoints, metrics."""

    model_config = ConfigDict(extra="forbid")

    groups: int | Literal["auto"] = Field(
        "auto", description="Agent groups (Ray actors); auto: one per CPU (or resource unit)."
    )
    cpus_per_group: float = Field(1.0, gt=0, description="CPUs each group actor reserves.")
    min_agents_per_group: int = Field(
        500, ge=1, description="auto never makes groups smaller than this."
    )
    placement: Literal["spread", "pack", "resource"] = Field(
        "spread",
        description="spread: SPREAD over nodes; pack: Ray's default; resource: only nodes "
        "offering the custom resource `resource` (spread among them).",
    )
    resource: str | None = Field(None, description="Custom resource name, e.g. societas_group.")
    resource_per_group: float = Field(1.0, gt=0)
    encounters_per_agent: int = Field(
        2, ge=0, le=100, description="Cross-group co-located agents each agent meets per tick."
    )
    checkpoint_every: int = Field(0, ge=0, description="Ticks between checkpoints; 0: never.")
    keep_checkpoints: int = Field(2, ge=0, description="Complete checkpoints kept; 0: all.")
    max_group_restarts: int = Field(3, ge=0, description="Recreations per group per run.")
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)

    @model_validator(mode="after")
    def _resource_named(self) -> ClusterConfig:
        if self.placement == "resource" and not self.resource:
            raise ValueError("placement 'resource' needs cluster.resource (a custom resource name)")
        return self


def size_groups(cfg: ClusterConfig, agents: int, resources: dict[str, float]) -> int:
    """How many groups: the config's number, or one per free slot, never tiny, never 0."""
    if cfg.groups != "auto":
        groups = int(cfg.groups)
    else:
        slots = math.floor(resources.get("CPU", 1.0) / cfg.cpus_per_group)
        if cfg.placement == "resource" and cfg.resource:
            slots = math.floor(resources.get(cfg.resource, 0.0) / cfg.resource_per_group)
        groups = max(1, min(slots, agents // cfg.min_agents_per_group))
    if groups > agents:
        raise ValueError(f"cluster.groups={groups} is more than the {agents} agents")
    return max(1, groups)


def outbox_digest(result: StepResult) -> str:
    """A hash of one group's outbox and positions (what a replay must reproduce)."""
    h = hashlib.sha256()
    for m in result.outbox:
        h.update(m.model_dump_json().encode())
    h.update(json.dumps(sorted(result.positions.items())).encode())
    return h.hexdigest()


def inbox_digest(inbox: dict[int, list[Message]]) -> str:
    """A hash of everything routed for the next tick, group by group."""
    h = hashlib.sha256()
    for g in sorted(inbox):
        h.update(f"group {g}\n".encode())
        for m in inbox[g]:
            h.update(m.model_dump_json().encode())
            h.update(b"\n")
    return h.hexdigest()


# ---------------------------------------------------------------------------------------
# in-process groups (no Ray)
# ---------------------------------------------------------------------------------------
class InProcessGroup:
    """A `GroupHandle` engine in the driver's process, with atomic checkpoint folders."""

    def __init__(self, engine: GroupHandle) -> None:
        self.engine = engine
        self.group_id = engine.group_id

    async def setup(self) -> None:
        """Set the engine up."""
        await self.engine.setup()

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One tick of the engine."""
        return await self.engine.step(tick, inbox)

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Write the engine's state into `directory`, atomically."""
        return await ckpt.write_group_atomic(Path(directory), self.engine.checkpoint)

    async def restore(self, directory: str) -> None:
        """Restore the engine from a checkpoint folder."""
        await self.engine.restore(directory)

    async def close(self) -> None:
        """Close the engine."""
        await self.engine.close()


# ---------------------------------------------------------------------------------------
# Ray
# ---------------------------------------------------------------------------------------
class GroupActor(InProcessGroup):
    """Body of the async Ray actor owning one group (agents, memory, LLM gateway, writer):
    an in-process group built on its node, which also fills in the actor's RSS."""

    def __init__(self, factory: GroupFactory, group_id: int) -> None:
        super().__init__(factory(group_id))
        self.group_id = group_id

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One tick; fills in the actor's RSS when the engine did not."""
        result = await self.engine.step(tick, inbox)
        if not result.stats.rss_bytes:
            import psutil

            rss = psutil.Process().memory_info().rss
            stats = result.stats.model_copy(update={"rss_bytes": rss})
            result = result.model_copy(update={"stats": stats})
        return result

    async def where(self) -> dict[str, Any]:
        """Node id and pid of this actor (placement checks, fault tests)."""
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}


def actor_options(cfg: ClusterConfig) -> dict[str, Any]:
    """Ray actor options for one group from the placement config."""
    opts: dict[str, Any] = {"num_cpus": cfg.cpus_per_group, "max_restarts": 0}
    if cfg.placement in ("spread", "resource"):
        opts["scheduling_strategy"] = "SPREAD"
    if cfg.placement == "resource" and cfg.resource:
        opts["resources"] = {cfg.resource: cfg.resource_per_group}
    return opts


class RayGroupHandle:
    """`GroupHandle` over a `GroupActor`: every call is `await actor.method.remote(...)`."""

    def __init__(self, factory: GroupFactory, group_id: int, options: dict[str, Any]) -> None:
        import ray

        self.group_id = group_id
        self.factory = factory
        self.options = options
        cls = ray.remote(GroupActor)
        self.actor = cls.options(name=None, **options).remote(factory, group_id)

    async def _call(self, method: str, *args: Any) -> Any:
        from ray.exceptions import RayActorError, WorkerCrashedError

        try:
            return await getattr(self.actor, method).remote(*args)
        except (RayActorError, WorkerCrashedError) as err:
            raise GroupLost(self.group_id, err) from err

    async def setup(self) -> None:
        """Set the remote group up."""
        await self._call("setup")

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One remote tick."""
        return await self._call("step", tick, inbox)

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Remote atomic checkpoint into `directory` (shared storage on multi-node)."""
        return await self._call("checkpoint", directory)

    async def restore(self, directory: str) -> None:
        """Remote restore."""
        await self._call("restore", directory)

    async def close(self) -> None:
        """Close the engine and end the actor."""
        import ray

        try:
            await self._call("close")
        finally:
            ray.kill(self.actor, no_restart=True)

    async def where(self) -> dict[str, Any]:
        """Node and pid of the actor."""
        return await self._call("where")

    def respawn(self) -> RayGroupHandle:
        """A fresh actor for the same group (wherever Ray can place it now)."""
        import ray

        try:
            ray.kill(self.actor, no_restart=True)
        except Exception:  # already gone with its node
            log.debug("actor of group %s already gone", self.group_id)
        return RayGroupHandle(self.factory, self.group_id, self.options)


def ensure_ray(address: str | None = None, num_cpus: int | None = None, **kwargs: Any) -> None:
    """Start local Ray (default) or attach to `address`; idempotent; no dashboard locally."""
    import ray

    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    address = address or os.environ.get("RAY_ADDRESS")  # set inside a Ray job
    if address:
        ray.init(address=address, log_to_driver=True, **kwargs)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=True, **kwargs)


def make_ray_groups(factory: GroupFactory, groups: int, cfg: ClusterConfig) -> list[ResilientGroup]:
    """One placed actor per group, each behind a `ResilientGroup` that can recreate it."""
    opts = actor_options(cfg)
    return [
        ResilientGroup(RayGroupHandle(factory, g, opts), cfg.max_group_restarts)
        for g in range(groups)
    ]


# ---------------------------------------------------------------------------------------
# recovery: recreate, restore, replay
# ---------------------------------------------------------------------------------------
class ResilientGroup:
    """A `GroupHandle` that survives its process: on `GroupLost` it recreates the group,
    restores the group's last checkpoint and replays the ticks since with the inboxes it
    logged, checking each replayed outbox against the original, then redoes the tick."""

    def __init__(self, inner: GroupHandle, max_restarts: int = 3) -> None:
        self.inner = inner
        self.group_id = inner.group_id
        self.max_restarts = max_restarts
        self.restarts = 0
        self._log: dict[int, list[Message]] = {}
        self._outs: dict[int, str] = {}
        self._last_tick: int | None = None
        self._ckpt: tuple[int, str] | None = None  # (next tick, folder)

    async def setup(self) -> None:
        """Set the group up."""
        await self.inner.setup()

    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """One tick; a lost group is recreated and caught up before answering."""
        self._log[tick] = inbox
        try:
            result = await self.inner.step(tick, inbox)
        except GroupLost:
            result = await self._recover(tick)
        self._outs[tick] = outbox_digest(result)
        self._last_tick = tick
        return result

    async def _recover(self, tick: int) -> StepResult:
        while True:
            self.restarts += 1
            if self.restarts > self.max_restarts:
                raise RuntimeError(
                    f"group {self.group_id} lost more than {self.max_restarts} times"
                )
            log.warning(
                "group %s lost at tick %s; recreating (%s)", self.group_id, tick, self.restarts
            )
            respawn = getattr(self.inner, "respawn", None)
            if respawn is None:
                raise GroupLost(self.group_id)
            self.inner = respawn()
            try:
                await self.inner.setup()
                first = min(self._log)
                if self._ckpt is not None:
                    first, folder = self._ckpt
                    await self.inner.restore(folder)
                for t in range(first, tick):
                    replay = await self.inner.step(t, self._log[t])
                    if outbox_digest(replay) != self._outs[t]:
                        raise NonDeterministicReplay(
                            f"group {self.group_id}: replayed tick {t} differs from the original"
                        )
                return await self.inner.step(tick, self._log[tick])
            except GroupLost:
                continue

    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Checkpoint (atomically, by the inner handle) the state after the last tick."""
        meta = await self.inner.checkpoint(directory)
        nxt = 0 if self._last_tick is None else self._last_tick + 1
        self._ckpt = (nxt, directory)
        self._log = {t: v for t, v in self._log.items() if t >= nxt}
        self._outs = {t: v for t, v in self._outs.items() if t >= nxt}
        return meta

    async def restore(self, directory: str) -> None:
        """Restore a checkpoint folder `.../tick=K/group-G` (resume)."""
        await self.inner.restore(directory)
        tick = int(Path(directory).parent.name.removeprefix("tick="))
        self._ckpt = (tick, directory)
        self._last_tick = tick - 1

    async def close(self) -> None:
        """Close the inner group (gone groups are ignored)."""
        try:
            await self.inner.close()
        except GroupLost:
            log.debug("group %s already gone at close", self.group_id)

    async def where(self) -> dict[str, Any]:
        """Node and pid of the inner actor."""
        return await self.inner.where()  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------
# running a set of groups through the coordinator, with checkpoints and metrics
# ---------------------------------------------------------------------------------------
TOTAL_KEYS = (
    "agent_steps",
    "llm_requests",
    "llm_tokens",
    "llm_errors",
    "embeddings",
    "vector_upserts",
    "vector_queries",
    "messages_out",
)


class RunResult(BaseModel):
    """Cumulative, deterministic totals of a run (over resumes) and its routing digests."""

    ticks: int
    start_tick: int
    agents: int
    groups: int
    totals: dict[str, float]
    digests: list[str] = Field(description="Digest of the routed inboxes after each tick.")
    digest: str
    checkpoints: list[int] = Field(default_factory=list, description="Ticks checkpointed.")
    recoveries: int = 0
    wall_s: float = 0.0
    tick_seconds: list[float] = Field(default_factory=list)

    @property
    def agent_steps_per_s(self) -> float:
        """Agent steps per second of tick time in this process."""
        done = self.agents * (self.ticks - self.start_tick)
        return done / max(sum(self.tick_seconds), 1e-9)


class RunSpec(BaseModel):
    """A run as the runtime sees it: where, how long, who, and what to store in manifests."""

    run_dir: Path
    ticks: int = Field(ge=1)
    seed: int = 0
    agents: int = Field(ge=1)
    config: dict[str, Any] = Field(default_factory=dict, description="Scenario, no secrets.")
    encounters: bool = True
    max_pairs_per_place: int = 50


async def run_groups(
    groups: Sequence[GroupHandle],
    spec: RunSpec,
    cluster: ClusterConfig,
    metrics: RunMetrics | None = None,
    on_progress: Callable[[Any], Any] | None = None,
    on_tick: Callable[[Any], Any] | None = None,
    resume: bool = False,
) -> tuple[RunResult, Any]:
    """Set up (or restore the last complete checkpoint of) the groups, run the coordinator
    loop of `societas.cluster.coordinator` to the end, checkpointing every K ticks."""
    from societas.cluster.coordinator import Coordinator

    handles = sorted(groups, key=lambda g: g.group_id)
    totals = dict.fromkeys(TOTAL_KEYS, 0.0)
    digests: list[str] = []
    checkpoints: list[int] = []
    holder: dict[str, Coordinator] = {}

    async def tick_done(report: Any) -> None:
        for s in report.groups:
            for key in TOTAL_KEYS:
                totals[key] += getattr(s, key)
            if metrics is not None:
                metrics.ingest(s, agents=s.agent_steps)  # every agent steps once a tick
        digests.append(inbox_digest(holder["c"].pending))
        if metrics is not None:
            metrics.tick_done(report.tick, report.seconds)
        if on_tick is not None:
            out = on_tick(report)
            if asyncio.iscoroutine(out):
                await out

    async def take_checkpoint(tick: int, _groups: Sequence[GroupHandle]) -> None:
        nxt = tick + 1
        metas = await asyncio.gather(
            *(h.checkpoint(str(ckpt.group_dir(spec.run_dir, nxt, h.group_id))) for h in handles)
        )
        manifest = ckpt.Manifest(
            tick=nxt,
            ticks=spec.ticks,
            seed=spec.seed,
            agents=spec.agents,
            groups={h.group_id: m for h, m in zip(handles, metas, strict=True)},
            totals=dict(totals),
            digests=list(digests),
            config=spec.config,
        )
        ckpt.write_checkpoint_manifest(spec.run_dir, manifest, holder["c"].pending)
        checkpoints.append(nxt)
        ckpt.prune(spec.run_dir, cluster.keep_checkpoints)

    coordinator = Coordinator(
        handles,
        seed=spec.seed,
        encounters_enabled=spec.encounters,
        max_pairs_per_place=spec.max_pairs_per_place,
        on_progress=on_progress,
        on_tick=tick_done,
        checkpoint_every=cluster.checkpoint_every or None,
        on_checkpoint=take_checkpoint if cluster.checkpoint_every else None,
    )
    holder["c"] = coordinator
    started = time.perf_counter()
    try:
        await asyncio.gather(*(h.setup() for h in handles))
        start = 0
        if resume:
            last = ckpt.last_complete(spec.run_dir)
            if last is None:
                raise FileNotFoundError(f"{spec.run_dir}: no complete checkpoint to resume from")
            manifest, inbox = ckpt.load_checkpoint(spec.run_dir, last)
            if sorted(manifest.groups) != [h.group_id for h in handles]:
                raise ValueError(
                    f"checkpoint tick={last} has groups {sorted(manifest.groups)}, "
                    f"this run has {[h.group_id for h in handles]}"
                )
            await asyncio.gather(
                *(h.restore(str(ckpt.group_dir(spec.run_dir, last, h.group_id))) for h in handles)
            )
            totals.update(manifest.totals)
            digests.extend(manifest.digests)
            coordinator.pending = {h.group_id: inbox.get(h.group_id, []) for h in handles}
            start = last
        summary = await coordinator.run(spec.ticks - start, start_tick=start)
    finally:
        await asyncio.gather(*(h.close() for h in handles), return_exceptions=True)
    result = RunResult(
        ticks=spec.ticks,
        start_tick=start,
        agents=spec.agents,
        groups=len(handles),
        totals=totals,
        digests=digests,
        digest=hashlib.sha256("".join(digests).encode()).hexdigest(),
        checkpoints=checkpoints,
        recoveries=sum(getattr(h, "restarts", 0) for h in handles),
        wall_s=time.perf_counter() - started,
        tick_seconds=list(summary.tick_seconds),
    )
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    ckpt.write_json_atomic(spec.run_dir / "ray_run.json", result.model_dump(mode="json"))
    return result, summary


# ---------------------------------------------------------------------------------------
# scenarios on Ray (what `societas run` without --local, `resume` and the benchmark call)
# ---------------------------------------------------------------------------------------
class EngineFactory:
    """Builds the `GroupEngine` of group g inside its actor; picklable (config + id lists)."""

    def __init__(self, scenario: Any, ids: list[list[int]], run_dir: Path) -> None:
        self.scenario = scenario
        self.ids = ids
        self.run_dir = Path(run_dir)

    def __call__(self, group_id: int) -> GroupHandle:
        """The engine of one group."""
        from societas.agents.runtime.engine import GroupEngine

        return GroupEngine(self.scenario, group_id, self.ids[group_id], self.run_dir)


def cluster_config_of(
    scenario: Any, override: ClusterConfig | dict[str, Any] | None
) -> ClusterConfig:
    """The run's `ClusterConfig`: explicit, else the scenario's `cluster:` section, else the
    YAML file named by $SOCIETAS_CLUSTER_CONFIG, else defaults; $SOCIETAS_METRICS_HOST/PORT
    override the metrics endpoint."""
    if isinstance(override, ClusterConfig):
        return override
    if override is not None:
        return ClusterConfig.model_validate(override)
    section = getattr(scenario, "cluster", None)
    if isinstance(section, BaseModel):
        section = section.model_dump()
    if not section and os.environ.get("SOCIETAS_CLUSTER_CONFIG"):
        section = load_cluster_config(os.environ["SOCIETAS_CLUSTER_CONFIG"]).model_dump()
    data = dict(section or {})
    # Operators (and tests) move the metrics endpoint without editing the experiment.
    metrics = dict(data.get("metrics") or {})
    for key, var in (("host", "SOCIETAS_METRICS_HOST"), ("port", "SOCIETAS_METRICS_PORT")):
        if os.environ.get(var):
            metrics[key] = os.environ[var]
    if metrics:
        data["metrics"] = metrics
    return ClusterConfig.model_validate(data)


def load_cluster_config(path: str | Path) -> ClusterConfig:
    """A `ClusterConfig` YAML (deployment settings kept apart from the experiment)."""
    import yaml

    source = Path(path)
    raw = yaml.safe_load(source.read_text()) or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{source}: expected a mapping, got {type(raw).__name__}")
    raw = raw.get("cluster", raw)
    try:
        return ClusterConfig.model_validate(raw)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None


def drop_results_from(run_dir: Path, tick: int) -> int:
    """Delete results files whose first tick is >= `tick` (written after a checkpoint by a
    crashed run; the resumed run writes them again). Returns how many were removed."""
    removed = 0
    for path in (Path(run_dir) / "results").glob("*/group-*/ticks-*-*.parquet"):
        try:
            first = int(path.stem.split("-")[1])
        except (IndexError, ValueError):
            continue
        if first >= tick:
            path.unlink()
            removed += 1
    return removed


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
) -> Any:
    """Run a scenario with one Ray actor per group; returns the coordinator's RunSummary.

    Starts local Ray (or attaches to `address`), sizes the groups (`groups`, else the
    cluster config, else one per free CPU/resource unit), places them, serves `/metrics`,
    checkpoints every K ticks and writes `config.json`/`run.json` like `--local` does.
    """
    from societas.agents.scenario import load_scenario
    from societas.cluster.local import partition, write_run_manifest

    scenario = load_scenario(scenario)
    run_dir = Path(run_dir)
    cfg = cluster_config_of(scenario, cluster)
    ensure_ray(address, num_cpus=num_cpus)
    import ray

    count = scenario.agents.count
    n = groups if groups is not None else size_groups(cfg, count, ray.available_resources())
    ids = partition(count, n)
    if resume:
        last = ckpt.last_complete(run_dir)
        if last is not None:
            drop_results_from(run_dir, last)
    factory = EngineFactory(scenario, ids, run_dir)
    handles = make_ray_groups(factory, len(ids), cfg)
    own_metrics = metrics is None and cfg.metrics.enabled
    if own_metrics:
        metrics = RunMetrics(cfg.metrics)
        metrics.serve()
    spec = RunSpec(
        run_dir=run_dir,
        ticks=scenario.ticks,
        seed=scenario.seed,
        agents=count,
        config={
            "scenario": scenario.model_dump(mode="json"),
            "cluster": cfg.model_dump(mode="json"),
            "groups": len(ids),
        },
        encounters=scenario.social.encounters,
        max_pairs_per_place=scenario.social.max_pairs_per_place,
    )
    try:
        result, summary = asyncio.run(
            run_groups(handles, spec, cfg, metrics, on_progress, on_tick, resume=resume)
        )
    finally:
        if own_metrics and metrics is not None:
            metrics.close()
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
        },
    )
    return summary


def resume_on_ray(
    run_dir: str | Path,
    *,
    address: str | None = None,
    on_progress: Callable[[Any], Any] | None = None,
    metrics: RunMetrics | None = None,
) -> Any:
    """Continue a run from its last complete checkpoint with the config stored there."""
    run_dir = Path(run_dir)
    last = ckpt.last_complete(run_dir)
    if last is None:
        raise FileNotFoundError(f"{run_dir}: no complete checkpoint to resume from")
    manifest, _ = ckpt.load_checkpoint(run_dir, last)
    conf = manifest.config
    if "scenario" not in conf:
        raise ValueError(f"{run_dir}: checkpoint tick={last} does not name its scenario")
    return run_on_ray(
        conf["scenario"],
        run_dir,
        conf.get("groups"),
        address=address,
        on_progress=on_progress,
        cluster=conf.get("cluster"),
        metrics=metrics,
        resume=True,
    )
