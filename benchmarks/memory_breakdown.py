"""Where a memory_ops turn's time goes: µs per agent-turn by component, gathered or one at a time.

Runs memory_ops' societas side (the same workload, nothing cached, tiering on) with timing
wrappers around the parts of the path: embedding, the write, the ranking, the hit records,
read counts, the rest of `search_many`, the tier pass and the workload's tick plan; what is
left is the agent API, micro-batching, asyncio and the status calls. The wrappers add ~1-2 µs
a call, so the parts add up to a little more than an unwrapped turn (memory_ops).

`floor`: the same turns through the API's fixed costs alone, with no memory behind it:
validated `AddRequest`s and `SearchRequest`s, a coroutine per call, the tick's searches joined
by a `MicroBatcher` into one batch, 3 validated `MemoryHit`s a search, a status dict; no
embedding, storing, ranking or tiering. What a gathered turn cannot go below while the API
validates its records and every agent awaits its own calls.

    python benchmarks/memory_breakdown.py [--agents 300] [--memories 200] [--json P]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import inspect
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import memory_ops
from _common import emit, machine

from societas.memory.tuning import tune_worker

TIMED = (  # (module, owner name or None for a module function, attribute, label)
    ("societas.memory.retrieval.ram_ranking", "RamRanker", "rank", "rank"),
    ("societas.memory.retrieval.hits", "HotHits", "many", "hot_hits"),
    ("societas.memory.retrieval.group_search", "GroupSearch", "_records", "warm_records"),
    ("societas.memory.retrieval.group_search", None, "waiting_warm_hits", "warm_hits"),
    ("societas.memory.model.records_meta", "AccessLedger", "record", "read_counts"),
    ("societas.memory.embedding.cache", "CachedEmbedder", "embed_documents", "embed_documents"),
    ("societas.memory.embedding.cache", "CachedEmbedder", "embed_queries", "embed_queries"),
    ("societas.memory.group", None, "write_memories", "write"),
    ("societas.memory.retrieval.group_search", "GroupSearch", "search_many", "search"),
    ("societas.memory.group", "GroupMemory", "end_tick", "tier_pass"),
    ("memory_ops", None, "tick_plan", "tick_plan"),
)


class Timers:
    """Seconds spent in each wrapped callable, and writes made inside a search (gathered,
    the search batch waits for the tick's write)."""

    def __init__(self) -> None:
        self.seconds: collections.Counter[str] = collections.Counter()
        self.searching = 0

    def wrap(self, fn, label: str):
        """`fn` timed under `label` (coroutine functions awaited inside the timing)."""
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def timed_async(*args, **kwargs):
                started = time.perf_counter()
                self.searching += label == "search"
                try:
                    return await fn(*args, **kwargs)
                finally:
                    spent = time.perf_counter() - started
                    self.searching -= label == "search"
                    self.seconds[label] += spent
                    if label == "write" and self.searching:
                        self.seconds["write_inside_search"] += spent

            return timed_async

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started

        return timed

    def install(self) -> None:
        """Wrap every callable of TIMED in place (this process only)."""
        import importlib

        for module_name, owner_name, attr, label in TIMED:
            module = importlib.import_module(module_name)
            owner = module if owner_name is None else getattr(module, owner_name)
            setattr(owner, attr, self.wrap(getattr(owner, attr), label))


def breakdown(agents: int, memories: int, mode: str) -> dict[str, float]:
    """µs per agent-turn of each component in one run of `mode` (gather or sequential)."""
    timers = Timers()
    timers.install()
    out = asyncio.run(memory_ops.run_societas(agents, memories, mode))
    turns = agents * (memories // 2)
    # A Counter: a part never called (no warm hits in a short run) reads as 0.
    s = collections.Counter({k: v * 1e6 / turns for k, v in timers.seconds.items()})
    parts = {
        "embed_documents": s["embed_documents"],
        "write_besides_embedding": s["write"] - s["embed_documents"],
        "embed_query": s["embed_queries"],
        "rank": s["rank"],
        "hit_records": s["hot_hits"] + s["warm_records"] + s["warm_hits"],
        "read_counts": s["read_counts"],
        "search_rest": s["search"]
        - s["write_inside_search"]
        - s["rank"]
        - s["hot_hits"]
        - s["warm_records"]
        - s["warm_hits"]
        - s["embed_queries"]
        - s["read_counts"],
        "tier_pass": s["tier_pass"],
        "tick_plan": s["tick_plan"],
    }
    whole = out["wall_s"] * 1e6 / turns
    parts["agent_api_batching_asyncio_status"] = whole - sum(parts.values())
    return {"turn": round(whole, 1)} | {k: round(v, 1) for k, v in parts.items()}


async def api_floor(agents: int, memories: int) -> float:
    """µs per agent-turn of the API's fixed costs (see the module docstring), tick plan included."""
    import random

    from _memory_workload import SEED, TOP_K, tick_plan
    from pydantic import TypeAdapter

    from societas.agents.runtime.stepping import AGENTS_IN_FLIGHT, step_window
    from societas.memory.model.records import AddRequest, MemoryHit, SearchRequest
    from societas.memory.retrieval.batching import MicroBatcher

    hits = TypeAdapter(list[MemoryHit])
    row = {"agent_id": 0, "topic": "event", "day": 0, "t": 0.0, "time": 0.0, "location": None}
    row |= {"importance": 0.5, "layer": "short", "layer_since": 0.0, "type": "episodic"}

    async def answer(requests):
        rows = [
            [{**row, "id": i, "text": r.query, "score": 0.5, "tier": "hot"} for i in range(TOP_K)]
            for r in requests
        ]
        return [hits.validate_python(found, strict=True) for found in rows]

    joined: MicroBatcher = MicroBatcher(answer)
    queued: list[AddRequest] = []
    status: list[dict[str, str]] = [{} for _ in range(agents)]

    async def add(agent: int, topic: str, text: str, importance: float) -> int:
        r = AddRequest(agent_id=agent, topic=topic, description=text, importance=importance)
        queued.append(r)
        return len(queued)

    async def search(agent: int, query: str) -> list[MemoryHit]:
        return await joined.enqueue(SearchRequest(agent_id=agent, query=query, top_k=TOP_K))

    async def update(agent: int, key: str, value: str) -> None:
        status[agent][key] = value

    async def get(agent: int, key: str) -> str:
        return status[agent][key]

    async def whole(turn) -> None:
        for topic, text, importance in turn.adds:
            await add(turn.agent, topic, text, importance)
        await search(turn.agent, turn.query)
        await update(turn.agent, "thought", turn.thought)
        assert await get(turn.agent, "thought") == turn.thought

    rng = random.Random(SEED)
    started = time.perf_counter()
    for _ in range(memories // 2):
        await step_window(tick_plan(rng, agents), whole, AGENTS_IN_FLIGHT)
        queued.clear()
    return round((time.perf_counter() - started) * 1e6 / (agents * (memories // 2)), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=300)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--mode", choices=["gather", "sequential", "floor"], default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if args.agents < 1 or args.memories < 2:
        parser.error(f"--agents {args.agents} --memories {args.memories}: need >= 1 and >= 2")
    if args.mode is not None:  # one mode in this process (the wrappers stay installed)
        tune_worker()  # a group's process, as the Ray actor tunes it
        if args.mode == "floor":
            print(json.dumps({"turn": asyncio.run(api_floor(args.agents, args.memories))}))
        else:
            print(json.dumps(breakdown(args.agents, args.memories, args.mode)))
        return
    modes = {}
    for mode in ("gather", "sequential", "floor"):
        cmd = [sys.executable, __file__, "--mode", mode, "--agents", str(args.agents)]
        done = subprocess.run(
            [*cmd, "--memories", str(args.memories)], check=True, capture_output=True, text=True
        )
        modes[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    emit(
        {
            "unit": "µs per agent-turn (2 adds, 1 search, 1 status update + get)",
            "instrumented": "timing wrappers, ~1-2 µs a call: parts sum above an unwrapped turn",
            "cached": "nothing (as memory_ops)",
            "agents": args.agents,
            "memories_per_agent": args.memories,
            "modes": modes,
            "machine": machine(),
        },
        args.json,
    )


if __name__ == "__main__":
    main()
