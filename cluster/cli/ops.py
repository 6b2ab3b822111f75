"""`societas submit|status|logs|stop|resume|bench`: cluster operations (Ray Jobs API, resume).

`societas run` itself lives in `cli.sim` (it hands over to `ray.runtime.run_on_ray` without
`--local`); these commands add what an operator needs around it.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
from pathlib import Path
from typing import Any

import typer

from societas.cluster.checkpoint import last_complete
from societas.cluster.cli.common import EXIT_INTERRUPTED, user_errors
from societas.cluster.observe.run_folder import OutDirError

ADDRESS_HELP = "Ray dashboard URL (default: $RAY_JOBS_ADDRESS or http://127.0.0.1:8265)."


def _fail(err: Exception) -> None:
    typer.echo(f"error: {err}", err=True)
    raise typer.Exit(2) from None


def submit(
    config: Path = typer.Argument(..., help="Scenario YAML."),  # noqa: B008
    address: str | None = typer.Option(None, help=ADDRESS_HELP),
    out: str | None = typer.Option(
        None, help="Where results go: a shared absolute path or an object-store URL (s3://)."
    ),
    agents: int | None = typer.Option(None, min=2, help="Override agents.count."),
    ticks: int | None = typer.Option(None, min=1, help="Override ticks."),
    groups: int | None = typer.Option(None, min=1, help="Agent groups."),
    job_id: str | None = typer.Option(None, help="Submission id (default: Ray picks one)."),
    ship_code: bool = typer.Option(True, help="Upload this checkout's code (py_modules)."),
    wait: bool = typer.Option(False, "--wait", help="Follow the logs until the job ends."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a run at --out."),
    checkpoint_every: int | None = typer.Option(None, min=0, help="Ticks between checkpoints."),
    keep_checkpoints: int | None = typer.Option(None, min=0, help="Checkpoints kept (0: all)."),
    env: list[str] = typer.Option([], help="Forward this environment variable (repeatable)."),  # noqa: B008
    skip_service_checks: bool = typer.Option(
        False, "--skip-service-checks", help="LLM/Qdrant reachable only from the cluster."
    ),
) -> None:
    """Validate and preflight locally, then submit through the Ray Jobs API; prints the job
    id and where its results go."""
    from societas.cluster.cli.sim import _load
    from societas.cluster.launch import LaunchOptions, check, resolve
    from societas.cluster.ray import jobs
    from societas.cluster.remote_out import is_url

    scenario = _load(config, agents=agents, ticks=ticks, groups=groups)
    with user_errors():
        target = _submit_target(out)
        opts = LaunchOptions(
            out=target,
            overwrite=overwrite,
            checkpoint_every=checkpoint_every,
            keep_checkpoints=keep_checkpoints,
            check_services=not skip_service_checks,
        )
        scenario, _cluster = resolve(scenario, opts)
        # The cluster's shared path is often not mounted here: check it only if it is.
        local_view = is_url(target) or Path(target).parent.exists()
        check(scenario, opts, target if local_view else None)
        missing = [name for name in env if name not in os.environ]
        if missing:
            raise OutDirError(f"--env {missing[0]}: not set in this environment")
        spec = jobs.SubmitSpec(
            config=config,
            out=target,
            agents=agents,
            ticks=ticks,
            groups=groups,
            ship_code=ship_code,
            job_id=job_id,
            overwrite=overwrite,
            checkpoint_every=checkpoint_every,
            keep_checkpoints=keep_checkpoints,
            skip_service_checks=skip_service_checks,
            env_vars={name: os.environ[name] for name in env},
        )
        jid = jobs.submit(spec, address)
    typer.echo(jid)
    typer.echo(f"results -> {target}", err=True)
    if wait:
        _follow(jid, address)
        info = jobs.status(jid, address)
        typer.echo(f"{jid}: {info['status']}")
        if info["status"] != "SUCCEEDED":
            raise typer.Exit(1)


def _submit_target(out: str | None) -> str:
    """--out of a job: an absolute path (shared storage) or a URL, never Ray's temp dir."""
    if not out:
        raise OutDirError(
            "--out: name where the results go: a shared absolute path (/mnt/runs/x) or an "
            "object-store URL (s3://bucket/runs/x)"
        )
    if "://" not in out and not Path(out).is_absolute():
        raise OutDirError(
            f"--out {out}: give an absolute shared path or a URL; a relative path would land "
            "in the job's temporary working folder"
        )
    return out


def _follow(job_id: str, address: str | None) -> None:
    import asyncio

    from societas.cluster.ray import jobs

    async def go() -> None:
        async for chunk in jobs.follow(job_id, address):
            typer.echo(chunk, nl=False)

    asyncio.run(go())


