"""`societas run` and `societas check`: simulation commands, registered on the main app.

Both load the scenario (every bad field named), apply the command line's overrides and run
the preflight (societas.cluster.preflight); `run` then hands over to
`societas.cluster.launch.launch` (local or Ray, checkpoints, run record, Ctrl-C handling).
"""

from __future__ import annotations

import importlib
import shlex
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from societas.agents.scenario import ScenarioConfig, load_scenario
from societas.cluster.cli.common import progress_bar, progress_line, user_errors
from societas.cluster.remote_out import is_url

HEARTBEAT_AFTER_S = 5.0  # a call older than this makes the progress line show the calls
HEARTBEAT_EVERY_S = 30.0  # at most one heartbeat line this often when not on a terminal

ConfigArg = Annotated[
    Path, typer.Argument(help="Scenario YAML.", show_default=False, metavar="CONFIG")
]
Out = Annotated[
    str | None,
    typer.Option(help="Run folder or object-store URL (s3://...); default runs/<name>."),
]
Overwrite = Annotated[
    bool, typer.Option("--overwrite", help="Replace the run that --out already holds.")
]
CheckpointEvery = Annotated[
    int | None,
    typer.Option(min=0, help="Ticks between checkpoints (0: none); default 6 simulated hours."),
]
KeepCheckpoints = Annotated[
    int | None, typer.Option(min=0, help="Complete checkpoints kept (0: all); default 2.")
]
AttachTimeout = Annotated[
    float | None,
    typer.Option(min=0.1, help="Seconds to wait for --address (default 30)."),
]
SkipChecks = Annotated[
    bool,
    typer.Option("--skip-service-checks", help="Do not contact LLM/Qdrant before the run."),
]


def _load(config: Path, **over: Any) -> ScenarioConfig:
    """The validated scenario with overrides (errors: exit 2, every bad field named)."""
    with user_errors():
        if not config.is_file():
            from societas.agents.scenario import ScenarioConfigError

            what = "is a folder" if config.is_dir() else "does not exist"
            named = sorted(p.stem for p in Path("configs").glob("*.yaml"))
            if config.suffix == "" and named:  # a scenario name instead of a file
                files = ", ".join(f"configs/{n}.yaml" for n in named if "memory" not in n)
                what = f"is not a file; scenarios here: {files}"
            raise ScenarioConfigError([("<file>", f"{what}; give a scenario YAML")], str(config))
        scenario = load_scenario(config).with_overrides(**over)
        from societas.agents.scenario import ScenarioConfigError
        from societas.cluster.cluster_config import cluster_config_of

        try:  # the `cluster:` section is validated by the runtime's model
            cluster_config_of(scenario, None)
        except ScenarioConfigError as err:
            raise ScenarioConfigError(err.problems, str(config)) from None
        return scenario


def _ray_available() -> None:
    """Exit 2 with a clear message when the Ray runtime cannot be imported."""
    try:
        importlib.import_module("societas.cluster.ray.runtime")
    except ImportError:
        typer.echo(
            "error: the Ray runtime is not available; use --local to run in one process.",
            err=True,
        )
        raise typer.Exit(2) from None


