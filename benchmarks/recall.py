"""Recall benchmark: does an agent retrieve what it lived through? Model-free.

Runs the `town` scenario (configs/town.yaml, rules policy, no model) for 2 and 20 simulated
days, then asks sampled agents questions built from the run's results tables (`knowledge`:
who told you that ..., where were you when you first heard that ...; `agent_state`: what were
you doing at HH:MM on day D; `dialogues`: what did you and B talk about on day D). A
question's evidence is the agent's own memories of that event (matched by time and text).
Each question is put, as written, to the agent's own stream search (`stream.search(question,
top_k=5)`, its default tiers: the search agents make in a run, every tier with
tiers.search_cold) on the group memory restored
from the run's last checkpoint, and scored by the share of its evidence in the top 5.

Baselines in the same run: the same memories ranked by one factor of the score alone
(relevance, recency, importance: the other two weights set to 0 in `memory.retrieval`).
Variants: the memory profiles (default, finmem, cognitive) with BM25, and the embedders
(bm25, minilm, hybrid) with the default profile, each its own society.

    python benchmarks/recall.py --json benchmarks/results/recall.json
    python benchmarks/recall.py --quick          # a small smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import yaml
from _common import emit, machine
from _recall_questions import KINDS, Clock, Memory, Question, questions_for, recall_at

from societas import GroupMemory, Society
from societas.agents.runtime.results import read_table
from societas.cluster.experiments.interview import open_memory
from societas.memory import build_embedder

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "configs" / "town.yaml"
TOP_K = 5
EVERYTHING = "the and of"  # only stop words: every memory scores by recency and importance
RANKINGS: dict[str, dict[str, float]] = {
    "default": {},
    "relevance_only": {"recency_weight": 0.0, "importance_weight": 0.0},
    "recency_only": {"importance_weight": 0.0, "relevance_weight": 0.0},
    "importance_only": {"recency_weight": 0.0, "relevance_weight": 0.0},
}
# Other relevance scales and weights, tried on the default society (bm25) beside the default.
SCALES: dict[str, dict[str, Any]] = {
    "bm25_raw": {"relevance_normalization": "identity"},
    "bm25_saturate": {"relevance_normalization": "saturate"},
    "equal_weights_hourly": {"relevance_weight": 1.0, "recency_decay_per_hour": 0.99},
    "relevance_weight_3": {"relevance_weight": 3.0},
}
VARIANTS = {  # name -> (memory profile, embedder)
    "default/bm25": ("default", "bm25"),
    "finmem/bm25": ("finmem", "bm25"),
    "cognitive/bm25": ("cognitive", "bm25"),
    "default/minilm": ("default", "minilm"),
    "default/hybrid": ("default", "hybrid"),
}


def scenario(profile: str, embedder: str, agents: int, days: int) -> dict[str, Any]:
    """configs/town.yaml with this population, length, memory profile and embedder; one
    checkpoint, at the end (the memories the questions are put to)."""
    data = yaml.safe_load(SCENARIO.read_text())
    data["agents"]["count"] = agents
    data["ticks"] = days * 24 * 60 // data["tick_minutes"]
    memory = data.setdefault("memory", {})
    memory["profile"] = profile
    memory.setdefault("embedding", {})["kind"] = embedder
    ticks = data["ticks"]
    data["cluster"] = {**data.get("cluster", {}), "checkpoint_every": ticks, "keep_checkpoints": 1}
    return data


async def restore(society: Society, ranking: str, embedder: Any, scratch: Path) -> GroupMemory:
    """Group 0's memory as the run's last checkpoint holds it, ranked by `ranking`'s weights."""
    root = Path(tempfile.mkdtemp(prefix=f"{ranking}-", dir=scratch))
    settings = {**RANKINGS, **SCALES}[ranking]
    return await open_memory(society.out, 0, root, retrieval=settings, embedder=embedder)


