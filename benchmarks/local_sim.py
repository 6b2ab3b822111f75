"""Engine throughput of a whole scenario in one process: `town`, provider `rules` (a
deterministic offline policy, not a language model), memory on the `edge` backend.

societas: one GroupEngine steps its A agents concurrently (up to 256 in flight), so their
memory searches/adds and LLM calls coalesce into one batch per event-loop turn, and hot state
goes back to KV memory in one batched write per tick.
Baseline, same run, same workload and seed: the agents step one after another
(`concurrency="sequential"`), so every memory call is a batch of one: the per-agent,
unbatched way. Each side runs in its own child process so RSS figures are not mixed.

    python benchmarks/local_sim.py [--agents A] [--ticks T] [--baseline-ticks B] [--json P]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import emit, machine, peak_rss_mb, percentile

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1000.0  # agent-steps/s


def side(mode: str, agents: int, ticks: int) -> dict:
    """Run the town in this process and return its figures."""
    from societas import Society
    from societas.agents.scenario import load_scenario
    from societas.memory.tuning import tune_worker

    tune_worker()  # the process hosts the group, as `societas sim --local` tunes it
    cfg = load_scenario(ROOT / "configs" / "town.yaml").with_overrides(agents=agents, ticks=ticks)
    data = cfg.model_dump(mode="python")
    data["llm"] = {"provider": "rules"}
    data["memory"]["vector_store"]["backend"] = "edge"
    with tempfile.TemporaryDirectory(prefix="societas-bench-") as out:
        society = Society.from_scenario(data, out=out)
        summary = society.run(backend="local", groups=1, concurrency=mode).summary
    return {
        "mode": mode,
        "agents": summary.agents,
        "ticks": summary.ticks_run,
        "wall_s": round(summary.wall_s, 3),
        "agent_steps_per_s": round(summary.agent_steps_per_s, 1),
        "tick_p50_s": round(percentile(summary.tick_seconds, 50), 4),
        "tick_p95_s": round(percentile(summary.tick_seconds, 95), 4),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "memories_total": summary.memories_total,
        "llm_requests": summary.llm_requests,
        "encounters": summary.encounters,
        "messages": summary.messages,
    }


def child(mode: str, agents: int, ticks: int) -> dict:
    cmd = [sys.executable, __file__, "--side", mode, "--agents", str(agents), "--ticks", str(ticks)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=1000)
    ap.add_argument("--ticks", type=int, default=48)
    ap.add_argument(
        "--baseline-ticks",
        type=int,
        default=None,
        help="Ticks for the sequential baseline (default: same as --ticks).",
    )
    ap.add_argument("--json", default=None)
    ap.add_argument("--side", choices=["gather", "sequential"], default=None)
    args = ap.parse_args()
    if args.side:
        print(json.dumps(side(args.side, args.agents, args.ticks)))
        return
    main_side = child("gather", args.agents, args.ticks)
    base = child("sequential", args.agents, args.baseline_ticks or args.ticks)
    result = {
        "benchmark": "local_sim",
        "scenario": "town",
        "llm_provider": "rules (deterministic offline policy, not a language model)",
        "vector_backend": "edge",
        "agents": main_side["agents"],
        "ticks": main_side["ticks"],
        "agent_steps_per_s": main_side["agent_steps_per_s"],
        "tick_p50_s": main_side["tick_p50_s"],
        "peak_rss_mb": main_side["peak_rss_mb"],
        "memories_total": main_side["memories_total"],
        "target_agent_steps_per_s": TARGET,
        "meets_target": main_side["agent_steps_per_s"] >= TARGET,
        "societas": main_side,
        "baseline_sequential_unbatched": base,
        "speedup_vs_baseline": round(
            main_side["agent_steps_per_s"] / max(base["agent_steps_per_s"], 1e-9), 2
        ),
        "machine": machine(),
    }
    emit(result, args.json)


if __name__ == "__main__":
    main()
