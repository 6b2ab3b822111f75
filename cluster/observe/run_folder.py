"""A run's folder as the user sees it: `config.json`, `run.json` (one `RunRecord`) and
`processes.json`, written at start, updated at every checkpoint and at the end.

An `--out` that already holds a run is refused unless the user says `--overwrite` (the old
run is removed, after ending what it left running) or resumes it. `run.json` says `running`
from the first tick on, `interrupted` after Ctrl-C/SIGTERM/`societas stop` (with the
checkpoint to resume from), `failed` with the error, `completed` at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from societas.cluster.checkpoint import last_complete, write_json_atomic
from societas.cluster.observe.inputs import InputsChange, compare, scenario_inputs

RUN_FILE = "run.json"
CONFIG_FILE = "config.json"
PROCESSES_FILE = "processes.json"
PLAN_FILE = "experiment.json"  # the plan of a folder of seeds or arms (experiments.plan)
RUN_ENV = "SOCIETAS_RUN_ID"  # inherited by every process the run starts (Ray included)
RUN_MARKERS = (RUN_FILE, CONFIG_FILE, "checkpoints", "results", PROCESSES_FILE)
Status = Literal["running", "completed", "interrupted", "failed"]
RUN_SCHEMA_VERSION = 4  # run.json as written now; a record without the field is version 1
PACKAGES = ("societas", "ray", "pyarrow", "pydantic", "qdrant-edge-py", "fastembed", "openai")


class OutDirError(ValueError):
    """`--out` cannot be used as asked (holds another run, not writable, not a folder)."""


def now() -> str:
    """UTC time stamp for records."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def sim_time(tick: int, scenario: Any) -> str:
    """Simulated clock after `tick` ticks, e.g. `day 2 08:30` (days from 0, as in the report,
    surveys and `--at DAY:HOUR`)."""
    minutes = scenario.start_hour * 60 + tick * scenario.tick_minutes
    day, rest = divmod(minutes, 24 * 60)
    return f"day {day} {rest // 60:02d}:{rest % 60:02d}"


def versions() -> dict[str, str]:
    """Versions of Python and the packages a run's results depend on."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


class RunRecord(BaseModel):
    """`run.json`: the run's record. Features add their fields (extra keys are kept)."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = Field(
        1,
        description="Layout of this record: 4 when it records `inputs`, 3 when `llm` (per "
        "model) covers every invocation of a resumed run, 2 when it covered the last one; a "
        "run.json without the field reads as 1 (same fields as 2).",
    )
    status: Status
    scenario: str
    mode: str = Field(description="local or ray")
    run_id: str
    pid: int = Field(description="The driver process (the CLI) that runs it.")
    host: str
    started_at: str
    updated_at: str
    ended_at: str | None = None
    ticks: int = Field(description="Ticks asked for.")
    ticks_done: int = 0
    last_checkpoint: int | None = Field(None, description="Tick of the last complete one.")
    resumes: int = 0
    config_digest: str = ""
    inputs: dict[str, str] | None = Field(
        None,
        description="SHA-256 of each file the run reads besides its config, as at its start "
        "(resumes keep these): `profiles:<file>`, `edges:<file>`, `prompts:<folder>/<file>`, "
        "`code:<folder>/<file>` (the *.py of code_dirs); null when the run started before "
        "runs recorded them.",
    )
    inputs_digest: str = Field("", description="SHA-256 over `inputs`.")
    inputs_changed: list[InputsChange] = Field(
        default_factory=list,
        description="Resumes that went on although inputs differed from `inputs` (`societas "
        "resume --allow-changed-inputs`): when, which resume, each input changed, missing or "
        "new.",
    )
    versions: dict[str, str] = Field(default_factory=dict)
    totals: dict[str, float] = Field(default_factory=dict)
    progress: dict[str, int | float | str] = Field(default_factory=dict)
    error: str | None = None
    llm_fallbacks: int = Field(0, description="Structured LLM calls answered by a fallback.")
    llm_tasks: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Per LLM task, over every invocation of the run (resumes included): "
        "requests, prompt/completion tokens, cache hits, json calls "
        "and their outcomes (valid_first_try, repaired, valid_after_reask, fallbacks, failed), "
        "entries of valid answers dropped as filler (dropped_items), replies that were not "
        "JSON of the schema (invalid), answers by source (source.*) and failed meaning "
        "checks by kind (meaning.*).",
    )
    # experiments (cluster.experiments.arms, cluster.experiments.branch)
    experiment: str | None = Field(None, description="Experiment name when run as an arm.")
    arm: str | None = Field(None, description="Arm name (the run folder is OUT/<arm>).")
    branch: dict[str, Any] | None = Field(
        None, description="Branch origin: parent run, at DAY:HOUR, tick, from_checkpoint."
    )
    llm_calls_replayed: int | None = Field(
        None, description="Branch: calls answered from the parent's cache (or rules) in the past."
    )
    llm_calls_live: int | None = Field(None, description="Branch: calls after the branch point.")


