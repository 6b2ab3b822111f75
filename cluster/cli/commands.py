"""The `societas` command line: one typer app, one sub-command per operation."""

from __future__ import annotations

import os
import signal
import sys

import typer

app = typer.Typer(
    name="societas",
    help="Run LLM-driven agent societies: memory, cognition and social life at scale.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"societas {version('societas')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks of errors."),
) -> None:
    """Run LLM-driven agent societies: memory, cognition and social life at scale."""
    from societas.cluster.cli.common import DEBUG

    DEBUG["on"] = DEBUG["on"] or debug


@app.command()
def demo(
    agents: int = typer.Option(3, min=1, max=1000, help="How many agents remember things."),
    backend: str = typer.Option("edge", help="Vector backend: edge (embedded) or qdrant."),
) -> None:
    """Show agents remembering, searching and the retrieval scores (embedded defaults)."""
    from societas.cluster.cli.demo import run_demo

    run_demo(agents=agents, backend=backend)


@app.command("llm-emulator")
def llm_emulator(
    port: int = typer.Option(8000, min=0, max=65535, help="TCP port; 0 picks a free one."),
    host: str = typer.Option("127.0.0.1", help="Bind address (loopback only by default)."),
    capacity: int = typer.Option(64, min=1, help="Requests processed concurrently."),
    latency_ms: float = typer.Option(200.0, min=0, help="Fixed latency per request (ms)."),
    tokens_per_s: float = typer.Option(0.0, min=0, help="Decode speed; 0 = no per-token time."),
    rate_429: float = typer.Option(0.0, min=0, max=1, help="Share of requests answered 429."),
    rate_500: float = typer.Option(0.0, min=0, max=1, help="Share answered 500."),
    rate_timeout: float = typer.Option(0.0, min=0, max=1, help="Share that hang for hang-s."),
    rate_malformed: float = typer.Option(0.0, min=0, max=1, help="Share with broken JSON."),
    rate_garbage: float = typer.Option(0.0, min=0, max=1, help="Share with prose, no JSON."),
    retry_after: float = typer.Option(1.0, min=0, help="Retry-After seconds sent with 429."),
    hang_s: float = typer.Option(30.0, min=0, help="How long a timeout fault hangs (s)."),
    seed: int = typer.Option(0, help="Seed of fault injection."),
    model: list[str] | None = typer.Option(None, help="Model name served (repeatable)."),  # noqa: B008
    api_key_env: str = typer.Option("", help="Require the key held by this env variable."),
) -> None:
    """Serve an OpenAI-protocol emulator of an inference server (not a model) for tests."""
    import asyncio
    import contextlib

    from societas.agents.llm.errors import LLMConfigError
    from societas.testing.emulator import EmulatorConfig, run_forever

    try:
        cfg = EmulatorConfig.checked(
            host=host,
            port=port,
            capacity=capacity,
            base_latency_s=latency_ms / 1000.0,
            tokens_per_s=tokens_per_s,
            rate_429=rate_429,
            rate_500=rate_500,
            rate_timeout=rate_timeout,
            rate_malformed=rate_malformed,
            rate_garbage=rate_garbage,
            retry_after_s=retry_after,
            hang_s=hang_s,
            seed=seed,
            models=model or ["emulated"],
            api_key_env=api_key_env or None,
        )
    except LLMConfigError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run_forever(cfg))


# Sub-command modules, each with `register(app)`; one line per module, kept in this list.
COMMAND_MODULES: list[str] = [
    "societas.cluster.cli.sim",
    "societas.cluster.cli.ops",
    "societas.cluster.cli.report",
    "societas.cluster.cli.llm",
    "societas.cluster.cli.experiment",
    "societas.cluster.validation.cli",
]


def _register_command_modules() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


_register_command_modules()


def _one_line_paragraphs() -> None:
    """Each command's help is its docstring with every paragraph on one line, for the terminal
    to wrap (rich keeps a docstring's own line breaks, mid-sentence)."""
    import inspect

    for info in app.registered_commands:
        doc = info.callback.__doc__ if info.callback is not None else None
        if info.help is None and doc:
            paragraphs = inspect.cleandoc(doc).split("\n\n")
            info.help = "\n\n".join(" ".join(p.split()) for p in paragraphs)


_one_line_paragraphs()


def main() -> None:
    """Console-script entry point: no traceback for errors unless --debug."""
    from societas.cluster.cli.common import DEBUG, EXIT_INTERRUPTED

    # Before anything imports Ray: a Ray started here (no --address, not inside a Ray job)
    # binds its services to 127.0.0.1. Ray reads this once at import; a cluster does not set it.
    if "--address" not in sys.argv and not os.environ.get("RAY_ADDRESS"):
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    DEBUG["on"] = DEBUG["on"] or "--debug" in sys.argv
    # A SIGINT blocked or ignored by the parent (a process that ran Ray's native code) survives
    # exec, and Ctrl-C would do nothing. Ctrl-C means "stop with a checkpoint" here, always.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        app(prog_name="societas")
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as err:
        if DEBUG["on"]:
            raise
        first = (str(err) or type(err).__name__).splitlines()[0]
        typer.echo(f"error: {type(err).__name__}: {first} (--debug shows where)", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
