"""Generative-agent cognition in a whole run: reflection, plans, conversations, relationships,
importance, counted from what the run stored (Parquet results and the group memories).

    .venv/bin/python benchmarks/cognition.py --agents 40 --days 2 --groups 2 \
        --provider rules --json benchmarks/results/cognition.json

Runs the `town` scenario on in-process groups (GroupEngine + the Coordinator, the code path
Ray actors run) with the rules provider (a deterministic offline policy, NOT a language
model) and the embedded Qdrant Edge memory with BM25. Importance is rated for every memory
in batched calls (batch_size memories per call, across the agents of a group); nothing is
cached between runs. A second run with cognition reduced to the pre-issue baseline (no hourly
decomposition, no reactions to news, conversations limited to one turn) is measured in the
same process for comparison of speed. Figures are measured, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, machine

from societas.memory.tuning import tune_worker

ROOT = Path(__file__).resolve().parent.parent


async def run_town(
    agents: int,
    days: int,
    groups: int,
    provider: str,
    out: Path,
    lean: bool = False,
    threshold: float | None = None,
    name: str = "town",
) -> dict[str, Any]:
    """One town run; returns the figures counted from its results and memories."""
    from societas.agents.scenario import load_scenario
    from societas.cluster.loop.coordinator import Coordinator
    from societas.cluster.loop.engines import EngineFactory
    from societas.cluster.loop.local import partition
    from societas.memory.embedding import build_embedder

    base = load_scenario(ROOT / "configs" / f"{name}.yaml")
    ticks = days * base.ticks_per_day
    data = base.model_dump(mode="python")
    data["agents"]["count"], data["ticks"], data["groups"] = agents, ticks, groups
    data["llm"]["provider"] = provider
    data["interventions"] = [iv for iv in data["interventions"] if iv["tick"] < ticks]
    if threshold is not None:
        data["cognition"]["reflection_threshold"] = threshold
    if lean:
        data["cognition"].update(
            decompose_hours=False, react_to_news=False, conversation_max_turns=1
        )
    scenario = load_scenario(data)
    embedder = build_embedder(scenario.memory.embedding)
    engines = EngineFactory(scenario, partition(agents, groups), out, embedder=embedder).build_all()
    for e in engines:
        await e.setup()
    coord = Coordinator(
        engines,
        seed=scenario.seed,
        max_pairs_per_place=scenario.social.max_pairs_per_place,
    )
    started = time.perf_counter()
    summary = await coord.run(scenario.ticks)
    wall = time.perf_counter() - started
    importances: Counter[float] = Counter()
    memories = candidates = searches = 0
    for e in engines:
        assert e.memory is not None
        offset = None
        while True:
            page, offset = await e.memory.store.scroll(offset, 5000, with_vectors=False)
            for p in page:
                importances[round(float((p.payload or {})["importance"]) * 10)] += 1
            if offset is None:
                break
        memories += sum((await e.memory.tier_counts()).values())
        candidates += e.memory.counters.get("retrieval_candidates", 0)
        searches += e.memory.counters.get("searches", 0)
    for e in engines:
        await e.close()
    return {
        "summary": summary,
        "wall_s": wall,
        "importances": importances,
        "memories": memories,
        "candidates_mean": candidates / searches if searches else 0.0,
    }


def figures(out: Path, agents: int, days: int, run: dict[str, Any]) -> dict[str, Any]:
    """The issue's keys, counted from the run's Parquet tables and memories."""
    from societas.agents.runtime.results import read_table

    agent_days = agents * days
    refl = read_table(out, "reflections").to_pylist()
    events = {(r["tick"], r["agent_id"]) for r in refl}  # one reflection event = agent + tick
    links = [len([x for x in r["evidence_ids"].split(",") if x]) for r in refl]
    dialogues = [r for r in read_table(out, "dialogues").to_pylist() if r["conversation_id"]]
    turns = Counter(r["conversation_id"] for r in dialogues)
    owner = {a: g for g, ids in enumerate(_partition(agents, run["groups"])) for a in ids}
    cross = {r["conversation_id"] for r in dialogues if owner[r["speaker"]] != owner[r["listener"]]}
    rel = read_table(out, "relationships").num_rows
    plans = Counter(r["level"] for r in read_table(out, "plans").to_pylist())
    replans = sum(1 for r in read_table(out, "events").to_pylist() if r["kind"] == "replan")
    summary = run["summary"]
    return {
        "reflections_per_agent_day": round(len(events) / agent_days, 3),
        "reflections_per_day_busiest_decile": _busiest(events, agents, days),
        "reflection_insights": len(refl),
        "reflection_evidence_links_mean": round(sum(links) / len(links), 3) if links else 0.0,
        "conversations": len(turns),
        "mean_dialogue_turns": round(sum(turns.values()) / len(turns), 3) if turns else 0.0,
        "cross_group_conversations": len(cross),
        "relationship_updates_per_agent_day": round(rel / agent_days, 3),
        "replans_per_agent_day": round(replans / agent_days, 3),
        "plan_actions_per_agent_day": round(plans["action"] / agent_days, 3),
        "importance_distinct_values": len(run["importances"]),
        "importance_histogram_1_10": {str(k): v for k, v in sorted(run["importances"].items())},
        "retrieval_candidates_mean": round(run["candidates_mean"], 1),
        "memories_per_agent": round(run["memories"] / agents, 1),
        "agent_steps_per_s": round(summary.agent_steps / run["wall_s"], 1),
        "wall_s": round(run["wall_s"], 2),
    }


def _busiest(events: set[tuple[int, int]], agents: int, days: int) -> float:
    """Reflections per day of the agent at the 90th percentile (a busy agent)."""
    per_agent = sorted(Counter(a for _, a in events).get(i, 0) / days for i in range(agents))
    return round(per_agent[int(0.9 * (agents - 1))], 3)


def _partition(agents: int, groups: int) -> list[list[int]]:
    from societas.cluster.loop.local import partition

    return partition(agents, groups)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {
        "benchmark": "cognition",
        "machine": machine(),
        "config": {
            "scenario": args.scenario,
            "agents": args.agents,
            "days": args.days,
            "groups": args.groups,
            "provider": args.provider,
            "reflection_threshold": args.threshold,
            "note": "rules = deterministic offline policy, not a language model; importance "
            "rated in batched calls across each group; no LLM cache",
        },
    }
    for label, lean in (("cognition", False), ("baseline_lean", True)):
        if label == "baseline_lean" and args.no_baseline:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            run = await run_town(
                args.agents,
                args.days,
                args.groups,
                args.provider,
                out,
                lean,
                args.threshold,
                args.scenario,
            )
            run["groups"] = args.groups
            result[label] = figures(out, args.agents, args.days, run)
    result.update(result["cognition"])
    if "baseline_lean" in result:
        base = result["baseline_lean"]["agent_steps_per_s"]
        result["speed_vs_lean"] = round(result["agent_steps_per_s"] / base, 3) if base else None
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="town", help="A config in configs/ (default town).")
    ap.add_argument("--agents", type=int, default=40)
    ap.add_argument("--days", type=int, default=2)
    ap.add_argument("--groups", type=int, default=2)
    ap.add_argument("--provider", choices=["rules"], default="rules")
    ap.add_argument(
        "--threshold", type=float, default=None, help="Reflection threshold (default: config)."
    )
    ap.add_argument("--no-baseline", action="store_true", help="Skip the lean comparison run.")
    ap.add_argument("--json", type=Path, default=None, help="Also write the JSON here.")
    args = ap.parse_args()
    tune_worker()  # a group's process, as the Ray actor tunes it
    emit(asyncio.run(main_async(args)), args.json)


if __name__ == "__main__":
    main()
