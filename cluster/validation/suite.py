"""What a validation suite is: its scenario, conditions, default size and measurements."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from societas.cluster.validation.measured import Measured
from societas.cluster.validation.tables import RunTables

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "validation"


Patch = dict[str, Any] | Callable[[int, int, Path], dict[str, Any]]


def patch_for(patch: Patch, seed: int, agents: int, folder: Path) -> dict[str, Any]:
    """A condition's scenario patch; a callable builds it (and its input files in `folder`)."""
    return patch(seed, agents, folder) if callable(patch) else patch


@dataclass(frozen=True)
class Suite:
    """A scenario file, the conditions run on it (patches), and the measurements of a seed."""

    name: str
    config: Path
    default_agents: int
    max_agents: int | None
    conditions: Mapping[str, Patch]
    measure: Callable[[Mapping[str, RunTables]], dict[str, Measured]]
    notes: Mapping[str, str] = field(default_factory=dict)


def merged(base: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `patch` merged in, mappings key by key (a new dict)."""
    out = dict(base)
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out
