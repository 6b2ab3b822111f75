"""`societas report` and `societas export`: read a finished run, write pages and files."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from societas.cluster.cli.common import readable


def report(
    given: Annotated[
        list[str],
        typer.Argument(
            help="A run folder; a folder of arms or seed-N replicates; or several runs to "
            "compare on the same axes (each may be an object-store URL).",
            metavar="RUNS...",
        ),
    ],
    agent: int | None = typer.Option(None, "--agent", help="Write one agent's page instead."),
    out: Path | None = typer.Option(None, "--out", help="HTML file to write."),  # noqa: B008
) -> None:
    """Write a self-contained HTML report (RUN/report.html) and summary.json; a run at a URL
    is read from a local copy of its results, where the report is written."""
    from societas.cluster.report import ReportInputError, write_agent_page, write_report

    try:
        runs = [readable(where) for where in given]
        if agent is not None:
            if len(runs) != 1:
                raise ReportInputError("--agent: give exactly one run folder")
            html = write_agent_page(runs[0], agent, out)
        else:
            if len(runs) == 1:
                note_unfinished(given[0])
            html = write_report(runs, out)
    except ReportInputError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    size_mb = html.stat().st_size / 1e6
    typer.echo(f"wrote {html} ({size_mb:.1f} MB; opens offline in any browser)")


def note_unfinished(folder: str) -> None:
    """One line on stderr when `folder` holds an experiment whose runs are not all complete:
    the report shows only what has run, and `societas resume` finishes the rest."""
    from societas.cluster.experiments.plan import PlanError, not_finished, read_plan

    try:
        plan = read_plan(folder)
    except PlanError:
        return  # the report does not need the plan
    missing = not_finished(folder, plan) if plan is not None else []
    if missing:
        typer.echo(
            f"note: {folder}: not complete: {', '.join(missing)}; the report covers what has "
            f"run; `societas resume {shlex.quote(folder)}` finishes the experiment",
            err=True,
        )


def export(
    given: Annotated[
        str,
        typer.Argument(
            help="A run folder (with --tidy: or a folder of arms/seeds), or an object-store "
            "URL of one.",
            metavar="RUN_DIR",
        ),
    ],
    fmt: str = typer.Option(
        "csv", "--format", help="csv (one file per table) or duckdb; with --tidy also parquet."
    ),
    out: Path | None = typer.Option(  # noqa: B008
        None, "--out", help="Target folder (csv) or file (duckdb, and every --tidy format)."
    ),
    tidy: bool = typer.Option(
        False, "--tidy", help="One long table across arms and seeds (+ profiles, methods.json)."
    ),
) -> None:
    """Export a run's Parquet results as CSV files or one DuckDB database; --tidy: one long
    table (arm, seed, agent_id, tick, variable, value) across arms and seeds."""
    from societas.cluster.report import ReportInputError
    from societas.cluster.report.export import export as do_export
    from societas.cluster.report.tidy import export_tidy

    try:
        run_dir = readable(given)
        target = export_tidy(run_dir, fmt, out) if tidy else do_export(run_dir, fmt, out)
    except ReportInputError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"wrote {target}")


def parse_seeds(text: str) -> list[int]:
    """`0,1,2` -> [0, 1, 2]; a clear error naming --seeds for anything else."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        seeds = []
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        typer.echo(
            f"error: --seeds: {text!r} is not a list of distinct seeds >= 0 like 0,1,2", err=True
        )
        raise typer.Exit(2)
    return seeds


def run_replicates(
    run_one: Callable[..., None], config: Path, seeds_text: str, out: str | None, **kw: Any
) -> None:
    """`societas run CONFIG --seeds 0,1,2`: one run per seed in OUT/seed-N; the report of
    OUT draws their spread as bands. OUT/experiment.json records the plan first, so a run
    interrupted in one seed is finished by `societas resume OUT` (or by resuming that seed,
    then running the seeds that did not start)."""
    from societas.agents.scenario import load_scenario
    from societas.cluster.cli.common import EXIT_INTERRUPTED, user_errors
    from societas.cluster.cli.experiment import chosen_arms
    from societas.cluster.experiments.plan import Child, new_plan, record_plan
    from societas.cluster.remote_out import child_out

    seeds = parse_seeds(seeds_text)
    with user_errors():  # overrides and --arm checked: a plan only for runs that can start
        scenario = load_scenario(config)
        scenario.with_overrides(**{key: kw.get(key) for key in ("agents", "ticks", "groups")})
        chosen_arms(scenario, kw.get("arm"))
        root = out or str(Path("runs") / scenario.name)
        children = [Child(folder=f"seed-{seed}", seed=seed) for seed in seeds]
        plan = new_plan("seeds", config, scenario.name, children, kw)
        record_plan(root, plan, overwrite=bool(kw.get("overwrite")))
    for i, seed in enumerate(seeds):
        child = child_out(root, f"seed-{seed}")
        typer.echo(f"replicate seed {seed} -> {child}")
        try:
            run_one(config, out=child, seed=seed, seeds=None, **kw)
        except typer.Exit as stopped:
            rest = seeds[i + 1 :]
            if stopped.exit_code == EXIT_INTERRUPTED and rest:
                again = _command("run", config, seeds=",".join(map(str, rest)), out=root, **kw)
                typer.echo(
                    f"seeds {', '.join(map(str, rest))} did not start; after that resume, "
                    f"run them with: {again}",
                    err=True,
                )
            if stopped.exit_code == EXIT_INTERRUPTED:
                finish = f"societas resume {shlex.quote(root)}"
                typer.echo(f"or finish every seed with: {finish}", err=True)
            raise
    typer.echo(f"next: societas report {shlex.quote(str(root))}")


def _command(name: str, *args: Any, **options: Any) -> str:
    """`societas NAME ARGS --option value ...` for the options given (a true flag bare)."""
    words = ["societas", name, *map(str, args)]
    for key, value in options.items():
        flag = f"--{key.replace('_', '-')}"
        if value is True:
            words.append(flag)
        elif isinstance(value, list):
            for item in value:
                words += [flag, str(item)]
        elif value not in (None, False):
            words += [flag, str(value)]
    return " ".join(shlex.quote(w) for w in words)


def register(app: typer.Typer) -> None:
    """Add `report` and `export` to the `societas` app."""
    app.command("report")(report)
    app.command("export")(export)
