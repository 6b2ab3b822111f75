"""`societas validate SUITE`: the command line over `validate`, with one-line errors."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from societas.cluster.validation.inputs import ValidationInputError, parse_seeds

EXIT_USER_ERROR = 2


def run_validate(
    suite: str,
    out: Path,
    provider: str = "rules",
    seeds: str = "3",
    agents: int | None = None,
    hours: float | None = None,
) -> int:
    """Run the suite and print where its files are; 2 and one line on stderr for bad input."""
    from societas.agents.scenario import ScenarioConfigError
    from societas.cluster.validation.runner import validate

    try:
        report = validate(
            suite,
            out,
            provider=provider,
            seeds=parse_seeds(seeds),
            agents=agents,
            hours=hours,
            on_progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    except (ValidationInputError, ScenarioConfigError) as err:
        print(f"error: {str(err).splitlines()[0]}", file=sys.stderr)
        return EXIT_USER_ERROR
    for m in report.metrics:
        ours = "n/a" if m.ours_mean is None else f"{m.ours_mean:.3f}"
        print(f"{m.name}: published {m.published:.3f}, ours {ours}")
    print(f"-> {Path(out) / 'validation.json'} and validation.html ({report.elapsed_s:.1f} s)")
    return 0


def register(app: typer.Typer) -> None:
    """Add the `validate` command to the societas app."""

    @app.command("validate")
    def validate_command(
        suite: str = typer.Argument(..., help="smallville, polarization or hurricane."),
        out: Path = typer.Option(..., "--out", help="Folder for validation.json/.html and runs."),  # noqa: B008
        provider: str = typer.Option("rules", help="rules, or a YAML file with an llm: section."),
        seeds: str = typer.Option("3", help="A count N (seeds 0..N-1) or a list like 0,1,2."),
        agents: int | None = typer.Option(None, help="Agents (default: the suite's size)."),
        hours: float | None = typer.Option(None, help="Simulated hours (shortens the suite)."),
    ) -> None:
        """Run a validation suite and compare it with the published results."""
        code = run_validate(suite, out, provider, seeds, agents, hours)
        if code:
            raise typer.Exit(code)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (`python -m societas.cluster.validation.cli`)."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    register(app)

    @app.callback()
    def _root() -> None:
        """Validation suites."""

    try:
        code = app(args=argv, prog_name="societas", standalone_mode=False)
    except typer.Exit as done:
        return int(done.exit_code)
    except SystemExit as done:
        return int(done.code or 0)
    except Exception as err:  # click usage errors: one line, exit 2
        import click

        if isinstance(err, click.ClickException):
            print(f"error: {err.format_message()}", file=sys.stderr)
            return EXIT_USER_ERROR
        raise
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
