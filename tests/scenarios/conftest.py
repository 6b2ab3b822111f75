"""Helpers: run a scenario YAML (with overrides) in process and read its results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def scenario(name: str, **over: Any) -> dict[str, Any]:
    """configs/<name>.yaml as a dict, with nested overrides merged in."""
    data = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


@pytest.fixture
def run(tmp_path, bm25_embedder):
    """`await run(cfg, "name", groups=1)` -> run directory."""
    from societas.cluster.local import run_local_async

    async def go(cfg: dict[str, Any], label: str = "run", **kw: Any) -> Path:
        out = tmp_path / label
        await run_local_async(cfg, out, embedder=bm25_embedder, **kw)
        return out

    return go