def read_record(run_dir: Path) -> dict[str, Any] | None:
    """`run.json` as a dict (`schema_version` 1 when it predates the field), or None when
    missing or unreadable."""
    try:
        raw = (Path(run_dir) / RUN_FILE).read_bytes()
    except OSError:
        return None
    return record_of(raw)


def record_of(raw: bytes | str) -> dict[str, Any] | None:
    """The bytes of a `run.json` as a dict (`schema_version` 1 when it predates the field),
    or None when they are not a JSON object."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    data.setdefault("schema_version", 1)
    return data


def load_record(run_dir: Path) -> RunRecord | None:
    """`run.json` as a `RunRecord` (any schema version), or None when missing or unreadable."""
    data = read_record(run_dir)
    return None if data is None else RunRecord.model_validate(data)


def holds_run(run_dir: Path) -> bool:
    """Whether the folder holds (part of) a societas run."""
    return any((Path(run_dir) / m).exists() for m in RUN_MARKERS)


def check_out_dir(
    run_dir: Path,
    *,
    overwrite: bool = False,
    resume: bool = False,
    option: str = "--out",
    replace: str = "--overwrite",
) -> None:
    """Raise OutDirError unless `run_dir` can take this run (nothing is changed here); the
    message names the folder by `option` and the way to replace a run by `replace` (the
    CLI's flags, or the Python API's arguments)."""
    run_dir = Path(run_dir)
    where = f"{option} {run_dir}" if option.startswith("-") else f"{option}={str(run_dir)!r}"
    if run_dir.exists() and not run_dir.is_dir():
        raise OutDirError(f"{where}: is a file; name a folder")
    if holds_run(run_dir):
        from societas.cluster.cleanup import driver_alive

        pid = driver_alive(run_dir)
        if pid is not None:
            raise OutDirError(
                f"{where}: a run is still running there (pid {pid}); stop it "
                f"first: societas stop {run_dir}"
            )
    if resume:
        if last_complete(run_dir) is None:
            raise OutDirError(
                f"{run_dir}: no complete checkpoint (checkpoints/tick=K/manifest.json) to "
                "resume from; start it again with `societas run ... --overwrite`"
            )
        return
    if holds_run(run_dir) and not overwrite:
        rec = read_record(run_dir) or {}
        status = rec.get("status", "unknown status")
        what = f"run {rec.get('scenario', '?')!r} ({status})"
        go_on = f", or continue it with `societas resume {run_dir}`"
        go_on = "" if status == "completed" else go_on
        raise OutDirError(
            f"{where}: holds another {what}; choose another {option}, pass "
            f"{replace} to replace it{go_on}"
        )
    if run_dir.is_dir() and not holds_run(run_dir) and any(run_dir.iterdir()) and overwrite:
        raise OutDirError(f"{where}: not empty and not a societas run; not overwriting")
    probe = run_dir if run_dir.is_dir() else _existing_parent(run_dir)
    try:  # a folder made and removed: permission bits alone pass root on read-only places
        os.rmdir(tempfile.mkdtemp(prefix=".societas-probe-", dir=probe))
    except OSError as err:
        raise OutDirError(
            f"{where}: cannot write in {probe} ({err.strerror}); choose another {option}"
        ) from None


SEED_FOLDER = re.compile(r"seed-(\d+)")


def runs_below(folder: Path) -> list[Path]:
    """The runs a folder of arms or seeds holds (`<arm>`, `seed-N`, `seed-N/<arm>`), in
    seed order; [] when `folder` is a run itself or holds none."""
    folder = Path(folder)
    if not folder.is_dir() or holds_run(folder):
        return []

    def order(path: Path) -> tuple[int, str]:
        seed = SEED_FOLDER.fullmatch(path.name)
        return (int(seed[1]), "") if seed else (-1, path.name)

    found: list[Path] = []
    for child in sorted((p for p in folder.iterdir() if p.is_dir()), key=order):
        if holds_run(child):
            found.append(child)
        elif SEED_FOLDER.fullmatch(child.name):
            found += sorted(p for p in child.iterdir() if p.is_dir() and holds_run(p))
    return found


def parent_of_runs(folder: Path) -> str | None:
    """When `folder` holds arms or seeds rather than a run: one line naming them and the run
    folders to pass instead (`runs/lab holds arms control, treatment: pass one of ...`), and
    the resume that finishes them all when the folder has an experiment plan."""
    runs = runs_below(folder)
    planned = (Path(folder) / PLAN_FILE).is_file()
    finish = f"; `societas resume {folder}` finishes them all" if planned else ""
    if not runs:
        if planned and not holds_run(folder):
            return f"{folder} holds an experiment whose runs have not started{finish}"
        return None
    seeds: set[int] = set()
    arms: set[str] = set()
    for run in runs:
        for part in run.relative_to(folder).parts:
            seed = SEED_FOLDER.fullmatch(part)
            if seed:
                seeds.add(int(seed[1]))
            else:
                arms.add(part)
    held = []
    if arms:
        held.append(f"arms {', '.join(sorted(arms))}")
    if seeds:
        held.append(f"seeds {', '.join(map(str, sorted(seeds)))}")
    runs_text = ", ".join(map(str, runs))
    return f"{folder} holds {' and '.join(held)}: pass one of {runs_text}{finish}"


def refuse_parent_of_runs(folder: Path) -> None:
    """Raise OutDirError naming the arms or seeds when `folder` holds them, not a run."""
    message = parent_of_runs(folder)
    if message is not None:
        raise OutDirError(message)


def _existing_parent(path: Path) -> Path:
    """The nearest folder above `path` that exists (to test write rights)."""
    path = path.absolute()
    while not path.exists():
        path = path.parent
    return path


def clear_run(run_dir: Path) -> None:
    """Remove a previous run from `run_dir` (--overwrite), ending what it left running."""
    from societas.cluster.cleanup import cleanup_run

    cleanup_run(run_dir)
    for child in Path(run_dir).iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def config_digest(config: dict[str, Any]) -> str:
    """SHA-256 of the resolved config (canonical JSON)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def record_inputs(
    record: RunRecord, config: dict[str, Any], previous: dict[str, Any] | None
) -> None:
    """The files the run reads in `record`: digested now at a start; on a resume (`previous`
    record) those of the start kept, and the inputs that differ now noted in
    `inputs_changed` (a run recorded before runs had them keeps none)."""
    if previous is None:
        now_ = scenario_inputs([config])
        record.inputs, record.inputs_digest = now_.files, now_.digest
        return
    recorded = previous.get("inputs")
    if not isinstance(recorded, dict):
        return
    record.inputs, record.inputs_digest = recorded, str(previous.get("inputs_digest") or "")
    record.inputs_changed = [
        InputsChange.model_validate(c) for c in previous.get("inputs_changed") or []
    ]
    changes = compare(recorded, scenario_inputs([config]).files)
    if changes:
        change = InputsChange(at=now(), resume=record.resumes, changes=changes)
        record.inputs_changed.append(change)


