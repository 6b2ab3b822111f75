"""Engine throughput on local Ray: agent-steps/s of the `town` scenario with the rules
provider (a deterministic offline policy, not a language model) and the embedded Qdrant
Edge backend, with G groups and with 1 group in the same run, plus scaling efficiency.

    .venv/bin/python benchmarks/engine.py --agents 10000 --ticks 48 --groups 2 \
        --json benchmarks/results/engine.json

Throughput counts tick time only (setup, population generation and Ray start are reported
apart). Figures are measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

ROOT = Path(__file__).resolve().parent.parent


def _one(agents: int, ticks: int, groups: int, out: Path) -> dict[str, Any]:
    """One run on Ray; returns throughput, tick times and peak RSS of driver + groups."""
    from societas.agents.scenario import load_scenario
    from societas.cluster.ray_runtime import ClusterConfig, run_on_ray

    scenario = load_scenario(ROOT / "configs" / "town.yaml").with_overrides(
        agents=agents, ticks=ticks, groups=groups
    )
    rss: dict[int, int] = {}

    def on_tick(report: Any) -> None:
        for s in report.groups:
            rss[s.group_id] = max(rss.get(s.group_id, 0), s.rss_bytes)

    started = time.perf_counter()
    summary = run_on_ray(
        scenario,
        out,
        groups,
        on_tick=on_tick,
        cluster=ClusterConfig(metrics={"port": 0}, checkpoint_every=0),
    )
    wall = time.perf_counter() - started
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
        "llm_requests": summary.llm_requests,
        "peak_rss_mb_groups": sum(rss.values()) / 2**20,
    }


def run_benchmark(
    agents: int = 10_000, ticks: int = 48, groups: int = 2, json_path: Path | None = None
) -> dict[str, Any]:
    """G groups, then 1 group, on one local Ray instance; the JSON figures of issue 6."""
    import ray

    from societas.cluster.ray_runtime import ensure_ray

    ensure_ray(None, num_cpus=max(os.cpu_count() or 1, groups))
    with tempfile.TemporaryDirectory(prefix="societas-bench-") as tmp:
        multi = _one(agents, ticks, groups, Path(tmp) / f"g{groups}")
        single = _one(agents, ticks, 1, Path(tmp) / "g1") if groups > 1 else multi
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
        "agent_steps_per_s_1group": single["agent_steps_per_s"],
        "scaling_efficiency": multi["agent_steps_per_s"] / (groups * single["agent_steps_per_s"]),
        "tick_p50_s": multi["tick_p50_s"],
        "peak_rss_mb_total": multi["peak_rss_mb_groups"] + driver_peak,
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
    args = parser.parse_args()
    result = run_benchmark(args.agents, args.ticks, args.groups, args.json)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
