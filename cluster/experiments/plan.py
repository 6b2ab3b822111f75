"""The plan of an experiment of several runs: `experiment.json` in the folder that holds its
seeds (`OUT/seed-N`) or arms (`OUT/<arm>`), written before the first child starts, so that
`societas resume OUT` can finish the whole experiment: resume the interrupted children and
start those that never started, as the original command would have. OUT may be an
object-store URL: the plan is then the object OUT/experiment.json, the children OUT/<name>."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from societas.cluster.observe.inputs import (
    ALLOW_FLAG,
    Change,
    InputsChange,
    ScenarioInputs,
    compare,
    describe,
    refusal,
    scenario_inputs,
    sha256_of,
    yaml_configs,
)
from societas.cluster.observe.run_folder import PLAN_FILE, OutDirError, now
from societas.cluster.remote_out import (
    RemoteOutError,
    child_out,
    is_url,
    read_object,
    write_json_at,
)

PLAN_SCHEMA_VERSION = 2  # 2: records `inputs`; a plan of version 1 is checked on its YAML
# The options that change what the children compute: a plan written with other values is
# another experiment, never merged into this one.
WHAT_OPTIONS = ("agents", "ticks", "seed", "groups")


class PlanError(OutDirError):
    """An experiment plan that cannot be used as asked (unreadable, changed scenario)."""


class RunOptions(BaseModel):
    """The options of `societas run` a child is started with (never --overwrite)."""

    model_config = ConfigDict(extra="forbid")

    local: bool = False
    address: str | None = None
    agents: int | None = Field(None, ge=2)
    ticks: int | None = Field(None, ge=1)
    seed: int | None = Field(None, ge=0)
    groups: int | None = Field(None, ge=1)
    checkpoint_every: int | None = Field(None, ge=0)
    keep_checkpoints: int | None = Field(None, ge=0)
    attach_timeout: float | None = Field(None, gt=0)
    skip_service_checks: bool = False
    budget_tokens: int | None = Field(None, ge=1)


class Child(BaseModel):
    """One run of the experiment: its folder under the parent and its seed or arm."""

    model_config = ConfigDict(extra="forbid")

    folder: str = Field(description="Folder name under the parent: seed-N or the arm's name.")
    seed: int | None = Field(None, description="The seed (kind seeds).")
    arm: str | None = Field(None, description="The arm (kind arms).")


class ExperimentPlan(BaseModel):
    """`experiment.json`: what the command that made this folder of runs asked for."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(PLAN_SCHEMA_VERSION, description="Layout of this file.")
    kind: Literal["seeds", "arms"]
    experiment: str = Field(description="The scenario's name.")
    scenario: str = Field(description="The scenario YAML, as an absolute path.")
    scenario_digest: str = Field(description="SHA-256 of the scenario YAML's bytes.")
    inputs: dict[str, str] | None = Field(
        None,
        description="SHA-256 of each file the scenario and its arms read (the YAML, profiles, "
        "edges, prompts, code: labels as in run.json), as when the plan was first written; "
        "null in a plan written before plans recorded them.",
    )
    inputs_digest: str | None = Field(None, description="SHA-256 over `inputs`.")
    inputs_changed: list[InputsChange] = Field(
        default_factory=list,
        description="Resumes that went on although inputs differed from `inputs` "
        "(`societas resume OUT --allow-changed-inputs`): when, each input that differed.",
    )
    children: list[Child]
    options: RunOptions
    created_at: str = Field(default_factory=now)

    @model_validator(mode="after")
    def _children_of_their_kind(self) -> ExperimentPlan:
        """Each child names its seed (kind seeds) or arm (kind arms), once."""
        field = "seed" if self.kind == "seeds" else "arm"
        for child in self.children:
            if getattr(child, field) is None:
                raise ValueError(f"child {child.folder!r} has no {field}")
        if len({c.folder for c in self.children}) != len(self.children):
            raise ValueError("children: a folder is named twice")
        return self

    def same_experiment(self, other: ExperimentPlan) -> bool:
        """Whether `other` asks for runs of this experiment (more seeds, other arms of it)."""
        ours, theirs = self.options.model_dump(), other.options.model_dump()
        return (
            self.kind == other.kind
            and self.scenario_digest == other.scenario_digest
            and not input_differences(self, other)
            and all(ours[key] == theirs[key] for key in WHAT_OPTIONS)
        )


