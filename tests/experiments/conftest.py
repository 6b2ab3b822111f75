"""Small scenarios for the experiment tests (rules policy, a dozen agents, few ticks)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

CODE = Path(__file__).parent / "code"
ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "configs" / "examples" / "lab"

BASE: dict[str, Any] = {
    "name": "exp",
    "seed": 3,
    "ticks": 12,
    "start_hour": 7,
    "agents": {"count": 12},
    "network": {"k": 4},
    "map": {"workplaces": 2, "shops": 1, "cafes": 1, "parks": 1, "shelters": 1},
    "topics": [{"name": "basic income"}],
    "attributes": [{"name": "mood", "type": "float", "default": 0.5}],
}


def scenario(**over: Any) -> dict[str, Any]:
    """BASE with top-level keys replaced."""
    data = copy.deepcopy(BASE)
    data.update(copy.deepcopy(over))
    return data


@pytest.fixture
def probe_scenario() -> dict[str, Any]:
    """BASE plus the probe block from tests/experiments/code."""
    return scenario(
        blocks=[{"path": "probe_blocks:ProbeBlock", "params": {"step": 0.01}}],
        code_dirs=[str(CODE)],
    )
