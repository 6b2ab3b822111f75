"""After a stop cut a model tick short: a checkpoint of the last finished tick.

The cut tick left the groups mid-tick, so the state after the last finished tick is rebuilt:
fresh engines restore the run's last checkpoint (or start afresh without one) and run the
ticks since with the LLM response cache in replay mode (no model call; a miss is an error;
the rules policy answers as before), then checkpoint and stop there. The checkpoint records
the figures the interrupted run had counted, not the replay's (its answers came from the
cache), so a resume neither loses nor counts twice a call of the finished ticks. If the
replay cannot be done in time (no cache, a miss, past `CATCH_UP_S`), the run keeps its
earlier checkpoint and says so.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from societas.agents.experiments.custom import run_llm_config
from societas.agents.llm import LLMGateway
from societas.agents.scenario import ScenarioConfig
from societas.cluster import checkpoint as ckpt
from societas.cluster.loop.engines import EngineFactory
from societas.cluster.loop.local import drop_results_from, partition, run_engines
from societas.cluster.loop.run import RunInterrupted
from societas.memory.embedding import Embedder

log = logging.getLogger(__name__)

CATCH_UP_S = 9.0  # the replay's time limit: with the stop's grace, the run ends within 15 s


def replayable(scenario: ScenarioConfig, run_dir: Path) -> bool:
    """Whether the finished ticks can be replayed without a model: the rules policy answers
    them again, or a response cache holds the model's answers."""
    llm = run_llm_config(scenario, run_dir)
    return llm.provider == "rules" or llm.cache.mode != "off"


async def checkpoint_last_finished(
    scenario: ScenarioConfig,
    run_dir: Path,
    cluster: Any,
    stopped: RunInterrupted,
    *,
    groups: int,
    embedder: Embedder | None = None,
    on_checkpoint: Callable[[int, dict[str, float]], Any] | None = None,
) -> RunInterrupted:
    """A `RunInterrupted` whose checkpoint is the last finished tick, when a replay from the
    response cache could write it within `CATCH_UP_S`; else `stopped` with a note why not.
    The replay runs `groups` in-process groups (a Ray run's checkpoints restore the same)."""
    target = stopped.tick
    if target in (stopped.checkpoint, 0):
        return stopped
    if not replayable(scenario, run_dir):
        return _kept(stopped, "no LLM response cache to replay the finished ticks from")
    try:
        await asyncio.wait_for(
            _replay(scenario, run_dir, cluster, stopped, groups, embedder, on_checkpoint),
            CATCH_UP_S,
        )
    except TimeoutError:
        return _kept(stopped, f"replaying the finished ticks took over {CATCH_UP_S:.0f} s")
    except Exception as err:  # a cache miss, a lost file: the earlier checkpoint stands
        log.warning("checkpoint of tick %s not written: %s", target, err)
        return _kept(stopped, f"replaying the finished ticks failed: {err}")
    if await asyncio.to_thread(ckpt.last_complete, run_dir) != target:
        return _kept(stopped, "the replay wrote no checkpoint")
    return RunInterrupted(
        target,
        target,
        totals=stopped.totals,
        llm_tasks=stopped.llm_tasks,
        llm_models=stopped.llm_models,
    )


def _kept(stopped: RunInterrupted, why: str) -> RunInterrupted:
    return RunInterrupted(
        stopped.tick,
        stopped.checkpoint,
        totals=stopped.totals,
        llm_tasks=stopped.llm_tasks,
        llm_models=stopped.llm_models,
        note=f"; {why}",
    )


async def _replay(
    scenario: ScenarioConfig,
    run_dir: Path,
    cluster: Any,
    stopped: RunInterrupted,
    groups: int,
    embedder: Embedder | None,
    on_checkpoint: Callable[[int, dict[str, float]], Any] | None,
) -> None:
    """Fresh engines from the last checkpoint (or the start), the finished ticks replayed
    from the cache, a checkpoint at the last of them holding the interrupted run's figures."""
    target = stopped.tick

    def gateway(_group: int) -> LLMGateway:
        llm = run_llm_config(scenario, run_dir)
        if llm.cache.mode != "off":  # the model's answers from the cache only
            llm = llm.model_copy(update={"cache": llm.cache.model_copy(update={"mode": "replay"})})
        return LLMGateway(llm)

    ids = partition(scenario.agents.count, groups)
    engines = EngineFactory(
        scenario, ids, run_dir, cluster.agents_in_flight, embedder=embedder, gateway=gateway
    ).build_all()
    resume = stopped.checkpoint is not None
    if not resume:  # the run starts afresh: nothing it wrote is kept
        await asyncio.to_thread(drop_results_from, run_dir, 0)
    reached: list[bool] = []

    def on_tick(report: Any) -> None:
        if report.tick + 1 >= target:
            reached.append(True)

    async def checkpointed(tick: int, _totals: dict[str, float]) -> None:
        if tick == target:
            await asyncio.to_thread(_record_figures, run_dir, stopped)
        if on_checkpoint is not None:
            out = on_checkpoint(tick, stopped.totals if tick == target else _totals)
            if asyncio.iscoroutine(out):
                await out

    try:
        await run_engines(
            scenario,
            run_dir,
            engines,
            cluster,
            on_tick=on_tick,
            resume=resume,
            stop=lambda: bool(reached),
            on_checkpoint=checkpointed,
        )
    except RunInterrupted as done:
        if done.checkpoint != target:
            raise RuntimeError(f"the replay stopped at tick {done.tick}, not {target}") from None
    finally:
        for engine in engines:
            await engine.llm.aclose()


def _record_figures(run_dir: Path, stopped: RunInterrupted) -> None:
    """The checkpoint's totals and per-task, per-model LLM figures: the interrupted run's."""
    manifest, inbox = ckpt.load_checkpoint(run_dir, stopped.tick)
    updated = manifest.model_copy(
        update={
            "totals": {**manifest.totals, **stopped.totals},
            "llm_tasks": stopped.llm_tasks or manifest.llm_tasks,
            "llm_models": stopped.llm_models or manifest.llm_models,
        }
    )
    ckpt.write_checkpoint_manifest(run_dir, updated, inbox)
