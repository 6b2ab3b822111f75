"""Where the bytes of a group go: RSS and PSS of one process after each part of a group's life.

One `GroupEngine` in process (no Ray: Ray's own processes are measured by engine.py), the
`town` scenario with the rules provider (not a language model). Probes, in order:
  imports      - Python, societas, numpy, pyarrow, Qdrant Edge loaded;
  population   - profiles, town map and social network (memoised, shared by the groups);
  setup        - the group memory (KV columns, KV vectors in a Qdrant Edge shard, embedder)
                 and the agents (Agent objects and their hot-state dicts, sized apart);
  day          - one simulated day of ticks: stream memories (hot RAM columns, warm shard),
                 results buffers, LLM accounting, allocator slack; and the peak PSS during
                 the day (sampled every 50 ms: a result window's write, a planning tick).
Cached: the embedding cache is on (default, 100,000 texts) and counted in `setup`/`day`.

    python benchmarks/engine_bytes.py [--agents 5000] [--ticks 48] [--cache-size N] [--json P]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import psutil
from _common import emit, machine
from _pss import PssSampler

from societas.memory.tuning import tune_worker

ROOT = Path(__file__).resolve().parent.parent


def _probe() -> tuple[float, float]:
    """(RSS, PSS) of this process in MB, after a full garbage collection."""
    gc.collect()
    info = psutil.Process().memory_full_info()
    return info.rss / 2**20, info.pss / 2**20


def deep_size(obj: Any, seen: set[int] | None = None) -> int:
    """Bytes of an object and everything it holds (dicts, lists, tuples, sets, strings)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        size += sum(deep_size(v, seen) for v in obj)
    return size


def _component(filename: str) -> str:
    """Which part of the code allocated: a societas module, or a library, by file path."""
    parts = Path(filename).parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].split(".")[0]
    for top in ("memory", "agents", "cluster"):
        if top in parts:
            i = parts.index(top)
            return "societas." + ".".join(p.removesuffix(".py") for p in parts[i : i + 3])
    return "python (stdlib, interpreter)"


def _traced_by_component(snapshot: Any) -> dict[str, float]:
    """MB still held at the end, by the innermost societas frame that led to the allocation
    (else the library or the interpreter that made it)."""
    by: dict[str, int] = {}
    for stat in snapshot.statistics("traceback"):
        names = [_component(frame.filename) for frame in reversed(stat.traceback)]  # newest first
        name = next((n for n in names if n.startswith("societas.")), names[0])
        by[name] = by.get(name, 0) + stat.size
    top = sorted(by.items(), key=lambda kv: -kv[1])
    return {k: round(v / 2**20, 1) for k, v in top if v >= 2**19}


