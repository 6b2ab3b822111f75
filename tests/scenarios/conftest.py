"""Helpers: run a scenario YAML (with overrides) in process and read its results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenario_configs import CONFIGS, scenario

__all__ = ["CONFIGS", "scenario"]


@pytest.fixture
def run(tmp_path, bm25_embedder):
    """`await run(cfg, "name", groups=1)` -> run directory."""
    from societas.cluster.loop.local import run_local_async

    async def go(cfg: dict[str, Any], label: str = "run", **kw: Any) -> Path:
        out = tmp_path / label
        await run_local_async(cfg, out, embedder=bm25_embedder, **kw)
        return out

    return go
