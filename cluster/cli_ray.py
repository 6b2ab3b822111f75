"""`societas submit|status|logs|stop|resume|bench`: cluster operations (Ray Jobs API, resume).

`societas run` itself lives in cli_sim (it hands over to `ray_runtime.run_on_ray` without
`--local`); these commands add what an operator needs around it.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

ADDRESS_HELP = "Ray dashboard URL (default: $RAY_JOBS_ADDRESS or http://127.0.0.1:8265)."


def _fail(err: Exception) -> None:
    typer.echo(f"error: {err}", err=True)
    raise typer.Exit(1) from None


def submit(
    config: Path = typer.Argument(..., exists=True, dir_okay=False, help="Scenario YAML."),  # noqa: B008
    address: str | None = typer.Option(None, help=ADDRESS_HELP),
    out: str | None = typer.Option(None, help="Run directory on the cluster."),
    agents: int | None = typer.Option(None, min=2, help="Override agents.count."),
    ticks: int | None = typer.Option(None, min=1, help="Override ticks."),
    groups: int | None = typer.Option(None, min=1, help="Agent groups."),
    job_id: str | None = typer.Option(None, help="Submission id (default: Ray picks one)."),
    ship_code: bool = typer.Option(True, help="Upload this checkout's code (py_modules)."),
    wait: bool = typer.Option(False, "--wait", help="Follow the logs until the job ends."),
) -> None:
    """Submit a run to a Ray cluster through the Jobs API; prints the job id."""
    from societas.cluster import jobs

    spec = jobs.SubmitSpec(
        config=config,
        out=out or f"runs/{config.stem}",
        agents=agents,
        ticks=ticks,
        groups=groups,
        ship_code=ship_code,
        job_id=job_id,
    )
    try:
        jid = jobs.submit(spec, address)
    except jobs.JobsError as err:
        _fail(err)
    typer.echo(jid)
    if wait:
        _follow(jid, address)
        info = jobs.status(jid, address)
        typer.echo(f"{jid}: {info['status']}")
        if info["status"] != "SUCCEEDED":
            raise typer.Exit(1)


def _follow(job_id: str, address: str | None) -> None:
    import asyncio

    from societas.cluster import jobs

    async def go() -> None:
        async for chunk in jobs.follow(job_id, address):
            typer.echo(chunk, nl=False)

    asyncio.run(go())


def status(
    job_id: str = typer.Argument(..., help="Job (submission) id."),
    address: str | None = typer.Option(None, help=ADDRESS_HELP),
) -> None:
    """Print a job's status as JSON (PENDING, RUNNING, SUCCEEDED, FAILED, STOPPED)."""
    from societas.cluster import jobs

    try:
        typer.echo(json.dumps(jobs.status(job_id, address), indent=2))
    except jobs.JobsError as err:
        _fail(err)


def logs(
    job_id: str = typer.Argument(..., help="Job (submission) id."),
    address: str | None = typer.Option(None, help=ADDRESS_HELP),
    follow: bool = typer.Option(False, "--follow", "-f", help="Stream until the job ends."),
) -> None:
    """Print a job's logs."""
    from societas.cluster import jobs

    try:
        if follow:
            _follow(job_id, address)
        else:
            typer.echo(jobs.logs(job_id, address), nl=False)
    except jobs.JobsError as err:
        _fail(err)


def stop(
    job_id: str = typer.Argument(..., help="Job (submission) id."),
    address: str | None = typer.Option(None, help=ADDRESS_HELP),
) -> None:
    """Stop a running job (its last complete checkpoint stays for `societas resume`)."""
    from societas.cluster import jobs

    try:
        was = jobs.stop(job_id, address)
    except jobs.JobsError as err:
        _fail(err)
    typer.echo(f"{job_id}: {'stopping' if was else 'not running'}")


def resume(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A run directory."),  # noqa: B008
    address: str | None = typer.Option(None, help="Ray address to attach (default: local)."),
) -> None:
    """Continue a run from its last complete checkpoint; ends identical to an uninterrupted run."""
    from societas.cluster.checkpoint import last_complete
    from societas.cluster.ray_runtime import resume_on_ray

    last = last_complete(run_dir)
    if last is None:
        _fail(
            FileNotFoundError(
                f"{run_dir}: no complete checkpoint (checkpoints/tick=K/"
                "manifest.json) to resume from"
            )
        )
    typer.echo(f"resuming {run_dir} at tick {last}")
    summary = resume_on_ray(run_dir, address=address)
    typer.echo(
        f"{summary.agent_steps:,} agent-steps in {summary.wall_s:.1f} s "
        f"({summary.agent_steps_per_s:,.0f}/s) -> {run_dir}"
    )


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
    app.command("bench")(bench)
