"""What every `societas` command shares: user errors as one short message and exit code 2
(the traceback only with `--debug`), interrupts as exit code 130, the progress bar."""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
DEBUG = {"on": bool(os.environ.get("SOCIETAS_DEBUG"))}


def debug_on() -> bool:
    """Whether `--debug` (or $SOCIETAS_DEBUG) asked for tracebacks."""
    return DEBUG["on"]


def user_error_types() -> tuple[type[BaseException], ...]:
    """Exceptions that are a user's mistake or an unreachable service, not a bug."""
    from societas.agents.scenario import ScenarioConfigError
    from societas.cluster.observe.run_folder import OutDirError
    from societas.cluster.preflight import PreflightError
    from societas.cluster.ray.attach import RayAttachError
    from societas.cluster.ray.jobs import JobsError
    from societas.cluster.remote_out import RemoteOutError

    found: list[type[BaseException]] = [
        ScenarioConfigError,
        PreflightError,
        OutDirError,
        RayAttachError,
        RemoteOutError,
        JobsError,
    ]
    with contextlib.suppress(ImportError):
        from societas.agents.llm.errors import LLMConfigError

        found.append(LLMConfigError)
    return tuple(found)


def fail(message: str, code: int = EXIT_USER_ERROR) -> None:
    """Print `message` to stderr and exit with `code` (no traceback)."""
    if debug_on():
        traceback.print_exc()
    typer.echo(message, err=True)
    raise typer.Exit(code)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn user errors into one message + exit 2, interrupts into exit 130."""
    from societas.cluster.launch import RunStopped
    from societas.cluster.preflight import PreflightError

    try:
        yield
    except typer.Exit:
        raise
    except PreflightError as err:
        n = len(err.problems)
        fail(f"preflight: {n} problem{'s' if n != 1 else ''}, nothing was started:\n{err}")
    except RunStopped as err:
        where = f" at checkpoint tick={err.checkpoint}" if err.checkpoint is not None else ""
        fail(
            f"{err}\nthe run is saved{where}; continue with: societas resume {err.run_dir}",
            EXIT_INTERRUPTED,
        )
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)
    except user_error_types() as err:
        text = str(err)
        fail(text if text.startswith("error") else f"error: {text}")


def progress_bar() -> Any:
    """A rich progress bar for ticks (plain lines when stdout is not a terminal)."""
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


def progress_line(p: Any, scenario: Any) -> str:
    """One line of progress (what `societas status JOB` reads back from a job's log)."""
    from societas.cluster.observe.run_folder import sim_time

    return (
        f"progress tick={p.tick + 1}/{scenario.ticks} sim='{sim_time(p.tick + 1, scenario)}' "
        f"agents={p.agents} steps_per_s={p.agent_steps_per_s:.0f} "
        f"llm_calls={p.llm_requests} llm_tokens={p.llm_tokens} "
        f"fallbacks={getattr(p, 'fallbacks', 0) or 0}"
    )


def readable(where: str, *, checkpoints: bool = False) -> Path:
    """A run folder as given; for an object-store URL, the local copy of what is read there
    (with its checkpoints when `checkpoints`; fetched now; a ReportInputError naming the URL
    when the store cannot give it)."""
    from societas.cluster.remote_out import RemoteOutError, is_url, reading_copy
    from societas.cluster.report import ReportInputError

    if not is_url(where):
        return Path(where)
    try:
        return reading_copy(where, checkpoints=checkpoints)
    except RemoteOutError as err:
        text = str(err)
        raise ReportInputError(text if text.startswith(where) else f"{where}: {text}") from None
