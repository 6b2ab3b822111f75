"""Custom agents from the scenario: extra status attributes, blocks by import path, and the
run's LLM config (every run keeps its response cache by default, for branches and reruns).

Blocks are imported only from a scenario the user submits (the engine builds them from the
scenario it was given); interview, inspect and branch never import a path read from a run
folder (see `societas.cluster.experiments.arms`).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from societas.agents.experiments.checks import memory_config_of

if TYPE_CHECKING:
    from societas.agents.agent import Block
    from societas.agents.llm.config import LLMConfig
    from societas.agents.scenario import ScenarioConfig

__all__ = ["BlockImportError", "custom_keys", "import_blocks", "memory_config_of", "run_llm_config"]


class BlockImportError(ValueError):
    """A `blocks:` entry that cannot be imported or is not a Block; names the path."""


def custom_keys(cfg: ScenarioConfig) -> tuple[str, ...]:
    """Names of the scenario's own status attributes (kept in `agent.state` like hot keys)."""
    return tuple(a.name for a in cfg.attributes)


def import_blocks(cfg: ScenarioConfig) -> list[Block]:
    """Instances of the scenario's blocks (`module:Class`), importable from its code_dirs."""
    for folder in cfg.code_dirs:
        if str(folder) not in sys.path and Path(folder).is_dir():
            sys.path.insert(0, str(folder))
    out: list[Block] = []
    for i, spec in enumerate(cfg.blocks):
        module_name, _, class_name = spec.path.partition(":")
        where = f"blocks.{i}.path"
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            dirs = [str(d) for d in cfg.code_dirs]
            raise BlockImportError(
                f"{where}: cannot import {module_name!r} ({err}); searched {dirs} and sys.path"
            ) from None
        cls = getattr(module, class_name, None)
        if cls is None:
            raise BlockImportError(f"{where}: {module_name!r} has no {class_name!r}")
        params = dict(spec.params)
        try:
            accepts = inspect.signature(cls).parameters
            block = cls(scenario=cfg, **params) if "scenario" in accepts else cls(**params)
        except TypeError as err:
            raise BlockImportError(f"{where}: {spec.path}({params}) failed: {err}") from None
        forward = getattr(block, "forward", None)
        if not isinstance(getattr(block, "name", None), str) or not (
            forward is not None and inspect.iscoroutinefunction(forward)
        ):
            raise BlockImportError(
                f"{where}: {spec.path} is not a Block (needs a `name` str and "
                "`async def forward(self, ctx)`)"
            )
        out.append(block)
    return out


def run_llm_config(cfg: ScenarioConfig, run_dir: Path) -> LLMConfig:
    """The scenario's LLM config; with keep_llm_cache and no cache configured, a read-write
    response cache in RUN_DIR/llm-cache (a branch replays its parent's past from it)."""
    llm = cfg.llm
    if cfg.keep_llm_cache and llm.provider != "rules" and llm.cache.mode == "off":
        cache = llm.cache.model_copy(update={"mode": "read-write", "dir": run_dir / "llm-cache"})
        return llm.model_copy(update={"cache": cache})
    return llm