def status(
    target: str = typer.Argument(..., help="Job (submission) id, a run folder or URL."),
    address: str | None = typer.Option(None, help=ADDRESS_HELP),
) -> None:
    """Status and progress (simulated time, agent-steps/s, LLM calls, fallbacks) as JSON; a
    folder or URL of seeds or arms: each run's."""
    from societas.cluster.experiments.plan import read_plan
    from societas.cluster.ray import jobs
    from societas.cluster.remote_out import is_url

    with user_errors():
        remote = is_url(target)
        if (remote or Path(target).is_dir()) and (plan := read_plan(target)) is not None:
            from societas.cluster.cli.finish import experiment_status

            where = target if remote else str(Path(target))
            typer.echo(json.dumps(experiment_status(where, plan), indent=2))
            return
        if remote:
            typer.echo(json.dumps(run_status(target), indent=2))
            return
        if (folder := run_folder_of(target)) is not None:
            typer.echo(json.dumps(run_status(folder), indent=2))
            return
        info = jobs.status(target, address)
        info["progress"] = jobs.progress_from_logs(jobs.logs(target, address))
        typer.echo(json.dumps(info, indent=2))


def run_folder_of(target: str) -> Path | None:
    """The run folder `target` names, or None for a job id; a path that is not a folder, or a
    folder of arms or seeds, fails naming what to pass."""
    from societas.cluster.observe.run_folder import refuse_parent_of_runs

    if Path(target).is_dir():
        refuse_parent_of_runs(Path(target))
        return Path(target)
    if "/" in target or target.startswith("."):  # a path, not a job id
        raise OutDirError(f"{target}: no such run folder")
    return None


def run_status(run_dir: Path | str) -> dict[str, object]:
    """What run.json says about a run folder (or a run at a URL), and whether its driver still
    runs: a run recorded as running on this host whose driver has ended is reported as
    interrupted."""
    from societas.cluster.remote_out import driver_alive_at, is_url, read_record_at, staging_dir

    rec = read_record_at(run_dir)
    if rec is None:
        raise OutDirError(f"{run_dir}: no run.json; not a run folder")
    keys = ("status", "scenario", "mode", "ticks", "ticks_done", "last_checkpoint", "error")
    out: dict[str, object] = {k: rec.get(k) for k in keys}
    out["progress"] = rec.get("progress") or {}
    out["driver_running"] = driver_alive_at(run_dir) is not None
    here = rec.get("host") in (None, socket.gethostname())
    if out["status"] == "running" and here and not out["driver_running"]:
        local = staging_dir(str(run_dir)) if is_url(run_dir) else run_dir
        out["status"] = "interrupted"
        out["error"] = (
            f"the driver (pid {rec.get('pid')}) ended without recording an end; "
            f"`societas cleanup {local}` ends what it left, "
            f"`societas resume {shlex.quote(str(run_dir))}` continues from the last checkpoint"
        )
    return out


def logs(
    job_id: str = typer.Argument(..., help="Job (submission) id."),
    address: str | None = typer.Option(None, help=ADDRESS_HELP),
    follow: bool = typer.Option(False, "--follow", "-f", help="Stream until the job ends."),
) -> None:
    """Print a job's logs."""
    from societas.cluster.ray import jobs

    try:
        if follow:
            _follow(job_id, address)
        else:
            typer.echo(jobs.logs(job_id, address), nl=False)
    except jobs.JobsError as err:
        _fail(err)


def stop(
    target: str = typer.Argument(..., help="Job (submission) id, or a local run folder."),
    address: str | None = typer.Option(None, help=ADDRESS_HELP),
    wait: float = typer.Option(120.0, min=0, help="Seconds to wait for a run folder's run."),
) -> None:
    """Stop a run after its current tick with a final checkpoint (`societas resume` goes on)."""
    from societas.cluster.ray import jobs

    with user_errors():
        if (folder := run_folder_of(target)) is not None:
            stop_run_folder(folder, wait)
            return
        was = jobs.stop(target, address)
    typer.echo(f"{target}: {'stopping (final checkpoint first)' if was else 'not running'}")


def stop_run_folder(run_dir: Path, wait_s: float) -> None:
    """SIGTERM the run's driver (it checkpoints and marks run.json), wait for it to end."""
    import os
    import signal
    import time

    from societas.cluster.cleanup import driver_alive

    pid = driver_alive(run_dir)
    if pid is None:
        typer.echo(f"{run_dir}: not running")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while driver_alive(run_dir) is not None and time.monotonic() < deadline:
        time.sleep(0.5)
    state = run_status(run_dir)
    typer.echo(f"{run_dir}: {state['status']} (last checkpoint tick={state['last_checkpoint']})")


