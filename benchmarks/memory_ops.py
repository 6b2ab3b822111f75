"""Memory throughput: societas' batched group memory vs the AgentSociety way, same run.

societas: A agents in one GroupMemory (BM25 + Qdrant Edge shard), every tick each agent adds
2 memories, runs 1 search and 1 KV update + get, all batched through the group API, until
each agent has M memories. Baseline (AgentSociety's design): one QdrantClient(":memory:") per
agent, one embed + one upsert per add, one search per call, same BM25 embedder.

Each side runs in its own child process so RSS figures are not mixed.

    python benchmarks/memory_ops.py [--agents A] [--memories M] [--baseline-agents B] [--json P]
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

VOCAB = (
    "storm flood river market apples school bridge shelter radio neighbour coffee election tax "
    "bus train fire doctor garden festival rumour bakery harbour church library hospital "
    "teacher fisherman nurse mayor police council budget wage rent farm tractor wheat cattle "
    "concert football museum theatre painting novel poem ferry airport bicycle highway tunnel "
    "vaccine fever clinic pharmacy medicine lawyer court verdict protest strike union factory "
    "engine battery solar wind turbine drought harvest orchard vineyard cheese bread soup "
    "wedding funeral birthday picnic beach island mountain forest lake canoe tent campfire"
).split()
TOPICS = ("activity", "social", "event", "economy", "mobility")
SEED = 20261122


def sentence(rng: random.Random) -> str:
    words = rng.sample(VOCAB, 5)
    return (
        f"I saw the {words[0]} near the {words[1]} and talked about {words[2]}, "
        f"{words[3]} and {words[4]}"
    )


def query_for(rng: random.Random) -> str:
    return " ".join(rng.sample(VOCAB, 2))


def overlaps(query: str, text: str | None) -> bool:
    return text is not None and bool(set(query.split()) & set(text.replace(",", "").split()))


# --------------------------------------------------------------------------- societas
async def run_societas(agents: int, memories: int) -> dict:
    from societas.memory import (
        AddRequest,
        GroupMemory,
        GroupMemoryConfig,
        KVUpdate,
        SearchRequest,
    )

    rng = random.Random(SEED)
    base_rss = rss_mb()
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        group = GroupMemory(GroupMemoryConfig(), root=Path(tmp))
        await group.add_agents({a: {"name": f"agent {a}"} for a in range(agents)})
        add_s = search_s = kv_s = 0.0
        adds = searches = overlap_hits = 0
        ticks = memories // 2
        for tick in range(ticks):
            group.clock.set(tick // 48, (tick % 48) * 1800.0)
            requests = [
                AddRequest(
                    agent_id=a,
                    topic=rng.choice(TOPICS),
                    description=sentence(rng),
                    importance=rng.random(),
                )
                for a in range(agents)
                for _ in range(2)
            ]
            t0 = time.perf_counter()
            await group.add_many(requests)
            add_s += time.perf_counter() - t0
            adds += len(requests)

            queries = [
                SearchRequest(agent_id=a, query=query_for(rng), top_k=3) for a in range(agents)
            ]
            t0 = time.perf_counter()
            results = await group.search_many(queries)
            search_s += time.perf_counter() - t0
            searches += len(queries)
            overlap_hits += sum(
                overlaps(q.query, r[0].text if r else None)
                for q, r in zip(queries, results, strict=True)
            )

            updates = [
                KVUpdate(agent_id=a, key="thought", value=sentence(rng)) for a in range(agents)
            ]
            t0 = time.perf_counter()
            await group.update_many(updates)
            for a in range(agents):
                group.kv_get(a, "thought")
            kv_s += time.perf_counter() - t0

        # Latency of one search on its own (no batching), over the full store.
        latencies = []
        for _ in range(min(2000, agents * 2)):
            request = SearchRequest(agent_id=rng.randrange(agents), query=query_for(rng))
            t0 = time.perf_counter()
            await group.search_many([request])
            latencies.append((time.perf_counter() - t0) * 1000)
        stored = await group.memory_count()
        peak = peak_rss_mb()
        await group.close()
    return {
        "adds": adds,
        "stored": stored,
        "adds_per_s": adds / add_s,
        "searches_per_s": searches / search_s,
        "kv_ops_per_s": agents * ticks / kv_s,
        "search_p50_ms": percentile(latencies, 50),
        "search_p95_ms": percentile(latencies, 95),
        "batched_search_ms_per_query": search_s / searches * 1000,
        "hit_word_overlap": overlap_hits / searches,
        "peak_rss_mb": peak,
        "rss_mb_per_agent": (peak - base_rss) / agents,
    }


# --------------------------------------------------------------------------- baseline
def run_baseline(agents: int, memories: int) -> dict:
    from fastembed import SparseTextEmbedding
    from qdrant_client import QdrantClient, models

    from societas.memory.embedding.config import BUNDLED_BM25_DIR

    rng = random.Random(SEED)
    base_rss = rss_mb()
    model = SparseTextEmbedding("Qdrant/bm25", specific_model_path=str(BUNDLED_BM25_DIR))
    clients = []
    for _ in range(agents):
        client = QdrantClient(":memory:")
        client.create_collection(
            "memories",
            vectors_config={},
            sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
        clients.append(client)
    kv: list[dict] = [{} for _ in range(agents)]
    next_id = [0] * agents
    add_s = search_s = 0.0
    adds = searches = overlap_hits = 0

    def embed_one(text: str, query: bool = False) -> models.SparseVector:
        e = next(iter(model.query_embed(text) if query else model.embed([text])))
        return models.SparseVector(indices=e.indices.tolist(), values=e.values.tolist())

    def upsert_one(a: int, text: str, payload: dict) -> None:
        next_id[a] += 1
        clients[a].upsert(
            "memories",
            points=[
                models.PointStruct(
                    id=next_id[a],
                    vector={"bm25": embed_one(text)},
                    payload=payload | {"text": text},
                )
            ],
        )

    for tick in range(memories // 2):
        for a in range(agents):
            for _ in range(2):
                text = sentence(rng)
                t0 = time.perf_counter()
                upsert_one(
                    a,
                    text,
                    {"topic": rng.choice(TOPICS), "day": tick // 48, "importance": rng.random()},
                )
                add_s += time.perf_counter() - t0
                adds += 1
            query = query_for(rng)
            t0 = time.perf_counter()
            hits = (
                clients[a]
                .query_points(
                    "memories",
                    query=embed_one(query, True),
                    using="bm25",
                    limit=3,
                    with_payload=True,
                )
                .points
            )
            search_s += time.perf_counter() - t0
            searches += 1
            overlap_hits += overlaps(query, hits[0].payload["text"] if hits else None)
            thought = sentence(rng)
            kv[a]["thought"] = thought
            upsert_one(a, thought, {"kv": "thought"})  # re-embedded KV, as the seed does
    peak = peak_rss_mb()
    return {
        "adds_per_s": adds / add_s,
        "searches_per_s": searches / search_s,
        "hit_word_overlap": overlap_hits / searches,
        "peak_rss_mb": peak,
        "rss_mb_per_agent": (peak - base_rss) / agents,
    }


def child(part: str, agents: int, memories: int) -> dict:
    """Run one side in a fresh interpreter and read its JSON."""
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--part",
            part,
            "--agents",
            str(agents),
            "--memories",
            str(memories),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--baseline-agents", type=int, default=200)
    parser.add_argument("--json", default=None)
    parser.add_argument("--part", choices=["societas", "baseline"], default=None)
    args = parser.parse_args()
    if args.agents < 1 or args.memories < 2 or args.baseline_agents < 1:
        parser.error("--agents and --baseline-agents must be >= 1 and --memories >= 2")
    if args.part == "societas":
        print(json.dumps(asyncio.run(run_societas(args.agents, args.memories))))
        return
    if args.part == "baseline":
        print(json.dumps(run_baseline(args.agents, args.memories)))
        return

    ours = child("societas", args.agents, args.memories)
    base = child("baseline", args.baseline_agents, args.memories)
    result = {
        "agents": args.agents,
        "memories_per_agent": args.memories,
        "backend": "edge",
        "embedder": "bm25",
        "adds_per_s": round(ours["adds_per_s"], 1),
        "searches_per_s": round(ours["searches_per_s"], 1),
        "search_p50_ms": round(ours["search_p50_ms"], 3),
        "search_p95_ms": round(ours["search_p95_ms"], 3),
        "batched_search_ms_per_query": round(ours["batched_search_ms_per_query"], 3),
        "kv_ops_per_s": round(ours["kv_ops_per_s"], 1),
        "peak_rss_mb": round(ours["peak_rss_mb"], 1),
        "rss_mb_per_agent": round(ours["rss_mb_per_agent"], 4),
        "hit_word_overlap": round(ours["hit_word_overlap"], 4),
        "memories_stored": ours["stored"],
        "baseline_agents": args.baseline_agents,
        "baseline_adds_per_s": round(base["adds_per_s"], 1),
        "baseline_searches_per_s": round(base["searches_per_s"], 1),
        "baseline_rss_mb_per_agent": round(base["rss_mb_per_agent"], 4),
        "baseline_hit_word_overlap": round(base["hit_word_overlap"], 4),
        "speedup_adds": round(ours["adds_per_s"] / base["adds_per_s"], 2),
        "speedup_searches": round(ours["searches_per_s"] / base["searches_per_s"], 2),
        "rss_ratio": round(ours["rss_mb_per_agent"] / base["rss_mb_per_agent"], 4),
        "machine": machine(),
    }
    emit(result, args.json)


if __name__ == "__main__":
    main()