async def memories_of(group: GroupMemory, agent: int, days: int) -> list[Memory]:
    """Every memory of `agent` in any tier, found by day windows of the agent's own search."""
    stream = group.agent(agent).stream
    out: dict[int, Memory] = {}
    windows = [(d, min(d + 4, days)) for d in range(0, days + 1, 5)]
    while windows:
        lo, hi = windows.pop()
        hits = await stream.search(
            EVERYTHING, top_k=1000, day_range=(lo, hi), tiers=("hot", "warm", "cold")
        )
        if len(hits) == 1000 and hi > lo:  # the window may hold more: split it
            mid = (lo + hi) // 2
            windows += [(lo, mid), (mid + 1, hi)]
            continue
        for h in hits:
            out[h.id] = Memory(h.id, h.agent_id, h.topic, h.text, h.day * 86_400.0 + h.t)
    return sorted(out.values(), key=lambda m: (m.time, m.id))


def table_rows(run: Path, name: str, columns: list[str]) -> list[dict[str, Any]]:
    """The rows of one results table of the run, these columns only."""
    return read_table(run, name).select(columns).to_pylist()


async def build_questions(
    society: Society, embedder: Any, scratch: Path, sample: int, per_kind: int, seed: int
) -> tuple[list[Question], int, int]:
    """Questions for `sample` agents drawn by `seed`; also the events without evidence
    found, and how many memories the sampled agents hold."""
    sc = society.scenario
    run = society.out
    tables = {
        "knowledge": table_rows(run, "knowledge", ["tick", "agent_id", "fact", "source"]),
        "agent_state": table_rows(run, "agent_state", ["tick", "agent_id", "activity"]),
        "dialogues": table_rows(run, "dialogues", ["tick", "speaker", "listener"]),
    }
    facts = {f.id: f.text for f in sc.facts}
    clock = Clock(sc.tick_seconds, sc.start_hour)
    days = int(clock.at(sc.ticks) // 86_400)
    group = await restore(society, "default", embedder, scratch)
    try:
        ids = group.agent_ids
        names = {i: group.agent(i).status.peek("name") for i in ids}
        rng = random.Random(seed)
        chosen = sorted(rng.sample(ids, min(sample, len(ids))))
        questions: list[Question] = []
        unmatched = held = 0
        for agent in chosen:
            memories = await memories_of(group, agent, days)
            held += len(memories)
            qs, missing = questions_for(agent, memories, tables, names, facts, clock, rng, per_kind)
            questions += qs
            unmatched += missing
    finally:
        await group.close()
    return questions, unmatched, held


def summary(scores: list[float]) -> float | None:
    """The mean, rounded; None when there was nothing to score."""
    return round(statistics.fmean(scores), 4) if scores else None


async def ask(
    society: Society,
    questions: list[Question],
    ranking: str,
    embedder: Any,
    scratch: Path,
    old_before: float,
) -> dict[str, Any]:
    """Every question to its agent's own search under one ranking: recall@5 overall, by
    kind, for evidence older than the warm window (and those again over every tier)."""
    group = await restore(society, ranking, embedder, scratch)

    async def one(q: Question, tiers: tuple[str, ...] | None) -> list[int]:
        hits = await group.agent(q.agent_id).stream.search(q.text, top_k=TOP_K, tiers=tiers)
        return [h.id for h in hits]

    t0 = time.perf_counter()
    try:
        tops = await asyncio.gather(*(one(q, None) for q in questions))
        wall = time.perf_counter() - t0
        old = [i for i, q in enumerate(questions) if q.evidence_time < old_before]
        tops_warm = await asyncio.gather(*(one(questions[i], ("hot", "warm")) for i in old))
    finally:
        await group.close()
    scores = [recall_at(t, q.evidence, TOP_K) for t, q in zip(tops, questions, strict=True)]
    hits = [float(s > 0) for s in scores]
    return {
        "recall_at_5": summary(scores),
        "hit_at_5": summary(hits),
        "by_kind": {
            k: summary([s for s, q in zip(scores, questions, strict=True) if q.kind == k])
            for k in KINDS
        },
        "recall_at_5_old": summary([scores[i] for i in old]),
        "recall_at_5_old_hot_warm": summary(
            [
                recall_at(t, questions[i].evidence, TOP_K)
                for t, i in zip(tops_warm, old, strict=True)
            ]
        ),
        "search_ms_per_question": round(wall * 1e3 / max(len(questions), 1), 3),
        "_scores": scores,
        "_old": [scores[i] for i in old],
    }


async def society_figures(
    variant: str, days: int, agents: int, sample: int, per_kind: int, seed: int, scratch: Path
) -> dict[str, Any]:
    """Run one society, build its questions, ask them under every ranking."""
    profile, kind = VARIANTS[variant]
    out = scratch / f"{variant.replace('/', '-')}-{days}d"
    society = Society.from_scenario(scenario(profile, kind, agents, days), out=out)
    t0 = time.perf_counter()
    try:
        society.run()
    except Exception as err:  # a society that fails is reported, the others still measured
        shutil.rmtree(out, ignore_errors=True)
        return {"days": days, "agents": agents, "error": f"{type(err).__name__}: {err}"}
    run_s = time.perf_counter() - t0
    embedder = build_embedder(society.scenario.memory.embedding)
    t1 = time.perf_counter()
    questions, unmatched, held = await build_questions(
        society, embedder, scratch, sample, per_kind, seed
    )
    sc = society.scenario
    end = Clock(sc.tick_seconds, sc.start_hour).at(sc.ticks)
    warm_days = sc.memory.tiers.warm_max_age_days
    old_before = end - warm_days * 86_400 if warm_days is not None else float("-inf")
    names = [*RANKINGS, *(SCALES if variant == "default/bm25" else ())]
    rankings = {r: await ask(society, questions, r, embedder, scratch, old_before) for r in names}
    result = {
        "days": days,
        "agents": agents,
        "sampled_agents": min(sample, agents),
        "memories_of_sampled_agents": held,
        "questions": len(questions),
        "questions_by_kind": {k: sum(q.kind == k for q in questions) for k in KINDS},
        "questions_old": sum(q.evidence_time < old_before for q in questions),
        "events_without_evidence": unmatched,
        "evidence_per_question": summary([len(q.evidence) for q in questions]),
        "run_s": round(run_s, 1),
        "questions_s": round(time.perf_counter() - t1, 1),
        "rankings": rankings,
        "examples": [
            {
                "agent_id": q.agent_id,
                "kind": q.kind,
                "question": q.text,
                "evidence": len(q.evidence),
            }
            for q in questions[: len(KINDS)]
        ],
    }
    shutil.rmtree(out, ignore_errors=True)
    return result


def society_job(
    variant: str, days: int, agents: int, sample: int, per_kind: int, seed: int, scratch: str
) -> dict[str, Any]:
    """One society's figures in a worker process."""
    return asyncio.run(
        society_figures(variant, days, agents, sample, per_kind, seed, Path(scratch))
    )


def pooled(blocks: list[dict[str, Any]], ranking: str, key: str) -> float | None:
    """recall@5 over the questions of several societies together (those that ran)."""
    scores = [s for b in blocks if "error" not in b for s in b["rankings"][ranking][key]]
    return summary(scores)


def longest_old(blocks: dict[str, dict[str, Any]], ranking: str, key: str) -> float | None:
    """A recall figure of old evidence in the longest society, None if it failed."""
    block = blocks[max(blocks, key=lambda name: int(name[:-1]))]
    return None if "error" in block else block["rankings"][ranking][key]


def suffix(ranking: str) -> str:
    """'' for the default ranking, '_relevance_only' and so on for the others."""
    return "" if ranking == "default" else f"_{ranking}"


def strip(block: dict[str, Any]) -> dict[str, Any]:
    """A society's figures without the per-question scores."""
    for figures in block.get("rankings", {}).values():
        figures.pop("_scores", None)
        figures.pop("_old", None)
    return block


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=30)
    parser.add_argument("--days", default="2,20", help="society lengths in days, comma-separated")
    parser.add_argument("--sample", type=int, default=30, help="agents questioned per society")
    parser.add_argument("--per-kind", type=int, default=2, help="questions of each kind an agent")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--quick", action="store_true", help="12 agents, 1 and 3 days, default/bm25"
    )
    parser.add_argument("--workers", type=int, default=2, help="societies run at once (processes)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if args.quick:
        args.agents, args.days, args.sample, args.variants = 12, "1,3", 12, "default/bm25"
    days = [int(d) for d in args.days.split(",") if d]
    variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown or "default/bm25" not in variants:
        parser.error(f"--variants: default/bm25 and any of {list(VARIANTS)}; unknown {unknown}")
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    if args.agents < 2 or args.sample < 1 or args.per_kind < 1 or not days or min(days) < 1:
        parser.error("--agents >= 2, --sample >= 1, --per-kind >= 1, --days >= 1 each")
    t0 = time.perf_counter()
    figures: dict[str, dict[str, Any]] = {v: {} for v in variants}
    with (
        tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp,
        ProcessPoolExecutor(args.workers, mp_context=get_context("spawn")) as pool,
    ):
        jobs = sorted(
            ((v, d) for v in variants for d in days), key=lambda job: (-job[1], job[0])
        )  # the longest societies first, so that the workers end together
        running = {
            pool.submit(
                society_job, v, d, args.agents, args.sample, args.per_kind, args.seed, tmp
            ): (v, d)
            for v, d in jobs
        }
        for future in as_completed(running):
            variant, d = running[future]
            block = future.result()
            figures[variant][f"{d}d"] = block
            done = block.get("error") or block["rankings"]["default"]["recall_at_5"]
            print(f"{variant} {d}d: {done} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    figures = {v: {f"{d}d": figures[v][f"{d}d"] for d in days} for v in variants}
    result: dict[str, Any] = {}
    default = list(figures["default/bm25"].values())
    for ranking in RANKINGS:
        result[f"recall_at_5{suffix(ranking)}"] = pooled(default, ranking, "_scores")
    for key in ("recall_at_5_old", "recall_at_5_old_hot_warm"):
        result[key] = longest_old(figures["default/bm25"], "default", key)
    result["relevance_scales"] = {
        scale: {
            "retrieval": SCALES[scale],
            "recall_at_5": pooled(default, scale, "_scores"),
            "recall_at_5_old_hot_warm": longest_old(
                figures["default/bm25"], scale, "recall_at_5_old_hot_warm"
            ),
        }
        for scale in SCALES
    }
    result["variants"] = {
        v: {
            **{
                f"recall_at_5{suffix(r)}": pooled(list(blocks.values()), r, "_scores")
                for r in RANKINGS
            },
            "recall_at_5_old": longest_old(blocks, "default", "recall_at_5_old"),
            "failed": [name for name, b in blocks.items() if "error" in b],
            "societies": {name: strip(b) for name, b in blocks.items()},
        }
        for v, blocks in figures.items()
    }
    result["what"] = (
        f"town (configs/town.yaml, rules policy: not a language model), {args.agents} agents, "
        f"{' and '.join(map(str, days))} simulated days; {args.sample} agents sampled per society, "
        f"up to {args.per_kind} questions of each kind per agent; each question's text is the "
        f"query of the agent's own stream.search(top_k={TOP_K}) over its default tiers (as in a "
        "run: every tier with tiers.search_cold) on "
        "the group memory restored from the run's last checkpoint; recall@5 = share of the "
        "question's evidence memories in the top 5 (out of min(5, evidence)); hit@5 = at least "
        "one; pooled over the societies; *_old: evidence older than tiers.warm_max_age_days "
        "at the run's end (longest society), *_hot_warm: the same searched over hot and warm only"
    )
    result["baselines"] = (
        "the same memories and questions ranked by one factor alone: memory.retrieval weights "
        "of the other two set to 0 (relevance_only, recency_only, importance_only)"
    )
    result["cached"] = (
        "embedding cache as configured (memory.embedding.cache_size) during the runs; each "
        "ranking restores the checkpoint afresh, so no search sees another's reads; a "
        "ranking's questions are searched gathered (micro-batched, as agents of a tick are); "
        "the societies run in --workers spawned processes at once"
    )
    result["settings"] = {
        "workers": args.workers,
        "agents": args.agents,
        "days": days,
        "sample": args.sample,
        "per_kind": args.per_kind,
        "seed": args.seed,
        "variants": variants,
    }
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    result["machine"] = machine()
    emit(result, args.json)


if __name__ == "__main__":
    main()