def resume(
    run_dir: str = typer.Argument(..., help="A run folder or object-store URL."),
    local: bool = typer.Option(False, "--local", help="In one process (default: as it ran)."),
    address: str | None = typer.Option(None, help="Ray head host:port (default: local Ray)."),
    checkpoint_every: int | None = typer.Option(None, min=0, help="Ticks between checkpoints."),
    keep_checkpoints: int | None = typer.Option(None, min=0, help="Checkpoints kept (0: all)."),
    attach_timeout: float | None = typer.Option(None, min=0.1, help="Seconds for --address."),
    budget_tokens: int | None = typer.Option(
        None, min=1, help="LLM tokens the whole run may use (resumes included)."
    ),
    budget_more: int | None = typer.Option(
        None, "--budget-more", min=1, help="Raise the run's token budget by N tokens."
    ),
    skip_service_checks: bool = typer.Option(False, "--skip-service-checks"),
    allow_changed_inputs: bool = typer.Option(
        False,
        "--allow-changed-inputs",
        help="Go on although files the run reads (code, prompts, profiles, edges) changed "
        "since it started; run.json (experiment.json) records which.",
    ),
    take_over: bool = typer.Option(
        False,
        "--take-over",
        help="Resume a run recorded as running on another host: only once that host is gone "
        "for good (it may still be running there).",
    ),
) -> None:
    """Continue a run from its last complete checkpoint (ends identical to an uninterrupted
    run); a folder or URL of seeds or arms: finish every run of the experiment. Refused when
    files the run reads changed since it started, unless --allow-changed-inputs, and when
    run.json says it is running on another host, unless --take-over."""
    from societas.cluster.cli.sim import execute
    from societas.cluster.experiments.plan import read_plan
    from societas.cluster.launch import LaunchOptions, stored_run
    from societas.cluster.observe.run_folder import read_record, refuse_parent_of_runs
    from societas.cluster.remote_out import RemoteSync, driver_alive_at, is_url, staging_dir

    remote = is_url(run_dir)
    with user_errors():
        plan = read_plan(run_dir) if remote or Path(run_dir).is_dir() else None
    if plan is not None:
        from societas.cluster.cli.finish import ResumeOptions, finish_experiment

        given = ResumeOptions(
            local=local,
            address=address,
            checkpoint_every=checkpoint_every,
            keep_checkpoints=keep_checkpoints,
            attach_timeout=attach_timeout,
            budget_tokens=budget_tokens,
            budget_more=budget_more,
            skip_service_checks=skip_service_checks,
            allow_changed_inputs=allow_changed_inputs,
            take_over=take_over,
        )
        finish_experiment(run_dir if remote else str(Path(run_dir)), plan, given)
        return
    with user_errors():
        folder = Path(run_dir)
        if remote:
            folder = staging_dir(run_dir)
            if (pid := driver_alive_at(run_dir)) is not None:  # a pull would write under it
                raise OutDirError(
                    f"{run_dir}: still running here (pid {pid}); stop it first: kill -TERM "
                    f"{pid} (it checkpoints, then stops)"
                )
            RemoteSync(run_dir, folder).pull()
        if not folder.is_dir():
            raise OutDirError(f"{run_dir}: no such run folder")
        refuse_parent_of_runs(folder)
        record = read_record(folder) or {}
        if not take_over:
            refuse_running_elsewhere(run_dir, record)
        if not allow_changed_inputs and record.get("status") != "completed":
            refuse_changed_inputs(run_dir, folder)  # before the scenario reads them
        try:
            scenario, cluster, groups = stored_run(folder)
        except FileNotFoundError:
            raise OutDirError(
                f"{run_dir}: no complete checkpoint (checkpoints/tick=K/manifest.json) to "
                "resume from"
            ) from None
        last = last_complete(folder)
        if last == scenario.ticks and record.get("status") == "completed":
            typer.echo(f"{run_dir}: complete ({last} of {scenario.ticks} ticks), nothing to resume")
            return
        opts = LaunchOptions(
            out=run_dir,
            local=local or (record.get("mode", "ray") == "local" and address is None),
            address=address,
            groups=groups,
            resume=True,
            checkpoint_every=checkpoint_every,
            keep_checkpoints=keep_checkpoints,
            attach_timeout_s=attach_timeout,
            budget_tokens=raised_budget(folder, scenario, budget_tokens, budget_more),
            check_services=not skip_service_checks,
        )
    typer.echo(f"resuming {run_dir} at tick {last} ({'local' if opts.local else 'ray'})")
    try:
        execute(scenario, opts, stored_cluster=cluster, stored_groups=groups)
    except typer.Exit as stopped:
        if stopped.exit_code == EXIT_INTERRUPTED:
            keep_arm(run_dir, record)
        raise
    keep_arm(run_dir, record)


