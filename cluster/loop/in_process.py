"""A scenario in this process through `run_groups` (checkpoints, resume, the LLM stops), with
hooks to see what the model produced: what `societas estimate`, the real-model benchmark and
the LLM tests run.

Provenance: an observer on each group's gateway collects the strings of every structured
answer that came from the model (not a fallback); at the last tick, before the groups close,
every memory of every agent is read back and counted as "from the model" when its text
contains one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from societas.agents.llm import LLMGateway
from societas.agents.runtime.engine import GroupEngine
from societas.agents.scenario import ScenarioConfig, load_scenario
from societas.cluster.cluster_config import ClusterConfig
from societas.cluster.loop.coordinator import RunSummary
from societas.cluster.loop.engines import EngineFactory
from societas.cluster.loop.groups import InProcessGroup
from societas.cluster.loop.local import partition
from societas.cluster.loop.run import RunResult, RunSpec, run_groups
from societas.memory.embedding import Embedder
from societas.memory.group import ID_BITS

MIN_MODEL_TEXT = 4  # shorter model strings ("no", "ok") would match anything


class InProcessRun(BaseModel):
    """What an in-process run produced, beyond the run loop's result."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    result: RunResult
    summary: RunSummary
    memories: list[str] = []
    memories_from_model: int = 0
    model_texts: int = 0


def strings_of(value: Any) -> list[str]:
    """Every string leaf of a (dumped) structured answer."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_of(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings_of(v)]
    return []


async def _all_memories(engine: GroupEngine) -> list[str]:
    """Texts of every memory the group still holds (ids are group-prefixed sequences)."""
    memory = engine.memory
    assert memory is not None
    base = memory.config.group_id << ID_BITS
    texts = []
    for seq in range(memory.issued_count()):
        try:
            (record,) = await memory.get_by_ids([base | seq])
        except KeyError:
            continue  # forgotten or consolidated away
        texts.append(record.text)
    return texts


async def run_in_process(
    scenario: ScenarioConfig | dict[str, Any] | str | Path,
    run_dir: str | Path,
    *,
    resume: bool = False,
    budget_tokens: int | None = None,
    checkpoint_every: int = 0,
    embedder: Embedder | None = None,
    trace_model_text: bool = False,
    on_gateway: Callable[[LLMGateway], None] | None = None,
    on_progress: Callable[[Any], Any] | None = None,
) -> InProcessRun:
    """Run (or resume) `scenario` with one in-process group per `scenario.groups`.

    `budget_tokens` (default `llm.budget`) and the fallback-rate guard stop the run with an
    `LLMRunStop` after a checkpoint; `trace_model_text` counts memories written from model
    text."""
    sc = load_scenario(scenario)
    run_dir = Path(run_dir)
    ids = partition(sc.agents.count, sc.groups)
    engines = EngineFactory(sc, ids, run_dir, embedder=embedder).build_all()
    produced: set[str] = set()

    def observe(_task: str | None, value: BaseModel) -> None:
        produced.update(
            s.strip() for s in strings_of(value.model_dump()) if len(s.strip()) >= MIN_MODEL_TEXT
        )

    for engine in engines:
        if trace_model_text:
            engine.llm.observers.append(observe)
        if on_gateway is not None:
            on_gateway(engine.llm)
    memories: list[str] = []

    async def on_tick(report: Any) -> None:
        if trace_model_text and report.tick == sc.ticks - 1:
            for engine in engines:
                memories.extend(await _all_memories(engine))

    spec = RunSpec(
        run_dir=run_dir,
        ticks=sc.ticks,
        seed=sc.seed,
        agents=sc.agents.count,
        config={"scenario": sc.model_dump(mode="json"), "groups": len(engines)},
        encounters=sc.social.encounters,
        max_pairs_per_place=sc.social.max_pairs_per_place,
        tick_minutes=sc.tick_minutes,
        budget_tokens=budget_tokens if budget_tokens is not None else sc.llm.budget,
    )
    cluster = ClusterConfig(checkpoint_every=checkpoint_every, keep_checkpoints=0)
    result, summary = await run_groups(
        [InProcessGroup(e) for e in engines],
        spec,
        cluster,
        on_progress=on_progress,
        on_tick=on_tick,
        resume=resume,
    )
    from_model = sum(1 for m in memories if any(p in m for p in produced))
    return InProcessRun(
        result=result,
        summary=summary,
        memories=memories,
        memories_from_model=from_model,
        model_texts=len(produced),
    )
