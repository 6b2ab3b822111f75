"""`societas interview | inspect | branch` and the arms of `societas run`: experiment commands.

interview and inspect load one agent from a run's last checkpoint without changing the run;
branch makes a counterfactual from a checkpoint (cluster.branch); a scenario with `arms:`
runs every arm into OUT/<arm> (cluster.experiment).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from societas.cluster.cli.common import readable

RUN_HELP = (
    "A run folder (local or Ray) with checkpoints, or its object-store URL (read from a local "
    "copy)."
)


# Errors whose message opens with what the user gave: bad input, exit 2.
NAMED = ("--at", "--agent", "--endpoint", "--llm", "llm.endpoints", "QUESTION", "RUN")


def _fail(err: Exception, code: int = 2) -> None:
    typer.echo(f"error: {err}", err=True)
    raise typer.Exit(code) from None


def _fail_reading(err: Exception) -> None:
    """Exit 2 for a run folder or option the user gave wrongly (a folder of arms, no
    checkpoint, an agent out of range), 1 for anything else."""
    from societas.cluster.experiments.branch import BranchError
    from societas.cluster.observe.run_folder import OutDirError

    given = isinstance(err, FileNotFoundError | BranchError | OutDirError)
    _fail(err, 2 if given or str(err).startswith(NAMED) else 1)


def chosen_arms(scenario: Any, names: list[str] | None) -> list[str]:
    """The arms `--arm` names (repeatable, or comma-separated), in the order given; every
    arm when none is named. Exit 2 naming the value for an arm the scenario does not have."""
    arms = [arm.name for arm in scenario.arms]
    if not names:
        return arms
    wanted = list(dict.fromkeys(n.strip() for text in names for n in text.split(",")))
    if not arms:
        _fail(
            ValueError(
                f"--arm {','.join(wanted)}: scenario {scenario.name!r} declares no arms; run it "
                "without --arm"
            )
        )
    for name in wanted:
        if name not in arms:
            _fail(
                ValueError(
                    f"--arm {name!r}: no such arm; the arms of {scenario.name!r} are "
                    f"{', '.join(arms)}"
                )
            )
    return wanted


def run_arms_command(
    scenario: Any,
    opts: Any,
    execute: Any,
    *,
    config: Path | None = None,
    options: dict[str, Any] | None = None,
    only: list[str] | None = None,
) -> None:
    """Run the arms of `scenario` (`only` those named by --arm) into OUT/<arm> with the options
    of `societas run` (one progress bar and summary per arm); all arms' code is checked before
    the first starts. With the scenario's `config` file, OUT/experiment.json records the plan
    first, so `societas resume OUT` can finish every arm."""
    from societas.agents.scenario import ScenarioConfigError
    from societas.cluster.cli.common import EXIT_INTERRUPTED, user_errors
    from societas.cluster.experiments.arms import arm_runs, mark_arm
    from societas.cluster.experiments.plan import Child, new_plan, record_plan
    from societas.cluster.remote_out import child_out

    names = chosen_arms(scenario, only)
    try:
        scenarios = arm_runs(scenario)
    except ScenarioConfigError as err:
        _fail(err)
    planned = config is not None
    if config is not None:
        children = [Child(folder=name, arm=name) for name in scenarios]
        plan = new_plan("arms", config, scenario.name, children, options or {})
        with user_errors():
            record_plan(opts.out, plan, overwrite=opts.overwrite)
    for i, name in enumerate(names):
        typer.echo(f"arm {name}:")
        arm_opts = opts.model_copy(update={"out": child_out(opts.out, name)})
        try:
            execute(scenarios[name], arm_opts)
        except typer.Exit as stopped:
            if stopped.exit_code == EXIT_INTERRUPTED:
                mark_arm(arm_opts.out, scenario.name, name)
                later = ", ".join(names[i + 1 :])
                if planned:
                    first = f"arms {later} did not start; " if later else ""
                    typer.echo(
                        f"{first}finish every arm with: societas resume {shlex.quote(opts.out)}",
                        err=True,
                    )
            raise
        mark_arm(arm_opts.out, scenario.name, name)
    others = [name for name in scenarios if name not in names]
    if others:
        typer.echo(f"not run by this command: arms {', '.join(others)} (--arm NAME runs one)")
    where = shlex.quote(str(opts.out))
    typer.echo(f"next: societas report {where}  (the arms side by side, with paired effects)")


def interview(
    given: Annotated[str, typer.Argument(help=RUN_HELP, metavar="RUN_DIR")],
    question: Annotated[str, typer.Argument(help="What to ask the agent.")],
    agent: int = typer.Option(..., "--agent", min=0, help="Agent id."),
    at: str | None = typer.Option(
        None, "--at", help="DAY:HOUR: the agent as of the last checkpoint at or before then."
    ),
    llm: Annotated[
        Path | None,
        typer.Option("--llm", help="YAML file with an `llm:` section to answer with (any run)."),
    ] = None,
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="OpenAI-compatible URL (with /v1) to answer with."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name at --endpoint."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Ask one agent a question; it answers from its memories at the last checkpoint (or
    --at), by the run's LLM or the one given; the answer and its source are kept in the
    run's interviews.jsonl (for a run at a URL, in its local copy)."""
    from societas.agents.llm.errors import LLMConfigError
    from societas.agents.safe_yaml import UnsafeYAMLError
    from societas.cluster.experiments.interview import interview as do_interview

    try:
        when = _day_hour(at) if at is not None else None
        llm_config = _interview_llm(llm, endpoint, model)
        run_dir = readable(given, checkpoints=True)  # a URL the store cannot give: exit 2
    except (ValueError, LLMConfigError, UnsafeYAMLError) as err:
        _fail(err)
    try:
        given_by = "--llm" if llm is not None else "--endpoint"
        out = do_interview(
            run_dir, agent, question, at=when, llm_config=llm_config, given_by=given_by
        )
    except (ValueError, FileNotFoundError) as err:  # --at outside the run, no checkpoint, ...
        _fail_reading(err)
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    why = f": {out['fallback_reason']}" if out.get("fallback_reason") else ""
    typer.echo(
        f"{out['name']} (agent {agent}, tick {out['checkpoint_tick']}): {out['answer']} "
        f"[{out['answer_source']}{why}]"
    )