def refuse_running_elsewhere(run_dir: str, record: dict[str, Any]) -> None:
    """OutDirError when run.json says the run is running on another host: resuming it here
    too would make two runs write one folder; --take-over once that host is gone."""
    if running_elsewhere(record) is not None:
        raise OutDirError(elsewhere_line(run_dir, record, "not resumed: it may still run there"))


def running_elsewhere(record: dict[str, Any]) -> str | None:
    """The host a run is recorded as running on when that is another host than this one."""
    host = record.get("host")
    if record.get("status") == "running" and host not in (None, socket.gethostname()):
        return str(host)
    return None


def elsewhere_line(where: str, record: dict[str, Any], what: str) -> str:
    """One line on a run recorded as running on another host: what is done with it, and the
    command that takes it over once that host is gone for good (it may still run there)."""
    return (
        f"{where}: recorded as running on {record.get('host')} (pid {record.get('pid')}, last "
        f"update {record.get('updated_at')}), {what}; once that host is gone for good: "
        f"societas resume {shlex.quote(where)} --take-over"
    )


def refuse_changed_inputs(run_dir: str, folder: Path) -> None:
    """OutDirError naming each file the run reads that changed, went missing or was added
    since it started (nothing is resumed); a run that recorded none passes."""
    from societas.cluster.observe.inputs import ALLOW_FLAG, refusal, run_input_changes

    changes = run_input_changes(folder)
    if changes:
        again = f"societas resume {shlex.quote(run_dir)} {ALLOW_FLAG}"
        raise OutDirError(refusal({run_dir: changes}, "the run started", again))


def keep_arm(run_dir: str, record: dict[str, Any]) -> None:
    """Name the experiment and arm again in a resumed arm's run.json (the resume wrote a new
    record), so the report still sees one experiment."""
    from societas.cluster.experiments.arms import mark_arm

    if record.get("arm"):
        mark_arm(run_dir, str(record.get("experiment") or ""), str(record["arm"]))


def raised_budget(folder: Path, scenario: Any, budget: int | None, more: int | None) -> int | None:
    """The whole run's token budget for a resume: --budget-tokens, or the run's own budget
    (the tokens spent up to its last checkpoint when it had none) plus --budget-more."""
    from societas.cluster.observe.run_folder import read_record

    if more is None:
        return budget
    spent = int((read_record(folder) or {}).get("totals", {}).get("llm_tokens", 0) or 0)
    base = budget or getattr(scenario.llm, "budget", None) or spent
    return int(base) + more


def cleanup(
    run_dir: Path = typer.Argument(..., help="A run folder."),  # noqa: B008
    force: bool = typer.Option(False, "--force", help="Also end a run that is still running."),
) -> None:
    """End every process a run left behind (after kill -9) and mark it interrupted."""
    from societas.cluster.cleanup import cleanup_run, driver_alive
    from societas.cluster.observe.run_folder import PROCESSES_FILE, refuse_parent_of_runs

    with user_errors():
        refuse_parent_of_runs(run_dir)
        if not (run_dir / PROCESSES_FILE).is_file():
            raise OutDirError(f"{run_dir}: not a run folder (no {PROCESSES_FILE})")
        pid = driver_alive(run_dir)
        if pid is not None and not force:
            raise OutDirError(
                f"{run_dir}: still running (pid {pid}); `societas stop {run_dir}` ends it "
                "with a checkpoint, `--force` ends it at once"
            )
    ended = cleanup_run(run_dir)
    for line in ended:
        typer.echo(f"ended {line}")
    typer.echo(f"{run_dir}: {len(ended)} process(es) ended; nothing of this run is left")


def bench(
    agents: int = typer.Option(10_000, min=2, help="Agents."),
    ticks: int = typer.Option(48, min=1, help="Ticks."),
    groups: int = typer.Option(2, min=1, help="Groups (a 1-group run is measured too)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the figures here."),  # noqa: B008
) -> None:
    """Engine benchmark on local Ray (town, rules provider, edge backend): benchmarks/engine.py."""
    import runpy

    import societas.cluster

    script = Path(societas.cluster.__file__).resolve().parent.parent / "benchmarks" / "engine.py"
    if not script.is_file():
        _fail(FileNotFoundError(f"{script}: run `societas bench` from a societas checkout"))
    bench_mod = runpy.run_path(str(script))
    result = bench_mod["run_benchmark"](
        agents=agents, ticks=ticks, groups=groups, json_path=json_path
    )
    typer.echo(json.dumps(result, indent=2))


def register(app: typer.Typer) -> None:
    """Add the cluster-operation commands to the `societas` app."""
    app.command("submit")(submit)
    app.command("status")(status)
    app.command("logs")(logs)
    app.command("stop")(stop)
    app.command("resume")(resume)
    app.command("cleanup")(cleanup)
    app.command("bench")(bench)