class RunFolder:
    """Writes a run's `config.json`, `run.json` and `processes.json` through its life."""

    def __init__(self, run_dir: Path, record: RunRecord) -> None:
        self.run_dir = Path(run_dir)
        self.record = record
        self._last_progress = 0.0

    @classmethod
    def start(
        cls,
        run_dir: Path,
        scenario: Any,
        cluster: dict[str, Any],
        mode: str,
        *,
        resume: bool = False,
    ) -> RunFolder:
        """Record the start (or resume) of a run; the folder must have passed check_out_dir."""
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        config = {**scenario.model_dump(mode="json"), "cluster": cluster}
        previous = read_record(run_dir) if resume else None
        stamp = now()
        run_id = os.environ.get(RUN_ENV) or uuid.uuid4().hex[:16]
        record = RunRecord(
            schema_version=RUN_SCHEMA_VERSION,
            status="running",
            scenario=scenario.name,
            mode=mode,
            run_id=run_id,
            pid=os.getpid(),
            host=socket.gethostname(),
            started_at=(previous or {}).get("started_at", stamp),
            updated_at=stamp,
            ticks=scenario.ticks,
            ticks_done=last_complete(run_dir) or 0 if resume else 0,
            last_checkpoint=last_complete(run_dir) if resume else None,
            resumes=int((previous or {}).get("resumes", 0)) + (1 if resume else 0),
            config_digest=config_digest(config),
            versions=versions(),
        )
        record_inputs(record, config, previous if resume else None)
        if resume:  # the invocations before this one (cluster.observe.run_totals)
            from societas.cluster.observe.run_totals import segments_before

            record.segments = segments_before(previous)  # type: ignore[attr-defined]
        folder = cls(run_dir, record)
        if not resume or not (run_dir / CONFIG_FILE).exists():
            write_json_atomic(run_dir / CONFIG_FILE, {**config, "versions": record.versions})
        folder.write()
        folder.record_processes({})
        return folder

    def write(self) -> None:
        """Write run.json atomically."""
        self.record.updated_at = now()
        write_json_atomic(self.run_dir / RUN_FILE, self.record.model_dump(mode="json"))

    def record_processes(self, ray: dict[str, Any]) -> None:
        """processes.json: the driver, the run id its children inherit, what Ray started
        (`ray`: session_dir, pids), each process with its start time, and the processes of
        earlier invocations of this folder that still run (so cleanup can still find them)."""
        import psutil

        from societas.cluster.cleanup import (
            ProcessEntry,
            ProcessesRecord,
            RayStarted,
            read_processes,
        )

        previous = read_processes(self.run_dir)
        earlier = previous.earlier
        if previous.run_id and previous.run_id != self.record.run_id:
            earlier = earlier + previous.ray_processes()
        me = psutil.Process()
        started = [e for e in map(ProcessEntry.of, ray.get("pids") or []) if e is not None]
        record = ProcessesRecord(
            run_id=self.record.run_id,
            host=socket.gethostname(),
            driver=ProcessEntry(pid=me.pid, create_time=me.create_time()),
            ray=RayStarted.model_validate({**ray, "processes": started}),
            earlier=[e for e in earlier if e.running() is not None],
        )
        write_json_atomic(
            self.run_dir / PROCESSES_FILE, record.model_dump(mode="json", exclude_none=True)
        )

    def checkpointed(self, tick: int, totals: dict[str, float]) -> None:
        """A complete checkpoint at `tick`: the record follows."""
        self.record.last_checkpoint = tick
        self.record.ticks_done = tick
        self.record.totals = dict(totals)
        self.write()

    def progress(self, p: Any, sim: str = "", force: bool = False) -> None:
        """Live progress for `societas status RUN` (at most every 2 s)."""
        self.record.ticks_done = max(self.record.ticks_done, p.tick + 1)
        self.record.progress = {
            "sim_time": sim,
            "tick": p.tick + 1,
            "ticks": self.record.ticks,
            "agent_steps_per_s": round(p.agent_steps_per_s, 1),
            "llm_requests": p.llm_requests,
            "llm_tokens": p.llm_tokens,
            "fallbacks": float(getattr(p, "fallbacks", 0) or 0),
            "elapsed_s": round(p.elapsed_s, 1),
        }
        if force or time.monotonic() - self._last_progress > 2.0:
            self._last_progress = time.monotonic()
            self.write()

    def finish(self, status: Status, error: str | None = None, **fields: Any) -> None:
        """Final status (completed, interrupted, failed) and whatever the runtime adds."""
        self.record.status = status
        self.record.error = error
        self.record.ended_at = now()
        last = last_complete(self.run_dir)
        self.record.last_checkpoint = last
        for key, value in fields.items():
            setattr(self.record, key, value)
        if status == "completed":
            self.record.ticks_done = self.record.ticks
        self.write()
