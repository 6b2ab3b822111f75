"""`run_local`: a whole scenario in one process, no Ray: G in-process GroupEngines driven by
the same Coordinator the Ray runtime uses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from societas.agents.runtime.engine import Concurrency, GroupEngine
from societas.agents.scenario import ScenarioConfig, load_scenario
from societas.cluster.coordinator import Coordinator, Progress, RunSummary, TickReport
from societas.memory.embedding import Embedder, build_embedder


def partition(agent_count: int, groups: int) -> list[list[int]]:
    """Contiguous, near-equal blocks of agent ids, one per group."""
    groups = max(1, min(groups, agent_count))
    base, extra = divmod(agent_count, groups)
    out, start = [], 0
    for g in range(groups):
        size = base + (1 if g < extra else 0)
        out.append(list(range(start, start + size)))
        start += size
    return out


def write_run_manifest(
    out: Path, scenario: ScenarioConfig, summary: RunSummary, extra: dict[str, Any] | None = None
) -> None:
    """`config.json` (the resolved scenario) and `run.json` (totals, wall times) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(scenario.model_dump_json(indent=2) + "\n")
    data = {"scenario": scenario.name, **summary.model_dump(), **(extra or {})}
    (out / "run.json").write_text(json.dumps(data, indent=2, default=str) + "\n")


async def run_local_async(
    config: ScenarioConfig | dict[str, Any] | str | Path,
    out: str | Path,
    groups: int | None = None,
    *,
    agents: int | None = None,
    ticks: int | None = None,
    seed: int | None = None,
    on_progress: Callable[[Progress], Any] | None = None,
    on_tick: Callable[[TickReport], Any] | None = None,
    embedder: Embedder | None = None,
    concurrency: Concurrency = "gather",
) -> RunSummary:
    """Build engines, set them up, run the coordinator, close; returns the run summary."""
    scenario = load_scenario(config).with_overrides(
        agents=agents, ticks=ticks, seed=seed, groups=groups
    )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    embedder = embedder or build_embedder(scenario.memory.embedding)
    engines = [
        GroupEngine(scenario, g, ids, out, embedder=embedder, concurrency=concurrency)
        for g, ids in enumerate(partition(scenario.agents.count, scenario.groups))
    ]
    try:
        for engine in engines:
            await engine.setup()
        coordinator = Coordinator(
            engines,
            seed=scenario.seed,
            encounters_enabled=scenario.social.encounters,
            max_pairs_per_place=scenario.social.max_pairs_per_place,
            on_progress=on_progress,
            on_tick=on_tick,
        )
        summary = await coordinator.run(scenario.ticks)
    finally:
        for engine in engines:
            await engine.close()
    llm = {}
    for engine in engines:
        for model, usage in engine.llm.accounting.snapshot()["models"].items():
            acc = llm.setdefault(model, {})
            for key, value in usage.items():
                acc[key] = acc.get(key, 0) + value
    write_run_manifest(out, scenario, summary, {"llm": llm, "mode": "local"})
    return summary


def run_local(
    config: ScenarioConfig | dict[str, Any] | str | Path,
    out: str | Path,
    groups: int | None = None,
    **kwargs: Any,
) -> RunSummary:
    """Synchronous wrapper of `run_local_async` (its own event loop)."""
    return asyncio.run(run_local_async(config, out, groups, **kwargs))
