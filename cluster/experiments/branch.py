"""`societas branch`: a counterfactual from a run's shared past.

The branch starts from the parent's last checkpoint at or before DAY:HOUR, re-simulates the
ticks up to that point with the parent's scenario and the parent's LLM responses (the cache
in replay mode: a miss is an error, never a live call; the rules policy answers the same as
before), then switches to the patched scenario and continues live. Result rows before the
branch point equal the parent's (rows before the checkpoint are copied, the rest replayed).
Blocks are imported from the scenario file the patch names, never from the run folder.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from societas.agents.experiments.branching import apply_scenario
from societas.agents.experiments.checks import patched, tick_at
from societas.agents.experiments.custom import run_llm_config
from societas.agents.experiments.schema import ExperimentPatch
from societas.agents.llm import LLMGateway
from societas.agents.runtime.engine import GroupEngine
from societas.agents.runtime.results import SCHEMAS, read_table
from societas.agents.scenario import ScenarioConfig, ScenarioConfigError, load_scenario
from societas.cluster import checkpoint as ckpt
from societas.cluster.experiments.arms import llm_calls, preflight_code, run_checkpointed
from societas.cluster.loop.engines import EngineFactory
from societas.cluster.observe.run_folder import parent_of_runs
from societas.cluster.preflight import check_llm
from societas.memory.embedding import build_embedder


class BranchError(ValueError):
    """A branch that cannot be made; the message names the option and value."""


def parse_at(text: str) -> tuple[int, float]:
    """'DAY:HOUR' or 'DAY:HH:MM' -> (day, hour)."""
    m = re.fullmatch(r"(\d+):(\d{1,2})(?::(\d{2}))?", text.strip())
    if not m:
        raise BranchError(f"--at: expected DAY:HOUR such as 1:08, got {text!r}")
    day, hour, minute = int(m[1]), int(m[2]), int(m[3] or 0)
    if hour > 23 or minute > 59:
        raise BranchError(f"--at: {text!r} is not a time of day")
    return day, hour + minute / 60


def run_scenario_of(run_dir: Path) -> ScenarioConfig:
    """The scenario a run recorded in config.json (validated; its code is not imported)."""
    path = run_dir / "config.json"
    if not path.is_file():
        raise BranchError(
            parent_of_runs(run_dir) or f"RUN: {str(run_dir)!r} is not a run folder (no config.json)"
        )
    data = json.loads(path.read_text())
    if isinstance(data.get("scenario"), dict):
        data = data["scenario"]
    fields = set(ScenarioConfig.model_fields) - {"arms"}  # config.json also records versions
    return load_scenario({k: v for k, v in data.items() if k in fields})


def load_patch(path: Path) -> ExperimentPatch:
    """A branch patch YAML (safe loader), validated."""
    from pydantic import ValidationError

    from societas.agents.safe_yaml import UnsafeYAMLError, load_yaml_file

    try:
        raw = load_yaml_file(path) or {}
        return ExperimentPatch.model_validate(raw)
    except UnsafeYAMLError as err:
        raise BranchError(f"--patch: {err}") from None
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in err.errors()
        )
        raise BranchError(f"--patch {path}: {problems}") from None


def _with_user_code(cfg: ScenarioConfig, user: ScenarioConfig | None) -> ScenarioConfig:
    """`cfg` whose blocks come from the user's scenario file (same blocks, their folders)."""
    if not cfg.blocks:
        return cfg
    if user is None:
        raise BranchError(
            f"--patch: the run uses custom blocks {[b.path for b in cfg.blocks]}; name the "
            "experiment YAML that declares them with `scenario:` in the patch (code is never "
            "imported from a run folder)"
        )
    if [b.path for b in user.blocks] != [b.path for b in cfg.blocks]:
        raise BranchError(
            f"--patch scenario: declares blocks {[b.path for b in user.blocks]}, the run used "
            f"{[b.path for b in cfg.blocks]}"
        )
    return cfg.model_copy(update={"code_dirs": list(user.code_dirs)})


def _copy_results_before(parent: Path, out: Path, tick: int) -> int:
    """Parent rows with tick < `tick` into OUT/results (one file per table); rows copied."""
    copied = 0
    if tick <= 0:
        return 0
    for table in SCHEMAS:
        data = read_table(parent, table)
        data = data.filter(pc.less(data["tick"], tick))
        if data.num_rows == 0:
            continue
        folder = out / "results" / table / "group-0000"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(data, folder / f"ticks-000000-{tick - 1:06d}.parquet", compression="zstd")
        copied += data.num_rows
    return copied


