"""Cost of each memory profile (default, finmem, cognitive) on one workload, beside the
default of the code just before typed records and profiles (a faithful baseline, same run).

Workload (seeded, _memory_workload's texts): every tick of 30 simulated minutes each agent adds
2 memories and searches once (top 3); `end_tick` (tier migration, access-count flush,
policies) after every tick. Adds of a tick are gathered (micro-batched into one add_many),
then its searches (one search_many); each call's wall time gives the search p50.
Per profile:
  default   - Generative Agents scoring (the engine as configured by default);
  finmem    - FinMem layers: per-layer top-k (4 queries a search), daily forgetting pass;
  cognitive - also every raw event through the sensory buffer and attention (an observation
              memory every 4 events), recalled hits into working memory and reconsolidated;
  before    - the default profile of the code at --baseline-commit (git archive into a temp
              dir, imported instead of the working tree).
What is cached: nothing (embedding cache off, distinct queries per tick); no LLM.
Every profile runs in its own child process; RSS is that process's peak.

    python benchmarks/memory_profiles.py --agents 1000 --days 3 --json FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import emit, machine, peak_rss_mb, percentile, rss_mb
from _memory_workload import SEED, TOP_K, clock_of, tick_plan

from societas.memory.tuning import tune_worker

PROFILES = ("default", "finmem", "cognitive")
ROOT = Path(__file__).resolve().parents[1]


async def run(profile: str, agents: int, days: int) -> dict:
    """The workload under one profile, in this process."""
    from societas.memory import GroupMemory, GroupMemoryConfig
    from societas.memory.embedding import EmbeddingConfig

    rng = random.Random(SEED)
    base = rss_mb()
    options: dict = {"embedding": EmbeddingConfig(cache_size=0)}
    if profile in ("finmem", "cognitive"):
        options["profile"] = profile
    cfg = GroupMemoryConfig(**options)
    add_s = search_s = tick_s = 0.0
    latencies: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-profiles-") as tmp:
        group = GroupMemory(cfg, root=Path(tmp))
        await group.add_agents({a: {} for a in range(agents)})
        views = [group.agent(a) for a in range(agents)]
        cognition = getattr(group, "cognition", None)

        async def add(turn) -> None:
            for topic, text, importance in turn.adds:
                await views[turn.agent].stream.add(topic, text, importance)

        async def search(turn):
            t0 = time.perf_counter()
            hits = await views[turn.agent].stream.search(turn.query, top_k=TOP_K)
            latencies.append(time.perf_counter() - t0)
            return hits

        ticks = days * 48
        for tick in range(ticks):
            group.clock.set(*clock_of(tick))
            turns = tick_plan(rng, agents)
            t0 = time.perf_counter()
            await asyncio.gather(*(add(t) for t in turns))
            if cognition is not None:  # the same events, raw, through the sensory buffer
                await cognition.perceive_many(
                    [(t.agent, text) for t in turns for _, text, _ in t.adds]
                )
            t1 = time.perf_counter()
            results = await asyncio.gather(*(search(t) for t in turns))
            if cognition is not None:
                from societas.memory.model.records import SearchRequest

                requests = [
                    SearchRequest(agent_id=t.agent, query=t.query, top_k=TOP_K) for t in turns
                ]
                await cognition.absorb(requests, results, "tick")
            t2 = time.perf_counter()
            await group.end_tick()
            add_s += t1 - t0
            search_s += t2 - t1
            tick_s += time.perf_counter() - t2
        tiers = await group.tier_counts()
        peak = peak_rss_mb()
        await group.close()
    n = agents * ticks
    import societas.memory as package

    return {
        "code": str(Path(package.__file__).parent),  # which tree was measured
        "profile": profile,
        "agents": agents,
        "ticks": ticks,
        "adds_per_s": round(2 * n / add_s, 1),
        "searches_per_s": round(n / search_s, 1),
        "search_p50_ms": round(percentile(latencies, 50) * 1000, 2),
        "end_tick_s": round(tick_s, 2),
        "peak_rss_mb": round(peak, 1),
        "net_rss_mb": round(peak - base, 1),
        "tiers": tiers,
    }


def child(profile: str, agents: int, days: int, pythonpath: str | None = None) -> dict:
    """One profile in a fresh interpreter (optionally importing an older tree first)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, __file__, "--part", profile, "--agents", str(agents)]
    out = subprocess.run(
        [*cmd, "--days", str(days)], check=True, capture_output=True, text=True, env=env
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def old_tree(commit: str, into: Path) -> Path:
    """`memory/` at `commit`, laid out as the `societas.memory` package under `into`."""
    package = into / "societas"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "memory"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(package)], input=archive, check=True)
    models = ROOT / "memory" / "models"  # model folders are not in git: share the current ones
    if models.exists() and not (package / "memory" / "models").exists():
        (package / "memory" / "models").symlink_to(models)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--profiles", default=",".join(PROFILES))
    parser.add_argument("--baseline-commit", default="cb7119f", help="'' skips the baseline")
    parser.add_argument("--part", default=None)
    args = parser.parse_args()
    if args.agents < 1 or args.days < 1:
        parser.error(f"--agents and --days must be >= 1, got {args.agents} and {args.days}")
    if args.part is not None:
        tune_worker()  # a group's process, as the Ray actor tunes it
        print(json.dumps(asyncio.run(run(args.part, args.agents, args.days))))
        return
    profiles = [p for p in args.profiles.split(",") if p]
    unknown = sorted(set(profiles) - set(PROFILES))
    if unknown:
        parser.error(f"--profiles: unknown {unknown}; choose from {list(PROFILES)}")
    result: dict = {
        "workload": "per agent per tick: 2 adds (gathered), 1 search top 3 (gathered), end_tick",
        "cached": "nothing: embedding cache off (cache_size=0), distinct queries per tick",
        "embedder": "bm25 (Qdrant Edge tokenizer), Qdrant Edge shard on disk",
        "profiles": {p: child(p, args.agents, args.days) for p in profiles},
    }
    if args.baseline_commit:
        with tempfile.TemporaryDirectory(prefix="bench-before-") as tmp:
            path = old_tree(args.baseline_commit, Path(tmp))
            before = child("default", args.agents, args.days, str(path))
        result["before"] = {"commit": args.baseline_commit, **before}
        if "default" in result["profiles"]:
            now = result["profiles"]["default"]
            result["default_vs_before"] = {
                k: round(now[k] / before[k], 3)
                for k in ("adds_per_s", "searches_per_s", "search_p50_ms", "peak_rss_mb")
            }
    result["machine"] = machine()
    emit(result, args.json)


if __name__ == "__main__":
    main()