def experiment_inputs(path: Path) -> ScenarioInputs:
    """The digests of the scenario file and of every file it and its arms read."""
    return scenario_inputs(yaml_configs(path), Path(path))


def input_differences(old: ExperimentPlan, new: ExperimentPlan) -> dict[str, Change]:
    """The inputs `new` read otherwise than `old` (none when either predates the record)."""
    if old.inputs is None or new.inputs is None or old.inputs_digest == new.inputs_digest:
        return {}
    return compare(old.inputs, new.inputs)


def new_plan(
    kind: Literal["seeds", "arms"],
    config: Path,
    experiment: str,
    children: list[Child],
    options: dict[str, Any],
) -> ExperimentPlan:
    """The plan of a command about to start `children` of `config` with `options` (the
    options `RunOptions` does not carry, such as overwrite, are left out)."""
    known = {k: v for k, v in options.items() if k in RunOptions.model_fields}
    inputs = experiment_inputs(Path(config))
    return ExperimentPlan(
        kind=kind,
        experiment=experiment,
        scenario=str(Path(config).resolve()),
        scenario_digest=inputs.files["scenario"],
        inputs=inputs.files,
        inputs_digest=inputs.digest,
        children=children,
        options=RunOptions.model_validate(known),
    )


def read_plan(folder: Path | str) -> ExperimentPlan | None:
    """The plan of a folder or URL, or None when it has none; PlanError naming the file when
    it cannot be read."""
    path = child_out(str(folder), PLAN_FILE)
    try:
        if is_url(folder):
            raw = read_object(str(folder), PLAN_FILE)
        else:
            raw = Path(path).read_bytes() if Path(path).is_file() else None
        if raw is None:
            return None
        data = json.loads(raw)
    except RemoteOutError as err:  # the store itself: no such scheme, unreachable, refused
        raise PlanError(f"{folder}: {str(err).removeprefix(f'{folder}: ')}") from None
    except (OSError, ValueError) as err:
        raise PlanError(f"{path}: not readable as JSON ({err})") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(version, int) and version > PLAN_SCHEMA_VERSION:
        raise PlanError(
            f"{path}: schema_version {version} was written by a newer societas (this one "
            f"reads {PLAN_SCHEMA_VERSION})"
        )
    try:
        return ExperimentPlan.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(map(str, first["loc"])) or "<root>"
        raise PlanError(f"{path}: {where}: {first['msg']}") from None


def record_plan(folder: Path | str, plan: ExperimentPlan, *, overwrite: bool = False) -> None:
    """Write `plan` into `folder` (or under a URL) before its children start: a plan already
    there for the same experiment gains the new children; one for another experiment is
    refused (PlanError, nothing written) unless `overwrite`, which replaces it."""
    old = read_plan(folder)
    if old is not None and old.same_experiment(plan):
        names = {c.folder for c in old.children}
        added = [c for c in plan.children if c.folder not in names]
        plan = old.model_copy(update={"children": old.children + added})
    elif old is not None and not overwrite and started(folder, old):
        raise PlanError(
            f"--out {folder}: holds the runs of another experiment ({differences(old, plan)}; "
            f"see {child_out(str(folder), PLAN_FILE)}); choose another --out, or pass "
            "--overwrite to replace it"
        )
    try:
        write_plan(folder, plan)
    except OSError as err:
        raise PlanError(f"--out {folder}: cannot write {PLAN_FILE} ({err.strerror})") from None


def write_plan(folder: Path | str, plan: ExperimentPlan) -> None:
    """Write `plan` as the plan of a folder (atomically) or of a URL (one object)."""
    write_json_at(folder, PLAN_FILE, plan.model_dump(mode="json"))


def started(folder: Path | str, plan: ExperimentPlan) -> bool:
    """Whether any child of `plan` has begun (a run or a plan of its own in its folder)."""
    from societas.cluster.remote_out import holds_run_at

    places = [child_out(str(folder), child.folder) for child in plan.children]
    return any(holds_run_at(place) or read_plan(place) is not None for place in places)


