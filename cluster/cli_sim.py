"""`societas run` and `societas report`: simulation commands, registered on the main app.

`run CONFIG --local` runs in-process groups through the coordinator; without `--local` it
hands over to `societas.cluster.ray_runtime.run_on_ray` (the Ray runtime), with the same
scenario, output folder and progress callback.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated, Any

import typer

from societas.agents.scenario import ScenarioConfig, ScenarioConfigError, load_scenario


def _load(config: Path, **over: Any) -> ScenarioConfig:
    try:
        return load_scenario(config).with_overrides(**over)
    except ScenarioConfigError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None


def _progress_bar(total: int):  # type: ignore[no-untyped-def]
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]tick"),
        MofNCompleteColumn(),
        BarColumn(),
        TextColumn("{task.fields[info]}"),
        TimeRemainingColumn(),
        transient=False,
    )


def run(
    config: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Scenario YAML.")],
    local: bool = typer.Option(False, "--local", help="In one process, without Ray."),
    agents: int | None = typer.Option(None, min=2, help="Override agents.count."),
    ticks: int | None = typer.Option(None, min=1, help="Override ticks."),
    out: Path | None = typer.Option(None, help="Run directory (default runs/<name>)."),  # noqa: B008
    seed: int | None = typer.Option(None, min=0, help="Override the seed."),
    groups: int | None = typer.Option(None, min=1, help="Agent groups (engines)."),
    address: str | None = typer.Option(None, help="Ray address (not with --local)."),
) -> None:
    """Run a scenario; results go to OUT/results as Parquet, then `societas report OUT`."""
    scenario = _load(config, agents=agents, ticks=ticks, seed=seed, groups=groups)
    run_dir = out or Path("runs") / scenario.name
    if local:
        from societas.cluster.local import run_local

        runner: Any = run_local
        kwargs: dict[str, Any] = {}
    else:
        try:
            runner = importlib.import_module("societas.cluster.ray_runtime").run_on_ray
        except (ImportError, AttributeError):
            typer.echo(
                "error: the Ray runtime is not available yet; use --local to run in one process.",
                err=True,
            )
            raise typer.Exit(2) from None
        kwargs = {"address": address}
    with _progress_bar(scenario.ticks) as bar:
        task = bar.add_task("run", total=scenario.ticks, info="")

        def on_progress(p: Any) -> None:
            info = (
                f"{p.agents} agents  {p.agent_steps_per_s:,.0f} steps/s  "
                f"LLM {p.llm_requests:,} calls"
            )
            bar.update(task, completed=p.tick + 1, info=info)

        summary = runner(scenario, run_dir, scenario.groups, on_progress=on_progress, **kwargs)
    typer.echo(
        f"{summary.agent_steps:,} agent-steps in {summary.wall_s:.1f} s "
        f"({summary.agent_steps_per_s:,.0f}/s), {summary.llm_requests:,} LLM calls, "
        f"{summary.memories_total:,} memories -> {run_dir}"
    )
    typer.echo(f"next: societas report {run_dir}")


def report(
    run_dir: Annotated[Path, typer.Argument(exists=True, file_okay=False, help="A run directory.")],
) -> None:
    """Write RUN_DIR/report.html with PNG plots and RUN_DIR/summary.json."""
    from societas.cluster.report import write_report

    html = write_report(run_dir)
    typer.echo(f"wrote {html} and {run_dir / 'summary.json'}")


def register(app: typer.Typer) -> None:
    """Add `run` and `report` to the `societas` app."""
    app.command("run")(run)
    app.command("report")(report)
