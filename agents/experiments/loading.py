"""Helpers of `load_scenario` for experiments: suggestions for misspelt fields, paths relative
to the scenario file, and the agent count of a profiles file."""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from societas.agents.scenario import ScenarioConfig


def did_you_mean(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """'; did you mean X?' for a misspelt field, from the fields of the model it sits in."""
    model: Any = root
    for part in loc[:-1]:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(part)
        if field is None:
            return ""
        stack, model = [field.annotation], None
        while stack:
            ann = stack.pop()
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                model = ann
                break
            if typing.get_origin(ann) in (list, typing.Union, types.UnionType):
                stack += list(typing.get_args(ann))
    if model is None:
        return ""
    close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def resolve_paths(raw: dict[str, Any], base: Path) -> dict[str, Any]:
    """Profiles file and code folders relative to the scenario file's folder."""
    raw = dict(raw)
    agents = raw.get("agents")
    if isinstance(agents, dict) and isinstance(agents.get("profiles"), str | Path):
        agents = dict(agents)
        agents["profiles"] = str((base / agents["profiles"]).resolve())
        raw["agents"] = agents
    if isinstance(raw.get("prompts"), str):  # a prompt folder, like the profiles file
        raw["prompts"] = str((base / raw["prompts"]).resolve())
    if raw.get("blocks") and not raw.get("code_dirs"):
        raw["code_dirs"] = [str(base.resolve())]
    elif isinstance(raw.get("code_dirs"), list):
        raw["code_dirs"] = [str((base / str(d)).resolve()) for d in raw["code_dirs"]]
    return raw


def apply_profiles(cfg: ScenarioConfig) -> ScenarioConfig:
    """agents.count from the profiles file (or its first `count` rows); errors name the file."""
    from societas.agents.experiments.profiles import ProfileFileError, load_profiles
    from societas.agents.scenario import ScenarioConfigError

    pop = cfg.agents
    if pop.profiles is None:
        return cfg
    types: dict[str, str] = {a.name: a.type for a in cfg.attributes}
    try:
        rows = load_profiles(pop.profiles, types, [t.name for t in cfg.topics])
    except ProfileFileError as err:
        raise ScenarioConfigError([("agents.profiles", str(err))]) from None
    count = pop.count if "count" in pop.model_fields_set else len(rows)
    if count > len(rows):
        raise ScenarioConfigError(
            [("agents.count", f"{count} is more than the {len(rows)} rows of {pop.profiles}")]
        )
    return cfg.model_copy(update={"agents": pop.model_copy(update={"count": count})})
