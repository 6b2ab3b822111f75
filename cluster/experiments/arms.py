"""Experiments: a scenario run in one process with checkpoints (the same tick loop, run
folder and checkpoint format as every whole run), its arms run one after another into
OUT/<arm>, and LLM call counts. `societas run` hands a scenario with `arms:` to
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
from societas.cluster.loop.engines import EngineFactory
from societas.cluster.loop.local import partition, run_engines
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
    """Run `cfg` in process with checkpoints (the scenario's `cluster:` cadence), on engines
    of `make_engines` (a branch's) or of the scenario; writes config.json and run.json;
    returns (run summary, engines) — engines are closed."""
    run_dir = Path(out)
    await asyncio.to_thread(run_dir.mkdir, parents=True, exist_ok=True)
    ids = partition(cfg.agents.count, groups or cfg.groups)
    if make_engines is None:
        emb = embedder or build_embedder(cfg.memory.embedding)
        engines = EngineFactory(cfg, ids, run_dir, embedder=emb).build_all()
    else:
        engines = make_engines(ids)
    summary = await run_engines(
        cfg,
        run_dir,
        engines,
        cluster_config_of(cfg, None),
        on_progress=on_progress,
        on_tick=on_tick,
        resume=resume,
        extra=extra,
    )
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


def mark_arm(run_dir: Path | str, experiment: str, arm: str) -> None:
    """Add the experiment and arm names to an arm's run.json, in a folder or at a URL (there
    and in the run's local staging copy)."""
    from societas.cluster.observe.run_folder import RUN_FILE, read_record
    from societas.cluster.remote_out import is_url, read_record_at, staging_dir, write_json_at

    names = {"experiment": experiment, "arm": arm}
    if is_url(run_dir):
        url = str(run_dir)
        remote = read_record_at(url)
        if remote is not None:
            write_json_at(url, RUN_FILE, {**remote, **names})
        run_dir = staging_dir(url)
    record = read_record(Path(run_dir))
    if record is not None:
        write_json_at(run_dir, RUN_FILE, {**record, **names})


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
