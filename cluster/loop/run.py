"""Running a set of groups (in-process or Ray) through the coordinator, with checkpoints,
resume from the last complete checkpoint, and metrics."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from societas.agents.runtime.protocol import GroupHandle
from societas.cluster import checkpoint as ckpt
from societas.cluster.cluster_config import ClusterConfig, checkpoint_ticks
from societas.cluster.loop.groups import InProcessGroup, ResilientGroup, inbox_digest
from societas.cluster.loop.llm_stop import LLMStopWatch
from societas.cluster.observe import calls_in_flight
from societas.cluster.observe.metrics import RunMetrics

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
    llm_tasks: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="LLM calls/tokens/json outcomes per task, summed over the run's resumes.",
    )
    llm_models: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="LLM requests, tokens, cache hits and cost per model, over the resumes.",
    )

    @property
    def agent_steps_per_s(self) -> float:
        """Agent steps per second of tick time in this process."""
        done = self.agents * (self.ticks - self.start_tick)
        return done / max(sum(self.tick_seconds), 1e-9)


class RunInterrupted(RuntimeError):
    """The run was asked to stop (Ctrl-C, SIGTERM, `societas stop`) and checkpointed first.

    `tick`: ticks finished; `checkpoint`: the tick a resume starts from. A stop that cut a
    tick short carries the run's figures after its last finished tick (`totals`,
    `llm_tasks`, `llm_models`) so a checkpoint taken later for that tick records them."""

    def __init__(
        self,
        tick: int,
        checkpoint: int | None,
        *,
        totals: dict[str, float] | None = None,
        llm_tasks: dict[str, dict[str, int]] | None = None,
        llm_models: dict[str, dict[str, float]] | None = None,
        note: str = "",
    ) -> None:
        if checkpoint is None:
            where = "no checkpoint"
        elif checkpoint == tick:
            where = f"checkpoint tick={checkpoint}, the last finished tick"
        else:
            where = f"checkpoint tick={checkpoint}; ticks {checkpoint}..{tick - 1} run again"
        super().__init__(f"interrupted after {tick} ticks ({where}){note}")
        self.tick = tick
        self.checkpoint = checkpoint
        self.totals = dict(totals or {})
        self.llm_tasks = dict(llm_tasks or {})
        self.llm_models = dict(llm_models or {})


STOP_GRACE_S = 4.0  # a stop asked during a tick waits this long for it, then cuts it short


async def _cut_short(running: asyncio.Future[Any], stop: Callable[[], bool]) -> bool:
    """Wait for `running`; when `stop()` has been true for STOP_GRACE_S while a tick is
    still going (a slow model), cancel it (its pending LLM calls with it): True if so."""
    asked: float | None = None
    while True:
        done, _ = await asyncio.wait({running}, timeout=0.2)
        if done:
            return False
        if asked is None and stop():
            asked = time.monotonic()
        if asked is not None and time.monotonic() - asked >= STOP_GRACE_S:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            return True


class RunSpec(BaseModel):
    """A run as the runtime sees it: where, how long, who, and what to store in manifests."""

    run_dir: Path
    ticks: int = Field(ge=1)
    seed: int = 0
    agents: int = Field(ge=1)
    config: dict[str, Any] = Field(default_factory=dict, description="Scenario, no secrets.")
    encounters: bool = True
    max_pairs_per_place: int = 50
    tick_minutes: int = Field(30, ge=1, description="Simulated minutes per tick (cadence).")
    budget_tokens: int | None = Field(
        default=None, ge=1, description="LLM tokens of the whole run, resumes too (llm.budget)."
    )


async def run_groups(
    groups: Sequence[GroupHandle],
    spec: RunSpec,
    cluster: ClusterConfig,
    metrics: RunMetrics | None = None,
    on_progress: Callable[[Any], Any] | None = None,
    on_tick: Callable[[Any], Any] | None = None,
    resume: bool = False,
    stop: Callable[[], bool] | None = None,
    on_checkpoint: Callable[[int, dict[str, float]], Any] | None = None,
) -> tuple[RunResult, Any]:
    """Set up (or restore the last complete checkpoint of) the groups, run the coordinator
    loop of `societas.cluster.loop.coordinator` to the end, checkpointing every K ticks (default
    every 6 simulated hours) and after the last tick; when `stop()` turns true, checkpoint
    after the current tick and raise `RunInterrupted`. `on_checkpoint(tick, totals)` follows
    every complete checkpoint (run.json updates)."""
    from societas.cluster.loop.coordinator import Coordinator, call_back

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
        watch.count(report)  # per-task LLM figures, before a checkpoint records them
        if metrics is not None:
            metrics.tick_done(report.tick, report.seconds)
        if on_tick is not None:
            out = on_tick(report)
            if asyncio.iscoroutine(out):
                await out
        await checkpoint_policy(report.tick)
        await watch(report)  # an LLM stop: checkpoint, then raise (societas.cluster.loop.llm_stop)

    every = checkpoint_ticks(cluster, spec.tick_minutes)

    async def checkpoint_policy(tick: int) -> None:
        done = tick + 1
        stopping = stop is not None and stop()
        due = every and (done % every == 0 or (cluster.checkpoint_at_end and done == spec.ticks))
        if due or (stopping and done < spec.ticks):
            await take_checkpoint(tick, handles)
        if stopping and done < spec.ticks:
            raise RunInterrupted(done, checkpoints[-1] if checkpoints else None)

    async def take_checkpoint(tick: int, _groups: Sequence[GroupHandle]) -> None:
        nxt = tick + 1
        if checkpoints and checkpoints[-1] == nxt:
            return  # already taken at this tick (a stop and the cadence agree)
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
            llm_tasks=watch.tasks,
            llm_models=watch.models,
        )
        ckpt.write_checkpoint_manifest(spec.run_dir, manifest, holder["c"].pending)
        checkpoints.append(nxt)
        ckpt.prune(spec.run_dir, cluster.keep_checkpoints)
        if on_checkpoint is not None:
            out = on_checkpoint(nxt, dict(totals))
            if asyncio.iscoroutine(out):
                await out

    coordinator = Coordinator(
        handles,
        seed=spec.seed,
        encounters_enabled=spec.encounters,
        max_pairs_per_place=spec.max_pairs_per_place,
        on_progress=on_progress,
        on_tick=tick_done,
        checkpoint_every=None,  # checkpoint_policy decides (cadence, end, stop)
        on_checkpoint=None,
    )
    holder["c"] = coordinator
    watch = LLMStopWatch(spec.budget_tokens, spec.ticks, take_checkpoint, handles)
    if not every:  # no checkpoint ever drops the replay log: finished ticks go to disk
        for h in handles:
            if isinstance(h, ResilientGroup):
                h.spill_to(spec.run_dir / "replay" / f"group-{h.group_id:04d}")
    started = time.perf_counter()
    finished: list[int] = []  # ticks done, for a stop that cuts the next one short
    on_tick_done = coordinator.on_tick

    async def count_done(report: Any) -> None:
        finished.append(report.tick)
        await call_back(on_tick_done, report)

    coordinator.on_tick = count_done
    polling: asyncio.Future[None] | None = None  # calls in flight of groups elsewhere
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
            watch.carry(manifest.llm_tasks, manifest.llm_models)  # run.json covers every invocation
            watch.spent = int(manifest.totals.get("llm_tokens", 0))  # the budget bounds the run
            digests.extend(manifest.digests)
            coordinator.pending = {h.group_id: inbox.get(h.group_id, []) for h in handles}
            start = last
        running = asyncio.ensure_future(coordinator.run(spec.ticks - start, start_tick=start))
        if any(not isinstance(h, InProcessGroup) for h in handles):  # groups elsewhere
            polling = asyncio.ensure_future(calls_in_flight.poll(handles))
        if stop is None:
            summary = await running
        elif await _cut_short(running, stop):
            for h in handles:  # closing must not finish the tick that was cut short
                if hasattr(h, "abandon_tick"):
                    h.abandon_tick()
            done = finished[-1] + 1 if finished else start
            last = checkpoints[-1] if checkpoints else (start if resume else None)
            raise RunInterrupted(
                done,
                last,
                totals=totals,
                llm_tasks=watch.tasks,
                llm_models=watch.models,
            )
        else:
            summary = running.result()
    finally:
        if polling is not None:
            polling.cancel()
            await asyncio.gather(polling, return_exceptions=True)
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
        llm_tasks=watch.tasks,
        llm_models=watch.models,
    )
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    ckpt.write_json_atomic(spec.run_dir / "ray_run.json", result.model_dump(mode="json"))
    return result, summary
