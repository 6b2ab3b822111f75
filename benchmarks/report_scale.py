"""Report size and time at scale: a synthetic hurricane run of N agents (default 100,000).

Simulating 100,000 agents here takes far longer than rendering their report, so the results
are synthesised with the real writer's schemas from the real population (homes, workplaces,
shelters, social network): agents go to work by day, the trusting half evacuates after the
warning, everyone at landfall; one conversation per agent per tick-quarter. Prints JSON: the
page's size (must stay < ~20 MB), the time to write it, and what is sampled/aggregated.

    .venv/bin/python benchmarks/report_scale.py --agents 100000 --ticks 48
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from societas.agents.population import population_for
from societas.agents.runtime.results import SCHEMAS
from societas.agents.scenario import load_scenario
from societas.cluster.report import write_report

ROOT = Path(__file__).resolve().parents[1]


def _write(run: Path, table: str, cols: dict[str, object]) -> None:
    folder = run / "results" / table / "group-0000"
    folder.mkdir(parents=True, exist_ok=True)
    data = pa.table(cols, schema=SCHEMAS[table])
    pq.write_table(data, folder / "ticks-000000-999999.parquet", compression="zstd")


def synthesise(run: Path, agents: int, ticks: int) -> float:
    """Write config.json, run.json and the results tables; returns seconds spent."""
    t0 = time.perf_counter()
    cfg = load_scenario(ROOT / "configs" / "hurricane.yaml")
    cfg = cfg.model_copy(update={"interventions": [iv for iv in cfg.interventions
                                                   if iv.tick < ticks]})  # fmt: skip
    cfg = cfg.with_overrides(agents=agents, ticks=ticks)
    run.mkdir(parents=True, exist_ok=True)
    (run / "config.json").write_text(cfg.model_dump_json(indent=1))
    pop = population_for(cfg)
    rng = np.random.default_rng(0)
    homes = np.array([p.home for p in pop.profiles])
    works = np.array([p.work or p.home for p in pop.profiles])
    shelters = np.array([p.shelter for p in pop.profiles])
    trust = np.array([p.trust for p in pop.profiles])
    n = agents
    tick = np.repeat(np.arange(ticks), n)
    ids = np.tile(np.arange(n), ticks)
    hour = (cfg.start_hour + tick * cfg.tick_minutes / 60) % 24
    at_work = (hour >= 9) & (hour < 17)
    evac = ((tick >= 8) & (trust[ids] > 0.5)) | (tick >= 30)
    place = np.where(evac, shelters[ids], np.where(at_work, works[ids], homes[ids]))
    kind = np.array([s.split("-")[0] for s in place])
    category = np.where(evac, "evacuate", np.where(at_work, "work", "home"))
    f = rng.random(tick.size)
    _write(run, "agent_state", {
        "tick": tick, "agent_id": ids, "place": place, "place_kind": kind,
        "activity": category, "category": category, "current_need": np.full(tick.size, "none"),
        "currency": 500 + 100 * f, "income": 2500 + 0 * f, "consumption": 1700 + 0 * f,
        "work_hours": 8 + 0 * f, "worked_today": 0 * f, "transfers": 0 * f,
        "evacuating": evac, "emotion": np.where(evac, "fear", "calm"),
    })  # fmt: skip
    _write(run, "needs", {
        "tick": tick, "agent_id": ids, "hunger": f, "energy": 1 - f,
        "safety": np.where(evac, 1.0, f),
        "social": f, "current_need": np.full(tick.size, "none"),
    })  # fmt: skip
    m = n * ticks // 4
    dt = rng.integers(0, ticks, m)
    sp = rng.integers(0, n, m)
    li = (sp + rng.integers(1, 50, m)) % n
    _write(run, "dialogues", {
        "tick": dt, "speaker": sp, "listener": li, "place": homes[sp],
        "channel": np.full(m, "encounter"), "text": np.full(m, "Did you hear the warning?"),
        "facts": np.full(m, ""), "conversation_id": np.char.add(dt.astype(str), "-c"),
        "turn": np.zeros(m, dtype=np.int64),
    })  # fmt: skip
    _write(run, "llm", {
        "tick": np.arange(ticks), "group_id": np.zeros(ticks, dtype=np.int64),
        "requests": np.full(ticks, n), "prompt_tokens": np.full(ticks, 300 * n),
        "completion_tokens": np.full(ticks, 40 * n), "memories_added": np.full(ticks, n),
    })  # fmt: skip
    run_json = {"scenario": "hurricane", "agents": n, "groups": 1, "mode": "synthetic",
                "wall_s": 0.0, "llm_requests": n * ticks}  # fmt: skip
    (run / "run.json").write_text(json.dumps(run_json))
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--ticks", type=int, default=48)
    parser.add_argument("--keep", type=Path, default=None, help="Write the run here; keep it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="societas-report-scale-") as tmp:
        run = args.keep or Path(tmp) / "run"
        synth_s = synthesise(run, args.agents, args.ticks)
        t0 = time.perf_counter()
        html = write_report(run)
        report_s = time.perf_counter() - t0
        size = html.stat().st_size
    print(json.dumps({
        "benchmark": "report_scale",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "agents": args.agents, "ticks": args.ticks,
        "agent_state_rows": args.agents * args.ticks,
        "synthesise_s": round(synth_s, 1), "report_s": round(report_s, 1),
        "page_mb": round(size / 1e6, 2), "plotlyjs_mb": 4.82,
        "sampled": "network: 300-agent breadth-first sample; map: homes merged into a 20x20 "
                   "grid; conversations: occupation matrix; 8 agent pages",
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
