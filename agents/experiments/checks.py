"""Load-time checks of the experiment parts of a scenario: every problem is reported with its
field path and value before anything starts (set keys against the attribute schema, selectors
that match nobody, survey times outside the run, arms, profiles files)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from societas.memory import MemoryConfig
from societas.memory.model.config import check_value

if TYPE_CHECKING:
    from societas.agents.experiments.schema import Selector
    from societas.agents.scenario import ScenarioConfig

Problems = list[tuple[str, str]]
SURVEY_SALT = 10_000  # seeds survey selectors apart from interventions (salt = index)


def tick_at(cfg: ScenarioConfig, day: int, hour: float) -> int:
    """The tick whose interval holds simulated `day`, `hour` (may be < 0 or >= ticks)."""
    minutes = (day * 24 + hour - cfg.start_hour) * 60
    return math.floor(minutes / cfg.tick_minutes + 1e-9)


def memory_config_of(cfg: ScenarioConfig) -> MemoryConfig:
    """The agents' status schema: the built-in attributes plus the scenario's own."""
    from societas.agents.blocks.state import attributes_of

    return MemoryConfig.from_list(
        [*attributes_of(), *(a.memory_attribute() for a in cfg.attributes)]
    )


def _selector_is_everyone(sel: Selector) -> bool:
    return not any(v is not None for k, v in sel.model_dump().items() if k != "all")


def experiment_problems(cfg: ScenarioConfig) -> Problems:
    """Problems of attributes, set interventions, surveys, arms and selectors."""
    from societas.agents.blocks.state import attributes_of

    problems: Problems = []
    builtin = {a.name for a in attributes_of()}
    seen: set[str] = set()
    for i, attr in enumerate(cfg.attributes):
        if attr.name in builtin:
            problems.append((f"attributes.{i}.name", f"{attr.name!r} is a built-in attribute"))
        if attr.name in seen:
            problems.append((f"attributes.{i}.name", f"{attr.name!r} is declared twice"))
        seen.add(attr.name)
    problems += memory_type_problems(cfg)
    if problems:
        return problems
    schema = memory_config_of(cfg)
    for i, iv in enumerate(cfg.interventions):
        for key, value in (iv.values or {}).items():
            where = f"interventions.{i}.values.{key}"
            declared = schema.attributes.get(key)
            if declared is None:
                problems.append(
                    (
                        where,
                        f"unknown status attribute {key!r}; declare it under "
                        "attributes: or use one of the built-in ones",
                    )
                )
                continue
            try:
                check_value(key, declared.type, value)
            except TypeError as err:
                problems.append((where, str(err)))
    survey_ids: set[str] = set()
    for i, sv in enumerate(cfg.surveys):
        if sv.id in survey_ids:
            problems.append((f"surveys.{i}.id", f"survey id {sv.id!r} is used twice"))
        survey_ids.add(sv.id)
        tick = tick_at(cfg, sv.day, sv.hour)
        if not 0 <= tick < cfg.ticks:
            problems.append(
                (
                    f"surveys.{i}.day",
                    f"day {sv.day} hour {sv.hour:g} is tick {tick}, "
                    f"not within the run's ticks 0..{cfg.ticks - 1}",
                )
            )
        for j, q in enumerate(sv.questions):
            if q.attribute is not None and q.attribute not in schema.attributes:
                problems.append(
                    (
                        f"surveys.{i}.questions.{j}.attribute",
                        f"unknown status attribute {q.attribute!r}",
                    )
                )
        problems += _ids_in_range(cfg, sv.select, f"surveys.{i}.select")
    names = [a.name for a in cfg.arms]
    for i, arm in enumerate(cfg.arms):
        if names.count(arm.name) > 1:
            problems.append((f"arms.{i}.name", f"arm name {arm.name!r} is used twice"))
        problems += arm_problems(cfg, i)
    if not problems:
        problems += selector_problems(cfg)
    return problems


def _ids_in_range(cfg: ScenarioConfig, sel: Selector, where: str) -> Problems:
    n = cfg.agents.count
    out = [
        (f"{where}.ids.{j}", f"agent {a} is not in 0..{n - 1}")
        for j, a in enumerate(sel.ids or [])
        if not 0 <= a < n
    ]
    if sel.count is not None and sel.count > n:
        out.append((f"{where}.count", f"{sel.count} is more than the {n} agents"))
    return out


def arm_problems(cfg: ScenarioConfig, index: int) -> Problems:
    """The arm's own scenario (base + patch) validated; its problems prefixed `arms.i.`."""
    from societas.agents.scenario import ScenarioConfigError

    try:
        arm_scenario(cfg, cfg.arms[index].name)
    except ScenarioConfigError as err:
        return [(f"arms.{index}.{path}", msg) for path, msg in err.problems]
    return []


