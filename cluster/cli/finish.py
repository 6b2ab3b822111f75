"""`societas resume PARENT` and `status PARENT` on a folder of seeds or arms: every run of the
experiment its plan (experiment.json) names, finished or reported one by one. PARENT may be an
object-store URL: the plan and each child's record are read there, and each child is resumed
or started at its own URL, as `run --seeds/arms --out URL` would."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from pydantic import BaseModel

from societas.cluster.cli.common import EXIT_INTERRUPTED, user_errors
from societas.cluster.cli.ops import elsewhere_line, resume, run_status, running_elsewhere
from societas.cluster.remote_out import (
    child_out,
    driver_alive_at,
    holds_run_at,
    is_url,
    last_complete_at,
    read_record_at,
)

if TYPE_CHECKING:
    from societas.cluster.experiments.plan import Child, ExperimentPlan
    from societas.cluster.observe.inputs import Change


def experiment_status(folder: str, plan: ExperimentPlan) -> dict[str, object]:
    """The plan of a folder (or URL) of seeds or arms and each run's status (nested plans
    too)."""
    from societas.cluster.experiments.plan import read_plan

    runs: dict[str, object] = {}
    for child in plan.children:
        path = child_out(folder, child.folder)
        sub = read_plan(path)
        if sub is not None:
            runs[child.folder] = experiment_status(path, sub)
        else:
            started = read_record_at(path) is not None
            runs[child.folder] = run_status(path) if started else {"status": "not started"}
    return {"experiment": plan.experiment, "kind": plan.kind, "runs": runs}


class ResumeOptions(BaseModel):
    """The options `societas resume` was given, passed on to each run of an experiment."""

    local: bool = False
    address: str | None = None
    checkpoint_every: int | None = None
    keep_checkpoints: int | None = None
    attach_timeout: float | None = None
    budget_tokens: int | None = None
    budget_more: int | None = None
    skip_service_checks: bool = False
    allow_changed_inputs: bool = False
    take_over: bool = False


def finish_experiment(folder: str, plan: ExperimentPlan, given: ResumeOptions) -> None:
    """`societas resume PARENT`: every scenario checked first, then each run of the plan
    (nested plans included) left alone when complete, resumed when interrupted, started when
    it never started; exit 1 when some still run (here, or recorded on another host without
    --take-over), 130 on a new interruption."""
    from societas.cluster.experiments.plan import check_scenarios, note_changed_inputs

    allow = given.allow_changed_inputs
    with user_errors():  # a changed or missing scenario or input: exit 2 before any work
        check_scenarios(folder, plan, allow_changed_inputs=allow)
        if allow:
            note_changed_inputs(folder, plan)
        else:
            refuse_changed_runs(folder, plan)
    again = f"societas resume {shlex.quote(folder)}"
    try:
        running, elsewhere = _finish(folder, plan, given)
    except typer.Exit as stopped:
        if stopped.exit_code == EXIT_INTERRUPTED:
            typer.echo(f"finish the experiment with: {again}", err=True)
        raise
    if running:
        gone = (
            f"; `{again} --take-over` resumes those recorded on another host, once that host "
            "is gone for good"
            if elsewhere
            else ""
        )
        typer.echo(
            f"{folder}: {len(running)} run(s) still running ({', '.join(running)}); "
            f"`{again}` again once they have ended{gone}",
            err=True,
        )
        raise typer.Exit(1)
    typer.echo(f"{folder}: every run of the experiment is complete")
    typer.echo(f"next: societas report {shlex.quote(folder)}")


def _finish(folder: str, plan: ExperimentPlan, given: ResumeOptions) -> tuple[list[str], bool]:
    """Finish each child of `plan` in order; the children left running, and whether one of
    them is recorded as running on another host."""
    from societas.cluster.experiments.arms import mark_arm
    from societas.cluster.experiments.plan import read_plan

    running: list[str] = []
    elsewhere = False
    for child in plan.children:
        path = child_out(folder, child.folder)
        with user_errors():
            sub = read_plan(path)
            begun = sub is None and holds_run_at(path)
            rec = (read_record_at(path) or {}) if begun else {}
            pid = driver_alive_at(path) if begun else None
            last = last_complete_at(path) if begun else None
        if sub is not None:
            more, away = _finish(path, sub, given)
            running, elsewhere = running + more, elsewhere or away
            continue
        if not begun:
            typer.echo(f"{path}: not started; starting it")
            _start(folder, plan, child, given, overwrite=False)
            continue
        status = rec.get("status")
        if status == "completed":
            typer.echo(f"{path}: complete ({rec.get('ticks')} ticks), left as it is")
            continue
        host = running_elsewhere(rec)
        if pid is not None:
            typer.echo(f"{path}: running here (pid {pid}), left alone")
            running.append(path)
            continue
        if host is not None and not given.take_over:
            typer.echo(elsewhere_line(path, rec, "left alone"))
            running.append(path)
            elsewhere = True
            continue
        if host is not None:
            typer.echo(f"{path}: recorded as running on {host}; taking it over (--take-over)")
        if last is None:
            typer.echo(
                f"{path}: {status or 'begun'} before its first checkpoint; starting it again"
            )
            _start(folder, plan, child, given, overwrite=True)
            continue
        resume(
            path,
            local=given.local,
            address=given.address,
            checkpoint_every=given.checkpoint_every,
            keep_checkpoints=given.keep_checkpoints,
            attach_timeout=given.attach_timeout,
            budget_tokens=given.budget_tokens,
            budget_more=given.budget_more,
            skip_service_checks=given.skip_service_checks,
            allow_changed_inputs=given.allow_changed_inputs,
            take_over=given.take_over,
        )
        if child.arm is not None:
            mark_arm(path, plan.experiment, child.arm)
    return running, elsewhere


def refuse_changed_runs(folder: str, plan: ExperimentPlan) -> None:
    """OutDirError naming each file that changed since one of the experiment's unfinished
    runs started (a plan written before plans recorded inputs does not name them itself)."""
    from societas.cluster.observe.inputs import ALLOW_FLAG, refusal
    from societas.cluster.observe.run_folder import OutDirError

    changed = {path: _input_changes(path) for path in _unfinished_runs(folder, plan)}
    changed = {where: changes for where, changes in changed.items() if changes}
    if changed:
        again = f"societas resume {shlex.quote(folder)} {ALLOW_FLAG}"
        raise OutDirError(refusal(changed, "the run started", again))


def _input_changes(where: str) -> dict[str, Change]:
    """`run_input_changes` of a run in a folder or at a URL (its record and its last
    checkpoint's manifest and inbox, what that reads, copied into a temporary folder)."""
    import tempfile

    from societas.cluster.checkpoint import INBOX, MANIFEST
    from societas.cluster.observe.inputs import run_input_changes
    from societas.cluster.observe.run_folder import RUN_FILE
    from societas.cluster.remote_out import fetch_objects

    if not is_url(where):
        return run_input_changes(Path(where))
    last = last_complete_at(where)
    names = [RUN_FILE] + [f"checkpoints/tick={last}/{n}" for n in (MANIFEST, INBOX) if last]
    with tempfile.TemporaryDirectory(prefix="societas-inputs-") as tmp:
        fetch_objects(where, names, Path(tmp))
        return run_input_changes(Path(tmp))


def _unfinished_runs(folder: str, plan: ExperimentPlan) -> list[str]:
    """The runs of the plan (nested plans included) that began and have not completed."""
    from societas.cluster.experiments.plan import runs_of

    return [
        place
        for _, place in runs_of(folder, plan)
        if (read_record_at(place) or {}).get("status") not in (None, "completed")
    ]


def _start(
    folder: str, plan: ExperimentPlan, child: Child, given: ResumeOptions, *, overwrite: bool
) -> None:
    """Start a child as the command that made the plan would have (its seed or arm, its
    options), with the resume's own options for where and how it runs."""
    from societas.cluster.cli.sim import run

    opts = plan.options.model_dump()
    if given.local:
        opts.update(local=True, address=None)
    elif given.address is not None:
        opts.update(local=False, address=given.address)
    for key in ("checkpoint_every", "keep_checkpoints", "attach_timeout", "budget_tokens"):
        if getattr(given, key) is not None:
            opts[key] = getattr(given, key)
    opts["skip_service_checks"] = opts["skip_service_checks"] or given.skip_service_checks
    opts["budget_tokens"] = _start_budget(plan, opts["budget_tokens"], given.budget_more)
    if plan.kind == "seeds":
        opts["seed"] = child.seed
        out, arms = child_out(folder, child.folder), None
    else:
        out, arms = folder, [child.arm or child.folder]
    run(Path(plan.scenario), out=out, seeds=None, arm=arms, overwrite=overwrite, **opts)


def _start_budget(plan: ExperimentPlan, budget: int | None, more: int | None) -> int | None:
    """The token budget of a child that starts now: its own (the plan's, or the scenario's
    `llm.budget`) raised by --budget-more, as the resumed children's are; none stays none."""
    from societas.agents.scenario import load_scenario

    if more is None:
        return budget
    base = budget or getattr(load_scenario(plan.scenario).llm, "budget", None)
    return None if base is None else int(base) + more