def prepare(parent: Path, at: str, patch_path: Path, out: Path) -> dict[str, Any]:
    """Check everything and lay out OUT (checkpoint, cache, past rows); nothing runs yet."""
    parent_cfg = run_scenario_of(parent)
    day, hour = parse_at(at)
    tick = tick_at(parent_cfg, day, hour)
    if not 0 <= tick < parent_cfg.ticks:
        raise BranchError(
            f"--at: {at} is tick {tick}, outside the run's ticks 0..{parent_cfg.ticks - 1}"
        )
    ticks = ckpt.complete_ticks(parent)
    if not ticks:
        raise BranchError(f"RUN: {str(parent)!r} has no checkpoint; a branch starts from one")
    start = max((t for t in ticks if t <= tick), default=None)
    if start is None:
        raise BranchError(
            f"--at: {at} (tick {tick}) is before the run's first checkpoint (ticks {ticks})"
        )
    patch = load_patch(patch_path)
    late = [(i, iv.tick) for i, iv in enumerate(patch.interventions) if iv.tick < tick]
    if late:
        raise BranchError(
            f"--patch: interventions.{late[0][0]}.tick {late[0][1]} is before the branch "
            f"point {at} (tick {tick}); a branch cannot change its shared past"
        )
    user = None
    if patch.scenario is not None:
        user = load_scenario(patch_path.parent / patch.scenario)
    past = _with_user_code(parent_cfg, user)
    try:
        branch = patched(past, patch.overrides, patch.interventions, name=f"{past.name}-branch")
    except ScenarioConfigError as err:
        raise BranchError(f"--patch: {err}") from None
    branch = branch.model_copy(update={"code_dirs": list(past.code_dirs)})
    preflight_code(branch)
    if problems := check_llm(branch.llm):  # the live part's models, before anything is copied
        raise BranchError("\n".join(p.line() for p in problems))
    if out.exists() and any(out.iterdir()):
        raise BranchError(f"--out: {str(out)!r} is not empty; choose a new folder")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ckpt.tick_dir(parent, start), ckpt.tick_dir(out, start))
    if (parent / "llm-cache").is_dir():
        shutil.copytree(parent / "llm-cache", out / "llm-cache")
    copied = _copy_results_before(parent, out, start)
    manifest, _ = ckpt.load_checkpoint(parent, start)
    return {
        "past": past,
        "branch": branch,
        "tick": tick,
        "start": start,
        "groups": len(manifest.groups),
        "rows_copied": copied,
        "origin": {"parent": str(parent), "at": at, "tick": tick, "from_checkpoint": start},
    }


async def run_branch_async(
    parent: Path, at: str, patch_path: Path, out: Path, on_progress: Any = None
) -> dict[str, Any]:
    """Prepare, replay the shared past, switch to the patch, continue; returns run.json's
    branch fields (llm_calls_replayed, llm_calls_live, origin)."""
    out = Path(out)
    plan = await asyncio.to_thread(prepare, Path(parent), at, Path(patch_path), out)
    past: ScenarioConfig = plan["past"]
    branch: ScenarioConfig = plan["branch"]
    tick: int = plan["tick"]
    embedder = build_embedder(past.memory.embedding)
    engines: list[GroupEngine] = []
    replayed: dict[str, int] = {"requests": 0, "cache_hits": 0, "calls": 0}
    at_checkpoint = tick == plan["start"]  # nothing to replay: live from the first tick

    def make(ids: list[list[int]]) -> list[GroupEngine]:
        scenario = branch if at_checkpoint else past

        def gateway(_group: int) -> LLMGateway:
            llm = run_llm_config(scenario, out)
            if not at_checkpoint and llm.cache.mode != "off":  # the past: parent's answers only
                replay = llm.cache.model_copy(update={"mode": "replay"})
                llm = llm.model_copy(update={"cache": replay})
            return LLMGateway(llm)

        factory = EngineFactory(scenario, ids, out, embedder=embedder, gateway=gateway)
        engines.extend(factory.build_all())
        return engines

    def on_tick(report: Any) -> None:
        if report.tick == tick - 1 and not at_checkpoint:  # the branch point: go live
            replayed.update(llm_calls(engines))
            for engine in engines:
                apply_scenario(engine, branch)
                engine.llm.config = run_llm_config(branch, out)

    info: dict[str, Any] = {"branch": plan["origin"]}
    try:
        await run_checkpointed(
            branch,
            out,
            groups=plan["groups"],
            on_progress=on_progress,
            on_tick=on_tick,
            resume=True,
            make_engines=make,
            extra=info,
        )
    finally:
        for engine in engines:
            await engine.llm.aclose()
    total = llm_calls(engines)
    info["llm_calls_replayed"] = replayed["calls"]
    info["llm_calls_live"] = total["calls"] - replayed["calls"]
    info["llm_cache_hits_replayed"] = replayed["cache_hits"]
    info["rows_copied"] = plan["rows_copied"]
    await asyncio.to_thread(_update_run_json, out, info)
    return info


def _update_run_json(out: Path, fields: dict[str, Any]) -> None:
    path = out / "run.json"
    data = json.loads(path.read_text()) if path.is_file() else {}
    data.update(fields)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")


def run_branch(parent: Path, at: str, patch_path: Path, out: Path, **kw: Any) -> dict[str, Any]:
    """Synchronous `run_branch_async`."""
    return asyncio.run(run_branch_async(parent, at, patch_path, out, **kw))
