"""The repo's scenario YAMLs as dicts with overrides, shared by the scenario and report tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def scenario(name: str, **over: Any) -> dict[str, Any]:
    """configs/<name>.yaml as a dict with top-level overrides (dicts merged one level)."""
    data = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data