async def measure(
    agents: int, ticks: int, trace: bool = False, cache_size: int | None = None
) -> dict[str, Any]:
    """The probes of one group's life (see module doc); `trace`: Python-heap bytes still
    held after the day, by allocating component (tracemalloc: numpy included; Qdrant Edge's
    Rust heap and Arrow's pool are not Python allocations and show as the untraced rest)."""
    import tracemalloc

    import numpy  # noqa: F401
    import pyarrow  # noqa: F401
    import qdrant_edge  # noqa: F401

    from societas.agents.population import population_for
    from societas.agents.scenario import load_scenario
    from societas.cluster.loop.engines import EngineFactory

    probes: dict[str, tuple[float, float]] = {"imports": _probe()}
    if trace:
        tracemalloc.start(12)
    scenario = load_scenario(ROOT / "configs" / "town.yaml").with_overrides(
        agents=agents, ticks=max(ticks, 8), groups=1
    )
    if cache_size is not None:  # e.g. the share of a day's texts the cache holds at 100,000
        embedding = scenario.memory.embedding.model_copy(update={"cache_size": cache_size})
        memory = scenario.memory.model_copy(update={"embedding": embedding})
        scenario = scenario.model_copy(update={"memory": memory})
    population_for(scenario)
    probes["population"] = _probe()
    with tempfile.TemporaryDirectory(prefix="bench-bytes-") as tmp:
        engine = EngineFactory(scenario, [list(range(agents))], tmp)(0)
        await engine.setup()
        probes["setup"] = _probe()
        agent_bytes = sum(deep_size(a.state) + sys.getsizeof(a) for a in engine.agents.values())
        started = time.perf_counter()
        with PssSampler(period_s=0.05) as sampler:  # the day's transient peaks (flushes...)
            for tick in range(ticks):
                await engine.step(tick, [])
        seconds = time.perf_counter() - started
        probes["day"] = _probe()
        assert engine.memory is not None
        tiers = await engine.memory.tier_counts()
        traced: dict[str, float] = {}
        if trace:
            traced = _traced_by_component(tracemalloc.take_snapshot())
            tracemalloc.stop()
        await engine.close()
    names = list(probes)
    rows = {}
    for before, after in itertools.pairwise(names):
        d_rss = probes[after][0] - probes[before][0]
        d_pss = probes[after][1] - probes[before][1]
        rows[after] = {
            "rss_mb": round(d_rss, 1),
            "pss_mb": round(d_pss, 1),
            "kb_per_agent": round(d_pss * 1024 / agents, 2),
        }
    agents_mb = agent_bytes / 2**20
    rows["setup: agents (objects + hot-state dicts)"] = {
        "pss_mb": round(agents_mb, 1),
        "kb_per_agent": round(agent_bytes / 1024 / agents, 2),
    }
    rows["setup: memory (KV columns + KV shard + embedder)"] = {
        "pss_mb": round(rows["setup"]["pss_mb"] - agents_mb, 1),
        "kb_per_agent": round((rows["setup"]["pss_mb"] - agents_mb) * 1024 / agents, 2),
    }
    stream = tiers.get("warm", 0) + tiers.get("cold", 0)
    return {
        "agents": agents,
        "ticks": ticks,
        "imports_pss_mb": round(probes["imports"][1], 1),
        "total_pss_mb": round(probes["day"][1], 1),
        "day_peak_pss_mb": round(sampler.peak_bytes / 2**20, 1),
        "day_peak_over_end": round(sampler.peak_bytes / 2**20 / probes["day"][1], 3),
        "pss_kb_per_agent_net_of_imports": round(
            (probes["day"][1] - probes["imports"][1]) * 1024 / agents, 2
        ),
        "by_component": rows,
        "memories_by_tier": tiers,
        "day_bytes_per_memory": round(rows["day"]["pss_mb"] * 2**20 / max(1, stream), 1),
        "agent_steps_per_s": round(agents * ticks / seconds, 1),
        "python_heap_mb_by_component": traced,
        "cached": f"embedding cache on ({scenario.memory.embedding.cache_size} texts); "
        "rules policy in process, no LLM cache",
        "machine": machine(),
    }


def main() -> None:
    """Command line: the JSON on stdout (and in --json)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=5000)
    parser.add_argument("--ticks", type=int, default=48)
    parser.add_argument("--json", default=None)
    parser.add_argument("--trace", action="store_true", help="Python heap by component (slow)")
    parser.add_argument(
        "--cache-size",
        type=int,
        default=None,
        help="embedding cache entries (default: the scenario's, 100,000 a group); at 100,000 "
        "agents a group's cache holds ~7%% of a day's texts, at 2,000 agents all of them",
    )
    args = parser.parse_args()
    if args.agents < 1 or args.ticks < 1:
        parser.error("--agents and --ticks must be >= 1")
    if args.cache_size is not None and args.cache_size < 0:
        parser.error(f"--cache-size must be >= 0, got {args.cache_size}")
    tune_worker()  # a group's process, as the Ray actor tunes it
    emit(asyncio.run(measure(args.agents, args.ticks, args.trace, args.cache_size)), args.json)


if __name__ == "__main__":
    main()
