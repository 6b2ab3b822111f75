"""Memory on the per-agent path a simulation takes: societas vs plain lists vs AgentSociety.

Workload (_memory_workload): every tick each agent in turn adds 2 memories, searches once
(top 3), updates one status key and reads it back, until each agent holds M memories; the
same seeded texts and queries on every side, the same agent count on every side.

societas: one GroupMemory (BM25, Qdrant Edge shard on disk, tiering on: `end_tick` after every
tick, counted in the wall time) driven through each agent's `AgentMemory`:
  gather     - a tick's agents stepped concurrently by GroupEngine's own `step_window`
               (its default window of 256 agents in flight, a task per window slot; the
               headline);
  sequential - one agent at a time (nothing to batch);
  phased     - a tick's adds stepped so, then its searches, then its status calls (this
               gives adds/s and searches/s separately; same per-agent API).
naive (baseline): per-agent Python lists + a numpy sparse dot over the same BM25 vectors.
agentsociety (baseline): AgentSociety's design, two in-memory Qdrant clients per agent, one
text embedded per call (_memory_baselines).

What is cached: nothing. The embedding cache is off (cache_size=0) and a tick's queries are
distinct, so `query_cache_hits` is 0; the LLM is not involved. Every side runs in its own
child process; `net_kb_per_agent` is its peak RSS minus its RSS before any memory existed.

The naive, gathered and one-at-a-time sides run `--repeats` times (default 3), interleaved;
the wall and CPU ratios are of their medians (`wall_s_each_run` lists every run); the
`_paired` ratios are the medians of each repeat's own ratio (a repeat's runs are seconds
apart, so they share the host's speed of the moment).

    python benchmarks/memory_ops.py [--sizes 300x200,20x1000] [--repeats 3] [--json P]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # read once, when pyarrow loads

from _common import CollectorClock, emit, machine, peak_rss_mb, rss_mb
from _memory_workload import SEED, TOP_K, clock_of, digest_hits, tick_plan

from societas.memory.tuning import tune_worker

MODES = ("gather", "sequential", "phased")


async def run_societas(agents: int, memories: int, mode: str) -> dict:
    """The workload through each agent's memory API, in one of MODES."""
    from societas.agents.runtime.stepping import AGENTS_IN_FLIGHT, step_window
    from societas.memory import GroupMemory, GroupMemoryConfig
    from societas.memory.embedding import EmbeddingConfig, build_embedder

    rng = random.Random(SEED)
    cfg = GroupMemoryConfig(embedding=EmbeddingConfig(cache_size=0))
    model = build_embedder(cfg.embedding)  # loaded before the base, as both baselines do
    base = rss_mb()
    timers = {"add": 0.0, "search": 0.0, "kv": 0.0}
    digests = [""] * (agents * (memories // 2))  # by (tick, agent), whatever order answers come
    at = [0]  # first digest index of the current tick
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        group = GroupMemory(cfg, root=Path(tmp), embedder=model)
        setup = rss_mb() - base  # the group's two shards, pools and maps: counted in the net
        await group.add_agents({a: {"name": f"agent {a}"} for a in range(agents)})
        views = [group.agent(a) for a in range(agents)]
        embedder, query_hits = group.embedder, [0]
        embed_queries = embedder.embed_queries

        async def counted_queries(texts):  # query hits apart from setup's document de-dup
            before = embedder.hits
            out = await embed_queries(texts)
            query_hits[0] += embedder.hits - before
            return out

        embedder.embed_queries = counted_queries

        async def add(turn) -> None:
            for topic, text, importance in turn.adds:
                await views[turn.agent].stream.add(topic, text, importance)

        async def search(turn) -> None:
            hits = await views[turn.agent].stream.search(turn.query, top_k=TOP_K)
            digests[at[0] + turn.agent] = digest_hits([h.text for h in hits])

        async def status(turn) -> None:
            view = views[turn.agent].status
            await view.update("thought", turn.thought)
            assert await view.get("thought") == turn.thought

        async def whole(turn) -> None:
            await add(turn)
            await search(turn)
            await status(turn)

        collector = CollectorClock()  # the collector's share of the wall time
        collector.start()
        started, cpu_started = time.perf_counter(), time.process_time()
        for tick in range(memories // 2):
            group.clock.set(*clock_of(tick))
            at[0] = tick * agents
            turns = tick_plan(rng, agents)
            if mode == "gather":
                await step_window(turns, whole, AGENTS_IN_FLIGHT)
            elif mode == "sequential":
                for t in turns:
                    await whole(t)
            else:
                for name, phase in (("add", add), ("search", search), ("kv", status)):
                    t0 = time.perf_counter()
                    await step_window(turns, phase, AGENTS_IN_FLIGHT)
                    if name == "add":  # adds return at once, queued: their write is an add's
                        await group.sync_writes()
                    timers[name] += time.perf_counter() - t0
            await group.end_tick()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        gc_figures = collector.figures()
        stored = await group.memory_count()
        tiers = await group.tier_counts()
        hits = query_hits[0]
        peak = peak_rss_mb()
        await group.close()
    turns_n = agents * (memories // 2)
    out = {
        "agents": agents,
        "wall_s": wall,
        "cpu_s": cpu,  # every thread of the process (BM25 batches past 1,024 texts use a worker)
        "peak_rss_mb": peak,
        "net_kb_per_agent": (peak - base) * 1024 / agents,
        "group_setup_mb": setup,
        # Child processes (with `compact_in_child`, the shard's compactions: edge_seal).
        "children_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "query_cache_hits": hits,
        "stored": stored,
        "tiers": tiers,
        "digests": digests,
    } | gc_figures
    if mode == "phased":
        out |= {
            "adds_per_s": 2 * turns_n / timers["add"],
            "searches_per_s": turns_n / timers["search"],
            "kv_ops_per_s": 2 * turns_n / timers["kv"],
        }
    return out


def child(part: str, agents: int, memories: int) -> dict:
    """Run one side in a fresh interpreter and read its JSON."""
    cmd = [sys.executable, __file__, "--part", part, "--agents", str(agents)]
    out = subprocess.run(
        [*cmd, "--memories", str(memories)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _gc_figures(run: dict) -> dict:
    """The garbage collector's figures of one side's run (gc_s, gc_longest_ms, gc_passes)."""
    return {key: value for key, value in run.items() if key.startswith("gc_")}


def agreement(a: list[str], b: list[str]) -> float:
    """Fraction of searches whose ranked top-3 texts are identical on both sides."""
    return sum(x == y for x, y in zip(a, b, strict=True)) / max(1, len(a))


def _paired(side: list[float], naive: list[float]) -> float:
    """The median of each run's wall over the lists' wall of the same repeat."""
    return round(statistics.median(x / n for x, n in zip(side, naive, strict=True)), 3)


def compare(agents: int, memories: int, repeats: int) -> dict:
    """Every side at one size, and the ratios the issue asks for. The sides the wall ratios
    compare run `repeats` times, interleaved (naive, gathered, one at a time), and each
    ratio is of medians: on this shared machine one run's wall varies by up to ±15 %."""
    walls: dict[str, list[float]] = {"naive": [], "gather": [], "sequential": []}
    cpus: dict[str, list[float]] = {"naive": [], "gather": [], "sequential": []}
    last: dict[str, dict] = {}
    for _ in range(repeats):
        for side, side_walls in walls.items():
            last[side] = child(side, agents, memories)
            side_walls.append(last[side]["wall_s"])
            cpus[side].append(last[side]["cpu_s"])
    g, naive, seq = last["gather"], last["naive"], last["sequential"]
    p = child("phased", agents, memories)
    agsoc = child("agentsociety", agents, memories)
    wall = {side: statistics.median(values) for side, values in walls.items()}
    cpu = {side: statistics.median(values) for side, values in cpus.items()}
    return {
        "agents": {
            "societas": g["agents"],
            "naive": naive["agents"],
            "agentsociety": agsoc["agents"],
        },
        "memories_per_agent": memories,
        "query_cache_hits": g["query_cache_hits"],
        "repeats": repeats,
        "wall_s": {
            "societas_gather": round(wall["gather"], 2),
            "societas_sequential": round(wall["sequential"], 2),
            "naive": round(wall["naive"], 2),
            "agentsociety": round(agsoc["wall_s"], 2),
        },
        "wall_s_each_run": {side: [round(x, 2) for x in v] for side, v in walls.items()},
        "wall_vs_naive": round(wall["gather"] / wall["naive"], 3),
        "wall_vs_naive_sequential": round(wall["sequential"] / wall["naive"], 3),
        # Each run against the lists' run just before it (the host's speed drifts over
        # seconds: a pair shares its phase), then the median of those ratios.
        "wall_vs_naive_paired": _paired(walls["gather"], walls["naive"]),
        "wall_vs_naive_sequential_paired": _paired(walls["sequential"], walls["naive"]),
        "cpu_s": {side: round(v, 2) for side, v in cpu.items()},
        "cpu_vs_naive": round(cpu["gather"] / cpu["naive"], 3),
        "cpu_vs_naive_sequential": round(cpu["sequential"] / cpu["naive"], 3),
        # The cyclic collector's seconds and longest pause, last run of each side (societas
        # tunes it for a group's process: memory.collector).
        "gc": {side: _gc_figures(run) for side, run in last.items()},
        "net_kb_per_agent": round(g["net_kb_per_agent"], 1),
        "societas_group_setup_mb": round(g["group_setup_mb"], 1),
        "children_peak_rss_mb": round(g["children_peak_rss_mb"], 1),
        "naive_net_kb_per_agent": round(naive["net_kb_per_agent"], 1),
        "agentsociety_net_kb_per_agent": round(agsoc["net_kb_per_agent"], 1),
        "ram_vs_naive": round(g["net_kb_per_agent"] / naive["net_kb_per_agent"], 3),
        "ram_vs_agentsociety": round(g["net_kb_per_agent"] / agsoc["net_kb_per_agent"], 3),
        "adds_per_s": round(p["adds_per_s"], 1),
        "searches_per_s": round(p["searches_per_s"], 1),
        "kv_ops_per_s": round(p["kv_ops_per_s"], 1),
        "naive_adds_per_s": round(naive["adds_per_s"], 1),
        "naive_searches_per_s": round(naive["searches_per_s"], 1),
        "agentsociety_adds_per_s": round(agsoc["adds_per_s"], 1),
        "agentsociety_searches_per_s": round(agsoc["searches_per_s"], 1),
        "adds_vs_agentsociety": round(p["adds_per_s"] / agsoc["adds_per_s"], 2),
        "searches_vs_agentsociety": round(p["searches_per_s"] / agsoc["searches_per_s"], 2),
        "same_top3_as_naive": round(agreement(g["digests"], naive["digests"]), 4),
        # One at a time, each search's IDF counts the memories added before it, as the lists
        # count them; gathered, it counts its whole batch's adds of the tick.
        "same_top3_sequential_as_naive": round(agreement(seq["digests"], naive["digests"]), 4),
        "same_top3_gather_vs_sequential": round(agreement(g["digests"], seq["digests"]), 4),
        "same_top3_as_agentsociety": round(agreement(g["digests"], agsoc["digests"]), 4),
        "societas_tiers": g["tiers"],
        "societas_stored": g["stored"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="300x200,20x1000", help="AGENTSxMEMORIES,...")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of the naive, gathered and one-at-a-time sides"
    )
    parser.add_argument("--part", choices=[*MODES, "naive", "agentsociety"], default=None)
    parser.add_argument("--agents", type=int, default=300)
    parser.add_argument("--memories", type=int, default=200)
    args = parser.parse_args()
    if args.part is not None:
        from _memory_baselines import run_agentsociety, run_naive

        if args.part == "naive":
            out = run_naive(args.agents, args.memories, rss_mb)
        elif args.part == "agentsociety":
            out = run_agentsociety(args.agents, args.memories, rss_mb)
        else:
            tune_worker()  # a group's process, as the Ray actor tunes it
            out = asyncio.run(run_societas(args.agents, args.memories, args.part))
        print(json.dumps(out))
        return
    if args.repeats < 1:
        parser.error(f"--repeats: {args.repeats} is not a count of runs (>= 1)")
    sizes = []
    for item in args.sizes.split(","):
        try:
            a, m = (int(x) for x in item.lower().split("x"))
        except ValueError:
            parser.error(f"--sizes: {item!r} is not AGENTSxMEMORIES")
        if a < 1 or m < 2:
            parser.error(f"--sizes: {item!r} needs >= 1 agent and >= 2 memories")
        sizes.append((a, m))
    result = {
        "workload": "per agent per tick: 2 adds, 1 search (top 3), 1 status update + get",
        "cached": "nothing: embedding cache off (cache_size=0), distinct queries per tick",
        "tiering": "societas: on (end_tick every tick; warm memories in RAM columns, "
        "tiers.warm_in_ram); baselines: none",
        "net": "peak RSS minus RSS after imports and the embedding model (every side); "
        "societas's includes its group setup (two Edge shards, pools)",
        "embedder": "bm25 (Qdrant Edge tokenizer; fastembed for agentsociety)",
        "runs": {f"{a}x{m}": compare(a, m, args.repeats) for a, m in sizes},
        "machine": machine(),
    }
    emit(result, args.json)


if __name__ == "__main__":
    main()
