"""Experiments: a scenario run in one process with checkpoints (the same tick loop and
checkpoint format as on Ray), its arms run one after another into OUT/<arm>, and the
run manifest with LLM call counts. `societas run` hands a scenario with `arms:` to
`run_arms`; `branch`, `interview` and `inspect` build on the checkpoints written here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from societas.agents.experiments.checks import arm_scenario
from societas.agents.experiments.custom import BlockImportError, import_blocks
from societas.agents.runtime.engine import GroupEngine
from societas.agents.scenario import ScenarioConfig, ScenarioConfigError, load_scenario
from societas.cluster.cluster_config import cluster_config_of
from societas.cluster.loop.groups import InProcessGroup
from societas.cluster.loop.local import partition, write_run_manifest
from societas.cluster.loop.run import RunSpec, run_groups
from societas.memory.embedding import Embedder, build_embedder

EngineHook = Callable[[list[GroupEngine]], Any]


def preflight_code(cfg: ScenarioConfig) -> None:
    """Import the scenario's blocks once before anything starts (errors name blocks.i.path)."""
    try:
        import_blocks(cfg)
    except BlockImportError as err:
        raise ScenarioConfigError([("blocks", str(err))], cfg.name) from None


def llm_calls(engines: Sequence[GroupEngine]) -> dict[str, int]:
    """Calls answered so far by every engine's gateway: requests (model or rules) + hits."""
    requests = hits = 0
    for engine in engines:
        for usage in engine.llm.accounting.models.values():
            requests += usage.requests
            hits += usage.cache_hits
    return {"requests": requests, "cache_hits": hits, "calls": requests + hits}


def llm_usage(engines: Sequence[GroupEngine]) -> dict[str, dict[str, float]]:
    """Per-model usage summed over engines (run.json's `llm`)."""
    out: dict[str, dict[str, float]] = {}
    for engine in engines:
        for model, usage in engine.llm.accounting.snapshot()["models"].items():
            acc = out.setdefault(model, {})
            for key, value in usage.items():
                if isinstance(value, int | float):
                    acc[key] = acc.get(key, 0) + value
    return out


def run_spec(cfg: ScenarioConfig, run_dir: Path, groups: int) -> RunSpec:
    """The run loop's view of a scenario (what checkpoints record)."""
    return RunSpec(
        run_dir=run_dir,
        ticks=cfg.ticks,
        seed=cfg.seed,
        agents=cfg.agents.count,
        config={"scenario": cfg.model_dump(mode="json"), "groups": groups},
        encounters=cfg.social.encounters,
        max_pairs_per_place=cfg.social.max_pairs_per_place,
        tick_minutes=cfg.tick_minutes,
    )


async def run_checkpointed(
    cfg: ScenarioConfig,
    out: str | Path,
    *,
    groups: int | None = None,
    embedder: Embedder | None = None,
    on_progress: Callable[[Any], Any] | None = None,
    on_tick: Callable[[Any], Any] | None = None,
    resume: bool = False,
    make_engines: Callable[[list[list[int]]], list[GroupEngine]] | None = None,
    extra: dict[str, Any] | None = None,
) -> tuple[Any, list[GroupEngine]]:
    """Run `cfg` in process with checkpoints (the scenario's `cluster:` cadence); writes
    config.json and run.json; returns (run summary, engines) — engines are closed."""
    run_dir = Path(out)
    await asyncio.to_thread(run_dir.mkdir, parents=True, exist_ok=True)
    ids = partition(cfg.agents.count, groups or cfg.groups)
    if make_engines is None:
        emb = embedder or build_embedder(cfg.memory.embedding)
        engines = [GroupEngine(cfg, g, part, run_dir, embedder=emb) for g, part in enumerate(ids)]
    else:
        engines = make_engines(ids)
    cluster = cluster_config_of(cfg, None)
    result, summary = await run_groups(
        [InProcessGroup(e) for e in engines],
        run_spec(cfg, run_dir, len(ids)),
        cluster,
        on_progress=on_progress,
        on_tick=on_tick,
        resume=resume,
    )
    info = {
        "mode": "local",
        "llm": llm_usage(engines),
        "checkpoints": result.checkpoints,
        "start_tick": result.start_tick,
        "digest": result.digest,
        **(extra or {}),
    }
    await asyncio.to_thread(write_run_manifest, run_dir, cfg, summary, info)
    return summary, engines


def arm_runs(cfg: ScenarioConfig | str | Path) -> dict[str, ScenarioConfig]:
    """The scenario of every arm (same seed and population), code checked before any runs."""
    cfg = load_scenario(cfg)
    if not cfg.arms:
        raise ScenarioConfigError([("arms", "the scenario declares no arms")], cfg.name)
    scenarios = {arm.name: arm_scenario(cfg, arm.name) for arm in cfg.arms}
    for scenario in scenarios.values():
        preflight_code(scenario)
    return scenarios


def mark_arm(run_dir: Path, experiment: str, arm: str) -> None:
    """Add the experiment and arm names to an arm's run.json."""
    from societas.cluster.checkpoint import write_json_atomic
    from societas.cluster.observe.run_folder import RUN_FILE, read_record

    record = read_record(run_dir)
    if record is not None:
        write_json_atomic(run_dir / RUN_FILE, {**record, "experiment": experiment, "arm": arm})


def run_arms(
    cfg: ScenarioConfig | str | Path,
    out: str | Path,
    *,
    local: bool = True,
    address: str | None = None,
    overwrite: bool = False,
    on_progress: Callable[[str], Callable[[Any], Any] | None] | None = None,
) -> dict[str, Any]:
    """Every arm into OUT/<arm> through the normal launch (preflight, run.json, checkpoints);
    returns the run summaries by arm."""
    from societas.cluster.launch import LaunchOptions, launch

    base = load_scenario(cfg)
    summaries = {}
    for name, scenario in arm_runs(base).items():
        opts = LaunchOptions(
            out=str(Path(out) / name), local=local, address=address, overwrite=overwrite
        )
        progress = on_progress(name) if on_progress is not None else None
        summaries[name], run_dir = launch(scenario, opts, on_progress=progress)
        mark_arm(run_dir, base.name, name)
    return summaries
