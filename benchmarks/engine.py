"""Engine throughput and memory on local Ray: agent-steps/s of the `town` scenario with the
rules provider (a deterministic offline policy, not a language model) and the embedded Qdrant
Edge backend, with G groups and (unless --only) with 1 group in the same run, plus scaling
efficiency; and the peak of the summed PSS of every process of the run (driver, Ray services,
group actors), so Ray's shared memory counts once.

    .venv/bin/python benchmarks/engine.py --agents 10000 --ticks 48 --groups 2 [--only] \
        --json benchmarks/results/engine.json

Throughput counts tick time only (setup, population generation and Ray start are reported
apart). Checkpoints are taken as in a simulation (every 6 simulated hours and after the last
tick; `--checkpoint-every 0` for none), between ticks: `between_ticks_s`. Cached: nothing
across runs (fresh run directory); within a run the memory's embedding cache (100,000 texts)
is on as in every simulation, the LLM response cache is off (rules answer in process).
Figures are measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _one(
    agents: int, ticks: int, groups: int, out: Path, checkpoint_every: int | None = None
) -> dict[str, Any]:
    """One run on Ray; returns throughput, tick times, peak RSS of the groups and the peak
    summed PSS of all the run's processes. `checkpoint_every`: None, the run's default (every
    6 simulated hours and after the last tick); 0, none."""
    from _pss import PssSampler

    from societas import Society
    from societas.agents.scenario import load_scenario
    from societas.cluster.ray.runtime import ClusterConfig

    scenario = load_scenario(ROOT / "configs" / "town.yaml").with_overrides(
        agents=agents, ticks=ticks, groups=groups
    )
    rss: dict[int, int] = {}

    def on_tick(report: Any) -> None:
        for s in report.groups:
            rss[s.group_id] = max(rss.get(s.group_id, 0), s.rss_bytes)

    started = time.perf_counter()
    with PssSampler() as pss:
        summary = (
            Society.from_scenario(scenario, out=out)
            .run(
                backend="ray",
                groups=groups,
                on_tick=on_tick,
                cluster=ClusterConfig(metrics={"port": 0}, checkpoint_every=checkpoint_every),
            )
            .summary
        )
    wall = time.perf_counter() - started
    peak_pss_mb = pss.peak_bytes / 2**20
    tick_time = sum(summary.tick_seconds)
    return {
        "groups": groups,
        "agent_steps": summary.agent_steps,
        "agent_steps_per_s": summary.agent_steps / tick_time,
        "tick_p50_s": statistics.median(summary.tick_seconds),
        "tick_max_s": max(summary.tick_seconds),
        "tick_time_s": tick_time,
        "wall_s": wall,
        "setup_s": wall - summary.wall_s,
        "between_ticks_s": summary.wall_s - tick_time,  # checkpoints, callbacks
        "llm_requests": summary.llm_requests,
        "peak_rss_mb_groups": sum(rss.values()) / 2**20,
        "peak_pss_all_processes_mb": peak_pss_mb,
        "rss_per_agent_kb": peak_pss_mb * 1024 / agents,
        "pss_mb_by_process_at_peak": {
            k: round(v / 2**20, 1) for k, v in sorted(pss.peak_by_kind.items())
        },
        "pss_samples": pss.samples,
        "checkpoints_at_ticks": list(summary.checkpoints),
    }


def run_benchmark(
    agents: int = 10_000,
    ticks: int = 48,
    groups: int = 2,
    json_path: Path | None = None,
    only: bool = False,
    checkpoint_every: int | None = None,
) -> dict[str, Any]:
    """G groups, then (unless `only`) 1 group, on one local Ray instance."""
    import ray

    from societas.cluster.ray.runtime import ensure_ray

    ensure_ray(None, num_cpus=max(os.cpu_count() or 1, groups))
    with tempfile.TemporaryDirectory(prefix="societas-bench-") as tmp:
        multi = _one(agents, ticks, groups, Path(tmp) / f"g{groups}", checkpoint_every)
        single = (
            _one(agents, ticks, 1, Path(tmp) / "g1", checkpoint_every)
            if groups > 1 and not only
            else None
        )
    driver_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ray.shutdown()
    result = {
        "benchmark": "engine",
        "scenario": "town",
        "provider": "rules (deterministic offline policy, not a language model)",
        "backend": "edge",
        "agents": agents,
        "ticks": ticks,
        "groups": groups,
        "agent_steps_per_s": multi["agent_steps_per_s"],
        "agent_steps_per_s_1group": single["agent_steps_per_s"] if single else None,
        "scaling_efficiency": (
            multi["agent_steps_per_s"] / (groups * single["agent_steps_per_s"]) if single else None
        ),
        "tick_p50_s": multi["tick_p50_s"],
        "peak_rss_mb_total": multi["peak_rss_mb_groups"] + driver_peak,
        "peak_pss_all_processes_mb": round(multi["peak_pss_all_processes_mb"], 1),
        "rss_per_agent_kb": round(multi["rss_per_agent_kb"], 2),
        "cached": "embedding cache on within the run (default); no LLM cache (rules in process)",
        "checkpoints": (
            "the run's default: every 6 simulated hours and after the last tick"
            if checkpoint_every is None
            else "none"
            if checkpoint_every == 0
            else f"every {checkpoint_every} ticks and after the last tick"
        ),
        "runs": {"groups": multi, "one_group": single},
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "date": time.strftime("%Y-%m-%d"),
        },
    }
    if json_path is not None:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n")
    return result


def main() -> None:
    """Command line: the figures as JSON on stdout (and in --json)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--ticks", type=int, default=48)
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--only", action="store_true", help="run only the --groups configuration (no 1-group pass)"
    )
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=None,
        help="ticks between checkpoints (default: the run's default, every 6 simulated hours "
        "and after the last tick, as a simulation takes them; 0: none)",
    )
    args = parser.parse_args()
    if args.checkpoint_every is not None and args.checkpoint_every < 0:
        parser.error(f"--checkpoint-every must be >= 0, got {args.checkpoint_every}")
    if args.agents < 1 or args.ticks < 1 or not 1 <= args.groups <= args.agents:
        parser.error("--agents and --ticks must be >= 1 and 1 <= --groups <= --agents")
    result = run_benchmark(
        args.agents, args.ticks, args.groups, args.json, args.only, args.checkpoint_every
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
