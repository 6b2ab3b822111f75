"""What a checkpoint costs a group: PSS peak and seconds, paged writer vs whole tables.

One `GroupEngine` in process (no Ray), N agents stepped T ticks; every K ticks the group is
checkpointed twice from the same state, PSS sampled every 20 ms during each:
  whole (baseline) - the writer before pages: every warm, pending and hot memory, KV value
                     and KV point built as Python rows, then one Arrow table per file, and
                     the agents' JSON as one string;
  paged            - `GroupEngine.checkpoint` (memory.checkpoint_pages, agents.runtime.group_json).
The baseline runs first at each checkpoint, so the paged writer works on the heap the
baseline left; `--no-baseline` measures the paged writer alone. Both write the same rows
(tests/memory/test_checkpoint_pages.py).

    .venv/bin/python benchmarks/checkpoint_bytes.py --agents 10000 --ticks 48 --every 12 --json F

Cached: the embedding cache is on as in every run (counted in the group's PSS); rules policy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, machine
from _pss import PssSampler

from societas.memory.tuning import tune_worker

ROOT = Path(__file__).resolve().parent.parent


async def whole_checkpoint(engine: Any, directory: Path) -> None:
    """The baseline: the files of a checkpoint written from whole lists and tables."""
    import pyarrow as pa

    import societas.memory.store.checkpoint as ck
    from societas.memory.store.fsutil import write_bytes_atomic, write_parquet_atomic
    from societas.memory.tiers.cold import rows_table, vectors_table
    from societas.memory.vectorstores.base import ScoredPoint

    group, store = engine.memory, engine.memory.store
    await group.sync_writes(kv=True)
    await group.flush()
    held = store.pending_points()  # built once, as the whole-table writer did
    warm = await ck._all_points(store, store.engine_scroll) + held
    pending = [p.id for p in held]
    hot = [ScoredPoint(id=r.pop("id"), score=0.0, payload=r) for r in group.hot.get_state()]
    kv_points = group.kv_store.index_points()
    agents = {str(i): a.get_state() for i, a in engine.agents.items()}
    state = {
        **group.get_state(),
        "kv_points": sorted([a, k, i] for (a, k), i in group.kv_point.items()),
    }

    def write() -> None:
        directory.mkdir(parents=True)
        write_bytes_atomic(directory / "group.json", json.dumps(agents, sort_keys=True).encode())
        write_parquet_atomic(
            directory / "kv.parquet", pa.table(group.kv_rows(), schema=ck.KV_SCHEMA)
        )
        write_parquet_atomic(directory / "hot.parquet", rows_table(hot))
        write_parquet_atomic(directory / "warm.rows.parquet", rows_table(warm))
        write_parquet_atomic(directory / "warm.vectors.parquet", vectors_table(warm))
        write_parquet_atomic(
            directory / "pending.parquet", pa.table({"id": pa.array(pending, pa.int64())})
        )
        write_parquet_atomic(
            directory / "kv_points.parquet", vectors_table(kv_points, ck.KV_POINT_SCHEMA)
        )
        write_bytes_atomic(directory / "state.json", json.dumps(state, indent=1).encode())

    await asyncio.to_thread(write)


async def measured(fn: Any) -> dict[str, float]:
    """PSS before, peak during and after `fn()`, and its seconds."""
    with PssSampler(period_s=0.02) as idle:
        await asyncio.sleep(0.05)
    before = idle.peak_bytes
    started = time.perf_counter()
    with PssSampler(period_s=0.02) as during:
        await fn()
    seconds = time.perf_counter() - started
    with PssSampler(period_s=0.02) as after:
        await asyncio.sleep(0.05)
    mb = 2**20
    return {
        "before_mb": round(before / mb, 1),
        "peak_mb": round(during.peak_bytes / mb, 1),
        "peak_over_before_mb": round((during.peak_bytes - before) / mb, 1),
        "after_mb": round(after.peak_bytes / mb, 1),
        "seconds": round(seconds, 2),
    }


async def run(agents: int, ticks: int, every: int, baseline: bool = True) -> dict[str, Any]:
    from societas.agents.scenario import load_scenario
    from societas.cluster.loop.engines import EngineFactory

    scenario = load_scenario(ROOT / "configs" / "town.yaml").with_overrides(
        agents=agents, ticks=ticks, groups=1
    )
    checkpoints = []
    step_peak = 0
    with tempfile.TemporaryDirectory(prefix="bench-ckpt-") as tmp:
        engine = EngineFactory(scenario, [list(range(agents))], tmp)(0)
        await engine.setup()
        for tick in range(ticks):
            with PssSampler(period_s=0.05) as stepping:
                await engine.step(tick, [])
                await engine.finish_tick(tick)
            step_peak = max(step_peak, stepping.peak_bytes)
            if (tick + 1) % every:
                continue
            out = Path(tmp) / f"t{tick + 1}"
            whole = (
                await measured(lambda out=out: whole_checkpoint(engine, out / "whole"))
                if baseline
                else None
            )
            paged = await measured(lambda out=out: engine.checkpoint(str(out / "paged")))
            memories = (await engine.memory.tier_counts())["warm"]
            checkpoints.append(
                {"tick": tick + 1, "memories": memories, "whole": whole, "paged": paged}
            )
        await engine.close()
    return {
        "agents": agents,
        "ticks": ticks,
        "every": every,
        "stepping_peak_pss_mb": round(step_peak / 2**20, 1),
        "checkpoints": checkpoints,
        "cached": "embedding cache on (the scenario's); rules policy in process, no LLM cache",
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=5000)
    parser.add_argument("--ticks", type=int, default=48)
    parser.add_argument("--every", type=int, default=12, help="ticks between checkpoints")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="only the paged writer (its PSS before is then a clean state, not the baseline's)",
    )
    args = parser.parse_args()
    for name in ("agents", "ticks", "every"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    from societas.agents.scenario import ScenarioConfigError

    try:
        tune_worker()  # a group's process, as the Ray actor tunes it
        result = asyncio.run(run(args.agents, args.ticks, args.every, not args.no_baseline))
    except ScenarioConfigError as err:  # e.g. --ticks before the town's intervention
        parser.error(str(err))
    emit(result, args.json)


if __name__ == "__main__":
    main()
