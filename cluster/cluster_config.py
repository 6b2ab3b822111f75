"""The `cluster:` section of a run (group sizing, placement, checkpoints, metrics) and where
it comes from: explicit overrides, the scenario, $SOCIETAS_CLUSTER_CONFIG, defaults."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from societas.cluster.observe.metrics import MetricsConfig


class ClusterConfig(BaseModel):
    """The `cluster:` section of a run config: group sizing, placement, checkpoints, metrics."""

    model_config = ConfigDict(extra="forbid")

    groups: int | Literal["auto"] = Field(
        "auto", description="Agent groups (Ray actors); auto: one per CPU (or resource unit)."
    )
    cpus_per_group: float = Field(1.0, gt=0, description="CPUs each group actor reserves.")
    min_agents_per_group: int = Field(
        500, ge=1, description="auto never makes groups smaller than this."
    )
    placement: Literal["spread", "pack", "resource"] = Field(
        "spread",
        description="spread: SPREAD over nodes; pack: Ray's default; resource: only nodes "
        "offering the custom resource `resource` (spread among them).",
    )
    resource: str | None = Field(None, description="Custom resource name, e.g. societas_group.")
    resource_per_group: float = Field(1.0, gt=0)
    encounters_per_agent: int = Field(
        2, ge=0, le=100, description="Cross-group co-located agents each agent meets per tick."
    )
    checkpoint_every: int | None = Field(
        None,
        ge=0,
        description="Ticks between checkpoints; 0: never; default: every checkpoint_hours.",
    )
    checkpoint_hours: float = Field(
        6.0, gt=0, description="Simulated hours between checkpoints when checkpoint_every unset."
    )
    checkpoint_at_end: bool = Field(True, description="Also checkpoint after the last tick.")
    keep_checkpoints: int = Field(2, ge=0, description="Complete checkpoints kept; 0: all.")
    attach_timeout_s: float = Field(
        30.0, gt=0, le=3600, description="How long attaching to a Ray address may take."
    )
    max_group_restarts: int = Field(3, ge=0, description="Recreations per group per run.")
    agents_in_flight: int = Field(
        256,
        ge=1,
        description="Agents of a group stepping at once in a tick (a sliding window): bounds a "
        "tick's transient RAM in large groups (memory ids are taken in stepping order).",
    )
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)

    @model_validator(mode="after")
    def _resource_named(self) -> ClusterConfig:
        if self.placement == "resource" and not self.resource:
            raise ValueError("placement 'resource' needs cluster.resource (a custom resource name)")
        return self


def checkpoint_ticks(cfg: ClusterConfig, tick_minutes: int) -> int:
    """Ticks between checkpoints: explicit, else every `checkpoint_hours` simulated hours."""
    if cfg.checkpoint_every is not None:
        return cfg.checkpoint_every
    return max(1, round(cfg.checkpoint_hours * 60 / tick_minutes))


def size_groups(cfg: ClusterConfig, agents: int, resources: dict[str, float]) -> int:
    """How many groups: the config's number, or one per free slot, never tiny, never 0."""
    if cfg.groups != "auto":
        groups = int(cfg.groups)
    else:
        slots = math.floor(resources.get("CPU", 1.0) / cfg.cpus_per_group)
        if cfg.placement == "resource" and cfg.resource:
            slots = math.floor(resources.get(cfg.resource, 0.0) / cfg.resource_per_group)
        groups = max(1, min(slots, agents // cfg.min_agents_per_group))
    if groups > agents:
        raise ValueError(f"cluster.groups={groups} is more than the {agents} agents")
    return max(1, groups)


def cluster_problems(err: ValidationError, prefix: str = "cluster") -> list[tuple[str, str]]:
    """(dotted path, message with the rejected value) for each error of a ClusterConfig."""
    out = []
    for e in err.errors():
        path = ".".join([prefix, *(str(p) for p in e["loc"])])
        msg = "unknown field" if e["type"] == "extra_forbidden" else e["msg"]
        if e["type"] != "extra_forbidden" and "input" in e and not isinstance(e["input"], dict):
            msg += f" (got {e['input']!r})"
        out.append((path, msg))
    return out


def cluster_config_of(
    scenario: Any,
    override: ClusterConfig | dict[str, Any] | None,
    cli: dict[str, Any] | None = None,
) -> ClusterConfig:
    """The run's `ClusterConfig`: explicit, else the scenario's `cluster:` section over the
    YAML file named by $SOCIETAS_CLUSTER_CONFIG (fallback) over defaults, then the CLI's
    overrides (`cli`, None values ignored); $SOCIETAS_METRICS_HOST/PORT move the metrics
    endpoint. Raises ScenarioConfigError naming `cluster.<field>` and the value."""
    from societas.agents.scenario import ScenarioConfigError

    if isinstance(override, ClusterConfig):
        data: dict[str, Any] = override.model_dump(exclude_unset=True)
    elif override is not None:
        data = dict(override)
    else:
        section = getattr(scenario, "cluster", None)
        if isinstance(section, BaseModel):
            section = section.model_dump(exclude_unset=True)
        data = {}
        if os.environ.get("SOCIETAS_CLUSTER_CONFIG"):
            data = load_cluster_config(os.environ["SOCIETAS_CLUSTER_CONFIG"]).model_dump(
                exclude_unset=True
            )
        data.update(section or {})
    data.update({k: v for k, v in (cli or {}).items() if v is not None})
    # Operators (and tests) move the metrics endpoint without editing the experiment.
    metrics = dict(data.get("metrics") or {})
    for key, var in (("host", "SOCIETAS_METRICS_HOST"), ("port", "SOCIETAS_METRICS_PORT")):
        if os.environ.get(var):
            metrics[key] = os.environ[var]
    if metrics:
        data["metrics"] = metrics
    try:
        return ClusterConfig.model_validate(data)
    except ValidationError as err:
        raise ScenarioConfigError(cluster_problems(err), "cluster") from None


def load_cluster_config(path: str | Path) -> ClusterConfig:
    """A `ClusterConfig` YAML (deployment settings kept apart from the experiment)."""
    from societas.agents.safe_yaml import UnsafeYAMLError, load_yaml_file

    source = Path(path)
    try:
        raw = load_yaml_file(source)
    except UnsafeYAMLError as err:
        raise ValueError(f"{source}: {err}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{source}: expected a mapping, got {type(raw).__name__}")
    raw = raw.get("cluster", raw)
    try:
        return ClusterConfig.model_validate(raw)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None