def execute(scenario: Any, opts: Any, **kw: Any) -> None:
    """Tune this process for hosting groups, launch with a progress bar (or progress lines
    when not on a terminal), report."""
    from societas.agents.llm import inflight
    from societas.agents.llm.config import calls_label
    from societas.cluster.launch import launch
    from societas.memory.tuning import tune_worker

    if not opts.local:
        _ray_available()
    tune_worker()  # the driver's loop, and with --local the groups, run in this process
    tty = sys.stdout.isatty()
    bar = progress_bar()
    task = bar.add_task("run", total=scenario.ticks, info="", start=False)

    shown = {"info": ""}
    decisions = calls_label(scenario.llm.provider)

    def on_progress(p: Any) -> None:
        if not bar.live.is_started:  # only once the run is under way (after preflight)
            bar.start()
            bar.start_task(task)
        if not tty:
            print(progress_line(p, scenario), flush=True)
        shown["info"] = (
            f"{p.agents} agents  {p.agent_steps_per_s:,.0f} steps/s  {p.llm_requests:,} {decisions}"
            f"  {getattr(p, 'fallbacks', 0):,} fallbacks"
        )
        bar.update(task, completed=p.tick + 1, info=shown["info"])

    beating = threading.Event()

    def heartbeat() -> None:
        """During a long tick: the model calls in flight (this process) and the oldest's age."""
        printed = 0.0
        while not beating.wait(1.0):
            n, age = inflight.snapshot()
            if not n or age < HEARTBEAT_AFTER_S:
                continue
            line = f"{n} LLM calls in flight, oldest {age:.0f} s"
            if tty and bar.live.is_started:
                bar.update(task, info=f"{shown['info']}  {line}".strip())
            elif not tty and time.monotonic() - printed >= HEARTBEAT_EVERY_S:
                print(f"tick in progress: {line}", flush=True)
                printed = time.monotonic()

    beat = threading.Thread(target=heartbeat, name="progress-heartbeat", daemon=True)
    beat.start()
    try:
        with user_errors():
            summary, run_dir = launch(scenario, opts, on_progress=on_progress, **kw)
    finally:
        beating.set()
        if bar.live.is_started:
            bar.stop()
    typer.echo(
        f"{summary.agent_steps:,} agent-steps in {summary.wall_s:.1f} s "
        f"({summary.agent_steps_per_s:,.0f}/s), {summary.llm_requests:,} {decisions}, "
        f"{summary.memories_total:,} memories -> {opts.out}"
    )
    where = opts.out if is_url(opts.out) else run_dir  # a URL's report reads it there
    typer.echo(f"next: societas report {shlex.quote(str(where))}")


def run(
    config: ConfigArg,
    local: Annotated[bool, typer.Option("--local", help="In one process, without Ray.")] = False,
    agents: Annotated[int | None, typer.Option(min=2, help="Override agents.count.")] = None,
    ticks: Annotated[int | None, typer.Option(min=1, help="Override ticks.")] = None,
    out: Out = None,
    seed: Annotated[int | None, typer.Option(min=0, help="Override the seed.")] = None,
    groups: Annotated[int | None, typer.Option(min=1, help="Agent groups (engines).")] = None,
    address: Annotated[
        str | None, typer.Option(help="Ray head host:port (not with --local).")
    ] = None,
    seeds: Annotated[
        str | None, typer.Option(help="Replicates, e.g. 0,1,2: OUT/seed-N each.")
    ] = None,
    arm: Annotated[
        list[str] | None,
        typer.Option(
            "--arm", help="Only this arm of the scenario's arms (repeatable, or a,b): OUT/<arm>."
        ),
    ] = None,
    overwrite: Overwrite = False,
    checkpoint_every: CheckpointEvery = None,
    keep_checkpoints: KeepCheckpoints = None,
    attach_timeout: AttachTimeout = None,
    skip_service_checks: SkipChecks = False,
    budget_tokens: Annotated[
        int | None,
        typer.Option(min=1, help="LLM tokens this run may use (llm.budget); checkpoint, stop."),
    ] = None,
) -> None:
    """Run a scenario; results go to OUT/results as Parquet, then `societas report OUT`.

    Preflight first (config, LLM endpoints, Qdrant, embedder, --out, --address); checkpoints
    every 6 simulated hours and at the end; Ctrl-C or SIGTERM checkpoints and stops.
    """
    kw: dict[str, Any] = {
        "local": local,
        "agents": agents,
        "ticks": ticks,
        "groups": groups,
        "address": address,
        "overwrite": overwrite,
        "checkpoint_every": checkpoint_every,
        "keep_checkpoints": keep_checkpoints,
        "attach_timeout": attach_timeout,
        "skip_service_checks": skip_service_checks,
        "budget_tokens": budget_tokens,
    }
    if seeds is not None:  # replicates whose spread the report draws as bands (cli.report)
        from societas.cluster.cli.report import run_replicates

        run_replicates(run, config, seeds, str(out) if out else None, arm=arm, **kw)
        return
    if local and address:
        with user_errors():
            from societas.cluster.preflight import PreflightError, Problem

            problem = Problem(setting="--address", value=address, message="not with --local")
            raise PreflightError([problem])
    scenario = _load(config, agents=agents, ticks=ticks, seed=seed, groups=groups)
    target = str(out) if out is not None else None
    run_dir: Any = Path(target) if target is not None and "://" not in target else target
    run_dir = run_dir or Path("runs") / scenario.name
    from societas.cluster.launch import LaunchOptions

    with user_errors():
        opts = LaunchOptions(
            out=str(run_dir),
            local=local,
            address=address,
            groups=groups,
            overwrite=overwrite,
            checkpoint_every=checkpoint_every,
            keep_checkpoints=keep_checkpoints,
            attach_timeout_s=attach_timeout,
            check_services=not skip_service_checks,
            budget_tokens=budget_tokens,
        )
    if scenario.arms or arm:  # one run folder per arm under OUT (cluster.cli.experiment)
        from societas.cluster.cli.experiment import run_arms_command

        options = {**kw, "seed": seed}
        run_arms_command(scenario, opts, execute, config=config, options=options, only=arm)
        return
    execute(scenario, opts)


