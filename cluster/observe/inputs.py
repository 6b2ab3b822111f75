"""The files a run reads besides its config, each with its SHA-256: the scenario YAML (for an
experiment's plan), the profiles file, the network's edge list, the prompt templates and the
Python of the code folders. `run.json` and `experiment.json` record them at the start, so
that `societas resume` refuses to go on from files changed since (unless told to, and then
says which changed in the record), instead of finishing a run with two versions of them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

Change = Literal["changed", "missing", "new"]
ALLOW_FLAG = "--allow-changed-inputs"
CODE_SUFFIXES = (".py",)  # what a code folder contributes: the modules blocks import
KINDS = {"profiles": "profiles file", "edges": "edge list"}


class ScenarioInputs(BaseModel):
    """The files a scenario reads, by label, and one digest over them all."""

    files: dict[str, str] = Field(
        default_factory=dict,
        description="Label -> SHA-256: `scenario`, `profiles:<file>`, `edges:<file>`, "
        "`prompts:<folder>/<file>`, `code:<folder>/<file>`.",
    )
    digest: str = Field("", description="SHA-256 over the sorted labels and their digests.")


class InputsChange(BaseModel):
    """A resume that went on although inputs differed from those of the start."""

    at: str = Field(description="UTC time of the resume (ISO 8601).")
    resume: int | None = Field(None, description="Which resume of the run (run.json).")
    changes: dict[str, Change] = Field(
        description="Label -> changed, missing (gone since) or new (a file added since)."
    )


def config_of(scenario: Any) -> dict[str, Any]:
    """A scenario as the mapping `config.json` stores (resolved paths), from a model or dict."""
    if isinstance(scenario, Mapping):
        return dict(scenario)
    dumped: dict[str, Any] = scenario.model_dump(mode="json")
    return dumped


def _roots(config: Mapping[str, Any]) -> list[tuple[str, Path]]:
    """(kind, path) of each file or folder the config names, in the config's order."""
    found: list[tuple[str, Path]] = []
    agents = config.get("agents")
    network = config.get("network")
    if isinstance(agents, Mapping) and agents.get("profiles"):
        found.append(("profiles", Path(str(agents["profiles"]))))
    if isinstance(network, Mapping) and network.get("edges"):
        found.append(("edges", Path(str(network["edges"]))))
    if config.get("prompts"):
        found.append(("prompts", Path(str(config["prompts"]))))
    found += [("code", Path(str(folder))) for folder in config.get("code_dirs") or []]
    return found


def _walk(folder: Path, suffixes: tuple[str, ...] | None) -> list[Path]:
    """Files under `folder` (with one of `suffixes`, or all), hidden and cache folders left
    out, sorted; [] when it is not a folder."""
    found: list[Path] = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in files:
            if not name.startswith(".") and (suffixes is None or name.endswith(suffixes)):
                found.append(Path(top) / name)
    return sorted(found)


def input_files(configs: Iterable[Any], yaml: Path | None = None) -> dict[str, Path]:
    """Label -> path of every file the scenarios read that exists now (see ScenarioInputs)."""
    out: dict[str, Path] = {}
    if yaml is not None and Path(yaml).is_file():
        out["scenario"] = Path(yaml)
    shown: dict[tuple[str, str], Path] = {}  # a folder is shown by its name, unless taken
    for config in configs:
        for kind, path in _roots(config_of(config)):
            if kind in KINDS:
                if path.is_file():
                    out[f"{kind}:{path.name}"] = path
                continue
            name = path.name
            if shown.setdefault((kind, name), path.absolute()) != path.absolute():
                name = str(path.absolute())
            suffixes = CODE_SUFFIXES if kind == "code" else None
            for file in _walk(path, suffixes):
                out[f"{kind}:{name}/{file.relative_to(path).as_posix()}"] = file
    return dict(sorted(out.items()))


def sha256_of(path: Path) -> str:
    """SHA-256 of a file's bytes, read in chunks (a profiles file may be large)."""
    with Path(path).open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def scenario_inputs(configs: Iterable[Any], yaml: Path | None = None) -> ScenarioInputs:
    """The digests of every file the scenarios (models or `config.json` mappings) read, and
    of the YAML when given."""
    files = {label: sha256_of(path) for label, path in input_files(configs, yaml).items()}
    lines = "".join(f"{label}\t{digest}\n" for label, digest in files.items())
    return ScenarioInputs(files=files, digest=hashlib.sha256(lines.encode()).hexdigest())


def yaml_configs(path: Path) -> list[dict[str, Any]]:
    """The configs of a scenario file without reading what they name: the scenario and each
    of its arms (a sweep's included), paths resolved as `load_scenario` resolves them."""
    from societas.agents.experiments.schema import merge
    from societas.agents.safe_yaml import load_yaml_file
    from societas.agents.scenario import paths_relative_to

    raw = load_yaml_file(path)
    if not isinstance(raw, dict):
        return []
    raw = paths_relative_to(raw, Path(path).parent)
    if raw.get("sweep"):
        from societas.agents.experiments.sweep import expand_sweep

        raw = expand_sweep(raw)
    arms = [a for a in raw.get("arms") or [] if isinstance(a, dict)]
    return [raw, *(merge(raw, a.get("overrides") or {}) for a in arms)]


def compare(recorded: Mapping[str, str], now: Mapping[str, str]) -> dict[str, Change]:
    """Label -> how an input differs now from what was recorded (only those that differ)."""
    out: dict[str, Change] = {}
    for label in sorted({*recorded, *now}):
        if label not in now:
            out[label] = "missing"
        elif label not in recorded:
            out[label] = "new"
        elif recorded[label] != now[label]:
            out[label] = "changed"
    return out


def describe(label: str) -> str:
    """An input as a user names it: `code/my_blocks.py`, `profiles file people.csv`."""
    kind, _, name = label.partition(":")
    if kind == "scenario":
        return "the scenario YAML"
    return f"{KINDS[kind]} {name}" if kind in KINDS else name


def change_lines(changes: Mapping[str, Change], since: str) -> list[str]:
    """One line per input that differs: `code/x.py changed since the run started`."""
    words = {
        "changed": f"changed since {since}",
        "missing": "is missing",
        "new": f"is new since {since}",
    }
    return [f"{describe(label)} {words[change]}" for label, change in changes.items()]


def refusal(changed: Mapping[str, Mapping[str, Change]], since: str, again: str) -> str:
    """The message of a resume refused for changed inputs: one `error:` line per input of
    each run or experiment (`changed`: its folder -> its inputs that differ), then how to go
    on (`again`: the command with the flag that allows it)."""
    lines = [
        f"error: {where}: {line}"
        for where, changes in changed.items()
        for line in change_lines(changes, since)
    ]
    lines.append(f"restore them, or go on with them anyway: {again} (the record says which)")
    return "\n".join(lines)


def run_input_changes(run_dir: Path) -> dict[str, Change]:
    """How the files a run reads differ now from those its run.json recorded at the start
    (read through the config of its last complete checkpoint, which a resume uses); {} for a
    run that recorded none (written before the record had them) or has no checkpoint."""
    from societas.cluster.observe.run_folder import read_record
    from societas.cluster.ray.runtime import resume_config

    recorded = (read_record(run_dir) or {}).get("inputs")
    if not isinstance(recorded, dict):
        return {}
    try:
        scenario = resume_config(run_dir)["scenario"]
    except (FileNotFoundError, ValueError):
        return {}
    return compare(recorded, scenario_inputs([scenario]).files)
