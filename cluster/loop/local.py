"""`run_local`: a whole scenario in one process, no Ray: G in-process GroupEngines driven by
the same run loop (coordinator, checkpoints, resume, stop) the Ray runtime uses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from societas.agents.runtime.engine import Concurrency, GroupEngine
from societas.agents.scenario import ScenarioConfig, load_scenario
from societas.cluster.checkpoint import last_complete
from societas.cluster.loop.coordinator import Progress, RunSummary, TickReport
from societas.cluster.loop.engines import EngineFactory
from societas.cluster.loop.run import RunInterrupted
from societas.memory.embedding import Embedder, build_embedder


def partition(agent_count: int, groups: int) -> list[list[int]]:
    """Contiguous, near-equal blocks of agent ids, one per group."""
    groups = max(1, min(groups, agent_count))
    base, extra = divmod(agent_count, groups)
    out, start = [], 0
    for g in range(groups):
        size = base + (1 if g < extra else 0)
        out.append(list(range(start, start + size)))
        start += size
    return out


def write_run_manifest(
    out: Path, scenario: ScenarioConfig, summary: RunSummary, extra: dict[str, Any] | None = None
) -> None:
    """The end of a run: `config.json` (the resolved scenario, unless the start wrote it) and
    `run.json` (the record of the start merged with totals, wall times, status completed)."""
    from societas.cluster.checkpoint import write_json_atomic
    from societas.cluster.observe.run_folder import (
        CONFIG_FILE,
        RUN_FILE,
        RUN_SCHEMA_VERSION,
        now,
        read_record,
        versions,
    )

    out.mkdir(parents=True, exist_ok=True)
    if not (out / CONFIG_FILE).exists():
        config = {**scenario.model_dump(mode="json"), "versions": versions()}
        write_json_atomic(out / CONFIG_FILE, config)
    data = {
        **(read_record(out) or {}),
        "scenario": scenario.name,
        **summary.model_dump(mode="json"),
        **(extra or {}),
        "schema_version": RUN_SCHEMA_VERSION,
        "status": "completed",
        "ticks": scenario.ticks,
        "ticks_done": scenario.ticks,
        "ended_at": now(),
        "error": None,
    }
    from societas.cluster.observe.run_totals import whole_run

    data = whole_run(read_record(out) or {}, data, scenario.ticks)  # counts over resumes
    write_json_atomic(out / RUN_FILE, json.loads(json.dumps(data, default=str)))


def run_spec_of(scenario: ScenarioConfig, run_dir: Path, groups: int, cluster: Any) -> Any:
    """The run loop's view of a scenario (what checkpoints record, to resume from)."""
    from societas.cluster.loop.run import RunSpec

    return RunSpec(
        run_dir=run_dir,
        ticks=scenario.ticks,
        seed=scenario.seed,
        agents=scenario.agents.count,
        config={
            "scenario": scenario.model_dump(mode="json"),
            "cluster": cluster.model_dump(mode="json"),
            "groups": groups,
        },
        encounters=scenario.social.encounters,
        max_pairs_per_place=scenario.social.max_pairs_per_place,
        tick_minutes=scenario.tick_minutes,
        budget_tokens=getattr(scenario.llm, "budget", None),
    )


async def run_local_async(
    config: ScenarioConfig | dict[str, Any] | str | Path,
    out: str | Path,
    groups: int | None = None,
    *,
    agents: int | None = None,
    ticks: int | None = None,
    seed: int | None = None,
    on_progress: Callable[[Progress], Any] | None = None,
    on_tick: Callable[[TickReport], Any] | None = None,
    embedder: Embedder | None = None,
    concurrency: Concurrency = "gather",
    cluster: Any = None,
    resume: bool = False,
    stop: Callable[[], bool] | None = None,
    on_checkpoint: Callable[[int, dict[str, float]], Any] | None = None,
) -> RunSummary:
    """Build in-process engines and run them through the same loop as Ray (checkpoints by
    default, resume from the last complete one, stop on request); returns the summary. A
    stop that cut a tick short ends with a checkpoint of the last finished tick (replayed
    from the LLM response cache, `catch_up`) where it can."""
    from societas.cluster.cluster_config import cluster_config_of

    scenario = load_scenario(config).with_overrides(
        agents=agents, ticks=ticks, seed=seed, groups=groups
    )
    cfg = cluster_config_of(scenario, cluster)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ids = partition(scenario.agents.count, scenario.groups)
    embedder = embedder or build_embedder(scenario.memory.embedding)
    engines = EngineFactory(
        scenario, ids, out, cfg.agents_in_flight, embedder=embedder, concurrency=concurrency
    ).build_all()
    try:
        return await run_engines(
            scenario,
            out,
            engines,
            cfg,
            on_progress=on_progress,
            on_tick=on_tick,
            resume=resume,
            stop=stop,
            on_checkpoint=on_checkpoint,
        )
    except RunInterrupted as stopped:  # a cut tick: checkpoint the last finished one
        from societas.cluster.loop.catch_up import checkpoint_last_finished

        raise await checkpoint_last_finished(
            scenario,
            out,
            cfg,
            stopped,
            groups=len(ids),
            embedder=embedder,
            on_checkpoint=on_checkpoint,
        ) from None


async def run_engines(
    scenario: ScenarioConfig,
    out: Path,
    engines: list[GroupEngine],
    cluster: Any,
    *,
    on_progress: Callable[[Progress], Any] | None = None,
    on_tick: Callable[[TickReport], Any] | None = None,
    resume: bool = False,
    stop: Callable[[], bool] | None = None,
    on_checkpoint: Callable[[int, dict[str, float]], Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> RunSummary:
    """Run built in-process engines through the run loop and write `run.json` (with `extra`
    fields): the core of every whole run in this process (the CLI's --local, Society, arms,
    branches)."""
    from societas.cluster.loop.groups import InProcessGroup
    from societas.cluster.loop.run import run_groups

    if resume:
        last = last_complete(out)
        if last is not None:
            await asyncio.to_thread(drop_results_from, out, last)
    result, summary = await run_groups(
        [InProcessGroup(e) for e in engines],
        run_spec_of(scenario, out, len(engines), cluster),
        cluster,
        on_progress=on_progress,
        on_tick=on_tick,
        resume=resume,
        stop=stop,
        on_checkpoint=on_checkpoint,
    )
    summary.checkpoints = list(result.checkpoints)
    info = {
        "llm": result.llm_models,  # per model, over every invocation
        "mode": "local",
        "digest": result.digest,
        "totals": result.totals,
        "checkpoints": result.checkpoints,
        "start_tick": result.start_tick,
        "llm_tasks": result.llm_tasks,  # calls, tokens and json outcomes per task
        **(extra or {}),
    }
    await asyncio.to_thread(write_run_manifest, out, scenario, summary, info)
    return summary


def drop_results_from(run_dir: Path, tick: int) -> int:
    """Delete results files whose first tick is >= `tick` (written after a checkpoint by a
    run that stopped; the resumed run writes them again). Returns how many were removed."""
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


def run_local(
    config: ScenarioConfig | dict[str, Any] | str | Path,
    out: str | Path,
    groups: int | None = None,
    **kwargs: Any,
) -> RunSummary:
    """Synchronous wrapper of `run_local_async` (its own event loop)."""
    return asyncio.run(run_local_async(config, out, groups, **kwargs))
