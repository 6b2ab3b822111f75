"""The `cluster:` section of a run (group sizing, placement, checkpoints, metrics) and where
it comes from: explicit overrides, the scenario, $SOCIETAS_CLUSTER_CONFIG, defaults."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from societas.cluster.metrics import MetricsConfig


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
    checkpoint_every: int = Field(0, ge=0, description="Ticks between checkpoints; 0: never.")
    keep_checkpoints: int = Field(2, ge=0, description="Complete checkpoints kept; 0: all.")
    max_group_restarts: int = Field(3, ge=0, description="Recreations per group per run.")
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)

    @model_validator(mode="after")
    def _resource_named(self) -> ClusterConfig:
        if self.placement == "resource" and not self.resource:
            raise ValueError("placement 'resource' needs cluster.resource (a custom resource name)")
        return self


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


def cluster_config_of(
    scenario: Any, override: ClusterConfig | dict[str, Any] | None
) -> ClusterConfig:
    """The run's `ClusterConfig`: explicit, else the scenario's `cluster:` section, else the
    YAML file named by $SOCIETAS_CLUSTER_CONFIG, else defaults; $SOCIETAS_METRICS_HOST/PORT
    override the metrics endpoint."""
    if isinstance(override, ClusterConfig):
        return override
    if override is not None:
        return ClusterConfig.model_validate(override)
    section = getattr(scenario, "cluster", None)
    if isinstance(section, BaseModel):
        section = section.model_dump()
    if not section and os.environ.get("SOCIETAS_CLUSTER_CONFIG"):
        section = load_cluster_config(os.environ["SOCIETAS_CLUSTER_CONFIG"]).model_dump()
    data = dict(section or {})
    # Operators (and tests) move the metrics endpoint without editing the experiment.
    metrics = dict(data.get("metrics") or {})
    for key, var in (("host", "SOCIETAS_METRICS_HOST"), ("port", "SOCIETAS_METRICS_PORT")):
        if os.environ.get(var):
            metrics[key] = os.environ[var]
    if metrics:
        data["metrics"] = metrics
    return ClusterConfig.model_validate(data)


def load_cluster_config(path: str | Path) -> ClusterConfig:
    """A `ClusterConfig` YAML (deployment settings kept apart from the experiment)."""
    import yaml

    source = Path(path)
    raw = yaml.safe_load(source.read_text()) or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{source}: expected a mapping, got {type(raw).__name__}")
    raw = raw.get("cluster", raw)
    try:
        return ClusterConfig.model_validate(raw)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None