def check(
    configs: Annotated[
        list[Path], typer.Argument(help="Scenario YAML(s).", show_default=False, metavar="CONFIG")
    ],
    out: Out = None,
    address: Annotated[str | None, typer.Option(help="Ray head host:port to probe.")] = None,
    agents: Annotated[int | None, typer.Option(min=2, help="Override agents.count.")] = None,
    ticks: Annotated[int | None, typer.Option(min=1, help="Override ticks.")] = None,
    overwrite: Overwrite = False,
    checkpoint_every: CheckpointEvery = None,
    keep_checkpoints: KeepCheckpoints = None,
    skip_service_checks: SkipChecks = False,
) -> None:
    """Preflight alone: config, LLM endpoints, Qdrant, embedder, --out and --address (several
    configs: each is checked; exit code 2 if any has a problem)."""
    failed = 0
    for config in configs:
        try:
            _check_one(
                config,
                out,
                address,
                agents,
                ticks,
                overwrite,
                checkpoint_every,
                keep_checkpoints,
                not skip_service_checks,
            )
        except typer.Exit as stop:
            if stop.exit_code:
                failed += 1
    if failed:
        if len(configs) > 1:
            typer.echo(f"{failed} of {len(configs)} configs have problems", err=True)
        raise typer.Exit(2)


def _check_one(
    config: Path,
    out: str | None,
    address: str | None,
    agents: int | None,
    ticks: int | None,
    overwrite: bool,
    checkpoint_every: int | None,
    keep_checkpoints: int | None,
    services: bool,
) -> None:
    """Preflight of one config; exit 2 (via user_errors) on a problem."""
    from societas.cluster.launch import LaunchOptions, resolve
    from societas.cluster.launch import check as run_check

    scenario = _load(config, agents=agents, ticks=ticks)
    with user_errors():
        opts = LaunchOptions(
            out=out or str(Path("runs") / scenario.name),
            address=address,
            overwrite=overwrite,
            checkpoint_every=checkpoint_every,
            keep_checkpoints=keep_checkpoints,
            check_services=services,
        )
        scenario, cluster = resolve(scenario, opts)
        run_check(scenario, opts, opts.out)  # the folder `run` would write, given or not
    every = cluster.checkpoint_every
    cadence = (
        f"every {every} ticks" if every is not None else f"every {cluster.checkpoint_hours:g} h"
    )
    typer.echo(
        f"ok: {config} ({scenario.agents.count} agents, {scenario.ticks} ticks, "
        f"llm {scenario.llm.provider}, checkpoints {cadence}) -> {opts.out}"
    )


def register(app: typer.Typer) -> None:
    """Add `run` to the `societas` app (`report` lives in `cli.report`)."""
    app.command("run")(run)
    app.command("check")(check)