def arm_scenario(cfg: ScenarioConfig, name: str) -> ScenarioConfig:
    """The scenario of one arm: the base with the arm's patch, named `<name>`, no arms."""

    arm = next(a for a in cfg.arms if a.name == name)
    return patched(cfg, arm.overrides, arm.interventions, name=f"{cfg.name}-{arm.name}")


def patched(
    cfg: ScenarioConfig,
    overrides: dict[str, Any],
    interventions: list[Any],
    name: str | None = None,
) -> ScenarioConfig:
    """`cfg` with overrides deep-merged and interventions appended, validated, without arms."""
    from societas.agents.experiments.schema import merge
    from societas.agents.scenario import load_scenario

    data = cfg.model_dump(mode="json", exclude={"arms"})
    data = merge(data, overrides)
    data["interventions"] = [
        *data.get("interventions", []),
        *(iv.model_dump(mode="json") for iv in interventions),
    ]
    if name is not None:
        data["name"] = name
    return load_scenario(data)


def selector_problems(cfg: ScenarioConfig) -> Problems:
    """Selectors (interventions, surveys) that match no agent of the population."""
    targets = [
        (f"interventions.{i}.select", iv.select, i) for i, iv in enumerate(cfg.interventions)
    ]
    targets += [
        (f"surveys.{i}.select", s.select, SURVEY_SALT + i) for i, s in enumerate(cfg.surveys)
    ]
    targets = [t for t in targets if not _selector_is_everyone(t[1])]
    if not targets:
        return []
    from societas.agents.population import population_for

    pop = population_for(cfg)
    problems: Problems = []
    for where, sel, salt in targets:
        if not pop.select(sel, salt, cfg.seed):
            given = {k: v for k, v in sel.model_dump().items() if v not in (None, False)}
            problems.append((where, f"matches no agent: {given}"))
    return problems


def memory_type_problems(cfg: ScenarioConfig) -> Problems:
    """Agent types and their memory profiles: weights valid, and every type given a profile
    under memory.agent_types exists (drawn by agents.types, or a profiles file's `type`)."""
    problems: Problems = []
    for name, weight in cfg.agents.types.items():
        if not name.strip():
            problems.append((f"agents.types.{name}", "an agent type name must not be empty"))
        if not math.isfinite(weight) or weight < 0:
            problems.append((f"agents.types.{name}", f"weight must be >= 0, got {weight!r}"))
    if cfg.agents.types and not sum(cfg.agents.types.values()) > 0:
        problems.append(("agents.types", "at least one type needs a weight > 0"))
    known = set(cfg.agents.types) or {"citizen"}
    if cfg.agents.profiles is not None:
        known |= file_types(cfg)
    for name in cfg.memory.agent_types:
        if name not in known:
            problems.append(
                (
                    f"memory.agent_types.{name}",
                    f"no agent has type {name!r}; agent types are {sorted(known)} "
                    "(agents.types, or a `type` column of agents.profiles)",
                )
            )
    return problems


def file_types(cfg: ScenarioConfig) -> set[str]:
    """The `type` values of the profiles file (empty when it has no such column)."""
    from societas.agents.experiments.profiles import ProfileFileError, load_profiles

    assert cfg.agents.profiles is not None
    attributes: dict[str, str] = {a.name: a.type for a in cfg.attributes}
    try:
        rows = load_profiles(cfg.agents.profiles, attributes, [t.name for t in cfg.topics])
    except (ProfileFileError, OSError, ValueError):
        return set()  # reported where the population is read, with file, row and column
    return {str(r["profile"]["type"]) for r in rows if "type" in r["profile"]}