def differences(old: ExperimentPlan, new: ExperimentPlan) -> str:
    """What makes `new` another experiment than `old`, e.g. `ticks 40, not 20`."""
    found = []
    if old.kind != new.kind:
        found.append(f"{old.kind}, not {new.kind}")
    if old.scenario_digest != new.scenario_digest:
        found.append(f"scenario {old.scenario} as it was then, not {new.scenario} as it is now")
    changed = input_differences(old, new)
    if changed:
        found.append(f"{', '.join(map(describe, changed))} as then, not as now")
    was, now_ = old.options.model_dump(), new.options.model_dump()
    found += [f"{key} {was[key]}, not {now_[key]}" for key in WHAT_OPTIONS if was[key] != now_[key]]
    return "; ".join(found)


def check_scenario(
    folder: Path | str, plan: ExperimentPlan, *, allow_changed_inputs: bool = False
) -> Path:
    """The plan's scenario file, unchanged since the plan was written, and the files it reads
    too unless `allow_changed_inputs`; PlanError naming each one otherwise (a resume must
    start the missing runs from the same scenario)."""
    path = Path(plan.scenario)
    if not path.is_file():
        raise PlanError(
            f"{path}: the scenario of {folder} ({PLAN_FILE}) no longer exists; put it back to "
            "finish the experiment"
        )
    if sha256_of(path) != plan.scenario_digest:
        raise PlanError(
            f"{path}: the scenario changed since {folder} was started (its digest differs "
            f"from {PLAN_FILE}'s); restore it, or run the changed scenario into another --out"
        )
    changes = input_changes(plan)
    if changes and not allow_changed_inputs:
        again = f"societas resume {shlex.quote(str(folder))} {ALLOW_FLAG}"
        raise PlanError(refusal({str(folder): changes}, "the experiment started", again))
    return path


def input_changes(plan: ExperimentPlan) -> dict[str, Change]:
    """How the files the plan's scenario reads differ now from those the plan recorded ({}
    for a plan written before plans recorded them)."""
    if plan.inputs is None:
        return {}
    return compare(plan.inputs, experiment_inputs(Path(plan.scenario)).files)


def check_scenarios(
    folder: Path | str, plan: ExperimentPlan, *, allow_changed_inputs: bool = False
) -> None:
    """`check_scenario` for this plan and those of its children that are experiments of their
    own (the arms of each seed-N)."""
    check_scenario(folder, plan, allow_changed_inputs=allow_changed_inputs)
    for child in plan.children:
        place = child_out(str(folder), child.folder)
        sub = read_plan(place)
        if sub is not None:
            check_scenarios(place, sub, allow_changed_inputs=allow_changed_inputs)


def note_changed_inputs(folder: Path | str, plan: ExperimentPlan) -> None:
    """Add to `inputs_changed` of this plan and of its children's plans the inputs that
    differ now, before a resume goes on with them (`--allow-changed-inputs`)."""
    changes = input_changes(plan)
    if changes:
        noted = [*plan.inputs_changed, InputsChange(at=now(), changes=changes)]
        write_plan(folder, plan.model_copy(update={"inputs_changed": noted}))
    for child in plan.children:
        place = child_out(str(folder), child.folder)
        sub = read_plan(place)
        if sub is not None:
            note_changed_inputs(place, sub)


def runs_of(
    folder: Path | str, plan: ExperimentPlan, prefix: str = ""
) -> Iterator[tuple[str, str]]:
    """(name under the parent, folder or URL) of each run of the experiment, in the plan's
    order, the runs of nested plans (`seed-0/control`) included."""
    for child in plan.children:
        place = child_out(str(folder), child.folder)
        sub = read_plan(place)
        if sub is not None:
            yield from runs_of(place, sub, f"{prefix}{child.folder}/")
        else:
            yield f"{prefix}{child.folder}", place


def not_finished(folder: Path | str, plan: ExperimentPlan) -> list[str]:
    """The children of the experiment (in a folder or at a URL) that have not completed, each
    with its state (`seed-2 (not started)`, `seed-0/control (interrupted)`), nested plans
    included."""
    from societas.cluster.remote_out import holds_run_at, read_record_at

    found: list[str] = []
    for name, place in runs_of(folder, plan):
        began = holds_run_at(place)
        status = (read_record_at(place) or {}).get("status") if began else "not started"
        if status != "completed":
            found.append(f"{name} ({status or 'no run.json'})")
    return found