def _day_hour(text: str) -> tuple[int, int]:
    """'2:14' -> (2, 14); an error naming --at otherwise."""
    day, sep, hour = text.partition(":")
    if not sep or not day.strip().isdigit() or not hour.strip().isdigit():
        raise ValueError(f"--at: expected DAY:HOUR such as 0:12, got {text!r}")
    return int(day), int(hour)


def _interview_llm(path: Path | None, endpoint: str | None, model: str | None) -> Any:
    """The LLM config an interview answers with: --llm FILE, --endpoint URL --model NAME,
    or None (the run's own)."""
    from societas.agents.llm.config import load_config
    from societas.agents.safe_yaml import load_yaml_file

    if path is not None and (endpoint or model):
        raise ValueError("--llm: give either --llm FILE or --endpoint URL --model NAME")
    if path is not None:
        data = load_yaml_file(path)
        return load_config(data.get("llm", data) if isinstance(data, dict) else data)
    if (endpoint is None) != (model is None):
        raise ValueError("--endpoint and --model go together")
    if endpoint is None:
        return None
    ep = {"base_url": endpoint, "model": model, "structured_output": "json_object"}
    return load_config({"endpoints": [ep], "retry": {"max_attempts": 2}, "timeout_s": 300})


def inspect(
    given: Annotated[str, typer.Argument(help=RUN_HELP, metavar="RUN_DIR")],
    agent: int = typer.Option(..., "--agent", min=0, help="Agent id."),
    memories: int = typer.Option(15, min=1, help="Memories shown per tier."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole view as JSON."),
) -> None:
    """Print an agent's profile, status, memories by tier, relationships and answers."""
    from societas.cluster.experiments.interview import format_view, inspect_agent
    from societas.cluster.report.data import ReportInputError

    try:
        view = inspect_agent(
            readable(given, checkpoints=True), agent, memory_limit=max(memories * 4, 60)
        )
    except ReportInputError as err:
        _fail(err)
    except (FileNotFoundError, ValueError) as err:
        _fail_reading(err)
    typer.echo(json.dumps(view, indent=2) if as_json else format_view(view, memories))


def branch(
    given: Annotated[str, typer.Argument(help=RUN_HELP, metavar="RUN_DIR")],
    at: str = typer.Option(..., "--at", help="Branch point DAY:HOUR, e.g. 1:08."),
    patch: Path = typer.Option(..., "--patch", exists=True, dir_okay=False, help="Patch YAML."),  # noqa: B008
    out: Path = typer.Option(..., "--out", help="New run folder (must be new or empty)."),  # noqa: B008
) -> None:
    """Branch a run: replay its past from the LLM cache up to --at, then go on with --patch."""
    from societas.agents.scenario import ScenarioConfigError
    from societas.cluster.experiments.branch import BranchError, run_branch
    from societas.cluster.report import ReportInputError

    try:
        info = run_branch(readable(given, checkpoints=True), at, patch, out)
    except (BranchError, ScenarioConfigError, ReportInputError) as err:
        _fail(err)
    typer.echo(
        f"branch of {given} at {at} (tick {info['branch']['tick']}, from checkpoint "
        f"{info['branch']['from_checkpoint']}): {info['llm_calls_replayed']:,} LLM calls "
        f"replayed, {info['llm_calls_live']:,} live -> {out}"
    )


def register(app: typer.Typer) -> None:
    """Add `interview`, `inspect` and `branch` to the `societas` app."""
    app.command("interview")(interview)
    app.command("inspect")(inspect)
    app.command("branch")(branch)
