"""One way to start, resume and stop a run from the CLI, locally or on Ray: preflight, the
output folder's rules, the run record, Ctrl-C/SIGTERM handling and cleanup of what it started.

`run`, `resume` and the job that `submit` starts all come through `launch()`, so each of
them checkpoints by default, writes `config.json`/`run.json` at start and at every
checkpoint, marks an interrupted run `interrupted` and stops the Ray it started.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from societas.cluster.cleanup import cleanup_run, driver_alive
from societas.cluster.cluster_config import ClusterConfig, cluster_config_of
from societas.cluster.interrupts import StopFlag
from societas.cluster.loop.run import RunInterrupted
from societas.cluster.observe.run_folder import RUN_ENV, RunFolder, clear_run, holds_run, sim_time
from societas.cluster.preflight import RAY_PROBE_TIMEOUT_S, PreflightError, Problem, preflight
from societas.cluster.remote_out import RemoteSync, is_url, staging_dir


class LaunchOptions(BaseModel):
    """What the CLI asked for, beyond the scenario itself."""

    out: str
    local: bool = False
    address: str | None = None
    groups: int | None = None
    overwrite: bool = False
    resume: bool = False
    checkpoint_every: int | None = Field(None, ge=0)
    keep_checkpoints: int | None = Field(None, ge=0)
    attach_timeout_s: float | None = Field(None, gt=0)
    budget_tokens: int | None = Field(None, ge=1)
    check_services: bool = True


class RunStopped(Exception):
    """The run stopped before its end (interrupt or LLM stop), checkpointed; resumable."""

    def __init__(self, message: str, run_dir: str, checkpoint: int | None) -> None:
        super().__init__(message)
        self.run_dir = run_dir
        self.checkpoint = checkpoint


def cluster_overrides(opts: LaunchOptions) -> dict[str, Any]:
    """The `cluster:` fields the command line sets."""
    return {
        "checkpoint_every": opts.checkpoint_every,
        "keep_checkpoints": opts.keep_checkpoints,
        "attach_timeout_s": opts.attach_timeout_s,
    }


def resolve(scenario: Any, opts: LaunchOptions, stored: dict[str, Any] | None = None) -> Any:
    """(scenario with budget override, ClusterConfig) after config+CLI+env resolution."""
    if opts.budget_tokens is not None and hasattr(scenario.llm, "budget"):
        llm = scenario.llm.model_copy(update={"budget": opts.budget_tokens})
        scenario = scenario.model_copy(update={"llm": llm})
    cluster = cluster_config_of(scenario, stored, cli=cluster_overrides(opts))
    return scenario, cluster


def check(scenario: Any, opts: LaunchOptions, run_dir: Path | str | None) -> None:
    """Preflight; raise PreflightError with every problem found."""
    address = None if opts.local else opts.address
    problems = preflight(
        scenario,
        run_dir=run_dir,
        overwrite=opts.overwrite,
        resume=opts.resume,
        address=address,
        services=opts.check_services,
        ray_timeout_s=opts.attach_timeout_s or RAY_PROBE_TIMEOUT_S,
    )
    if problems:
        raise PreflightError(problems)


def _prepare_folder(run_dir: Path, opts: LaunchOptions) -> None:
    """End what an earlier, killed run left there; clear it when overwriting."""
    if not run_dir.is_dir():
        return
    pid = driver_alive(run_dir)
    if pid is not None:
        raise PreflightError(
            [
                Problem(
                    setting="--out",
                    value=str(run_dir),
                    message=f"a run is still running there (pid {pid})",
                    hint=f"stop it first: societas stop {run_dir}",
                )
            ]
        )
    cleanup_run(run_dir)
    if opts.overwrite and holds_run(run_dir):
        clear_run(run_dir)


def launch(
    scenario: Any,
    opts: LaunchOptions,
    *,
    on_progress: Callable[[Any], Any] | None = None,
    stored_cluster: dict[str, Any] | None = None,
    stored_groups: int | None = None,
) -> tuple[Any, Path]:
    """Run (or resume) a validated scenario; returns (summary, local run folder). Raises
    PreflightError before anything starts, RunStopped when interrupted (checkpointed)."""
    scenario, cluster = resolve(scenario, opts, stored_cluster)
    remote = is_url(opts.out)
    run_dir = staging_dir(opts.out) if remote else Path(opts.out)
    check(scenario, opts, opts.out)
    sync = RemoteSync(opts.out, run_dir) if remote else None
    if sync is not None:
        if opts.overwrite and not opts.resume:
            sync.clear()
        if run_dir.exists() and not opts.resume:
            clear_run(run_dir)
        if opts.resume:
            sync.pull()
    _prepare_folder(run_dir, opts)
    previous_id = os.environ.get(RUN_ENV)
    os.environ[RUN_ENV] = uuid.uuid4().hex[:16]  # Ray and its workers inherit it (cleanup)
    try:
        return _launch(scenario, opts, cluster, run_dir, sync, on_progress, stored_groups)
    finally:  # an in-process caller (tests, notebooks) must not tag what it starts later
        if previous_id is None:
            os.environ.pop(RUN_ENV, None)
        else:
            os.environ[RUN_ENV] = previous_id


def _launch(
    scenario: Any,
    opts: LaunchOptions,
    cluster: ClusterConfig,
    run_dir: Path,
    sync: RemoteSync | None,
    on_progress: Callable[[Any], Any] | None,
    stored_groups: int | None,
) -> tuple[Any, Path]:
    """The run itself once its folder is ready: record, stop handler, checkpoints, finish."""
    folder = RunFolder.start(
        run_dir,
        scenario,
        cluster.model_dump(mode="json"),
        "local" if opts.local else "ray",
        resume=opts.resume,
    )
    if sync is not None:
        sync.push()

    def checkpointed(tick: int, totals: dict[str, float]) -> None:
        folder.checkpointed(tick, totals)
        if sync is not None:
            sync.push()

    def progress(p: Any) -> None:
        folder.progress(p, sim_time(p.tick + 1, scenario))
        if on_progress is not None:
            on_progress(p)

    stop = StopFlag()
    common: dict[str, Any] = {
        "on_progress": progress,
        "cluster": cluster,
        "resume": opts.resume,
        "stop": stop,
        "on_checkpoint": checkpointed,
    }
    groups = opts.groups or stored_groups or scenario.groups
    try:
        stop.install()
        summary = _execute(scenario, run_dir, groups, opts, common, folder)
    except RunInterrupted as err:
        folder.finish("interrupted", error=f"stopped by {stop.signal_name or 'request'}")
        raise RunStopped(str(err), opts.out, err.checkpoint) from None
    except KeyboardInterrupt:
        folder.finish("interrupted", error="aborted (second Ctrl-C), no final checkpoint")
        raise
    except Exception as err:
        from societas.agents.llm.errors import LLMRunStop

        if isinstance(err, LLMRunStop):
            folder.finish("interrupted", error=str(err))
            raise RunStopped(str(err), opts.out, getattr(err, "checkpoint_tick", None)) from None
        folder.finish("failed", error=f"{type(err).__name__}: {err}")
        raise
    finally:
        stop.restore()
        if sync is not None:
            sync.push()
    return summary, run_dir


def _execute(
    scenario: Any,
    run_dir: Path,
    groups: int,
    opts: LaunchOptions,
    common: dict[str, Any],
    folder: RunFolder,
) -> Any:
    """Hand the run to the local or the Ray runtime."""
    from societas.cluster.backends import run_scenario

    if opts.local:
        return run_scenario(scenario, run_dir, backend="local", groups=groups, **common)
    return run_scenario(
        scenario,
        run_dir,
        backend="ray",
        groups=groups,
        address=opts.address,
        on_ray_started=folder.record_processes,
        **common,
    )


def stored_run(run_dir: Path) -> tuple[Any, ClusterConfig | dict[str, Any] | None, int | None]:
    """(scenario, cluster, groups) stored in a run's last complete checkpoint."""
    from societas.agents.scenario import load_scenario
    from societas.cluster.ray.runtime import resume_config

    conf = resume_config(run_dir)
    return load_scenario(conf["scenario"]), conf.get("cluster"), conf.get("groups")
