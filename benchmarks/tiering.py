"""Memory tiers over simulated days: RAM stays flat while memories move hot → warm → cold.

A agents write 2 memories each per tick, 48 ticks a day, for D days, with tier migration at
every tick end (hot: 24 h / 96 per agent; warm: 2 days; cold: Parquet). Baseline in the same
run: the same workload with tiering off (everything stays hot and warm), for comparison of
RSS per day. Each side runs in its own child process.

RSS is reported two ways: at the end of each simulated day (`rss_mb_by_day`), and as the
highest value seen during each day, tier passes included (`rss_peak_mb_by_day`: a thread
samples it every 50 ms), with the kernel's exact peak of the whole run
(`rss_process_peak_mb`). `rss_peak_over_day3` is the within-day peak over day 3's end.

    python benchmarks/tiering.py [--agents A] [--days D] [--no-baseline] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # read once, when pyarrow loads

from _common import emit, machine, peak_rss_mb, percentile, rss_mb
from _memory_workload import TOPICS, VOCAB, sentence

from societas.memory.tuning import tune_worker

TICKS_PER_DAY = 48
SEED = 7
CACHED = (
    "embedding cache at its default (100,000 texts; memory texts are distinct, so it answers "
    "only repeated queries of the latency probe); RSS sampled after each day's last tick "
    "and every 50 ms during the day (peaks of the tier passes included)"
)
SAMPLE_S = 0.05


class RssPeaks:
    """The highest RSS seen since the last `take`, sampled by a thread (a tier pass's
    transient buffers count: the machine must hold them)."""

    def __init__(self) -> None:
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.peak = max(self.peak, rss_mb())

    def take(self) -> float:
        """The peak since the last take (or the start), and start over from now."""
        now = rss_mb()
        peak, self.peak = max(self.peak, now), now
        return peak

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def query_for(rng: random.Random) -> str:
    """A two-word query over the workload's vocabulary."""
    return " ".join(rng.sample(VOCAB, 2))


async def run(agents: int, days: int, tiered: bool) -> dict:
    from societas.memory import AddRequest, GroupMemory, GroupMemoryConfig, SearchRequest

    tiers = (
        {
            "hot_window_hours": 24,
            "hot_cap_per_agent": 96,
            "warm_max_age_days": 2,
            "warm_cap_per_agent": None,
        }
        if tiered
        else {
            "hot_window_hours": 1e9,
            "hot_cap_per_agent": 10**9,
            "warm_max_age_days": None,
            "warm_cap_per_agent": None,
        }
    )
    rng = random.Random(SEED)
    out: dict = {
        "rss_mb_by_day": [],
        "rss_peak_mb_by_day": [],
        "migrate_s_by_day": [],
        "memories_by_tier_by_day": [],
    }
    peaks = RssPeaks()
    with tempfile.TemporaryDirectory(prefix="bench-tiers-") as tmp:
        group = GroupMemory(GroupMemoryConfig(tiers=tiers), root=Path(tmp))
        await group.add_agents({a: {} for a in range(agents)})
        total = 0
        for day in range(days):
            migrate_s = 0.0
            for tick in range(TICKS_PER_DAY):
                group.clock.set(day, tick * 1800.0)
                await group.add_many(
                    [
                        AddRequest(
                            agent_id=a,
                            topic=rng.choice(TOPICS),
                            description=sentence(rng),
                            importance=rng.random(),
                        )
                        for a in range(agents)
                        for _ in range(2)
                    ]
                )
                total += 2 * agents
                t0 = time.perf_counter()
                await group.end_tick()
                migrate_s += time.perf_counter() - t0
            out["rss_mb_by_day"].append(round(rss_mb(), 1))
            out["rss_peak_mb_by_day"].append(round(peaks.take(), 1))
            out["migrate_s_by_day"].append(round(migrate_s, 3))
            out["memories_by_tier_by_day"].append(await group.tier_counts())
            print(
                f"day {day}: rss {out['rss_mb_by_day'][-1]} MB "
                f"(peak {out['rss_peak_mb_by_day'][-1]}), "
                f"tiers {out['memories_by_tier_by_day'][-1]}",
                file=sys.stderr,
            )
        # The first search over every tier reads the cold tier's index (ids, times,
        # importances, terms) into RAM; later ones score from it and read only winners.
        rss_before, t0 = rss_mb(), time.perf_counter()
        await group.search_many([SearchRequest(agent_id=0, query=query_for(rng))])
        out["cold_index_build_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        out["cold_index_rss_mb"] = round(rss_mb() - rss_before, 1)
        read_before = group.cold.rows_read
        latencies: dict[str, list[float]] = {"hot": [], "hot_warm": [], "all": []}
        for name, tiers_searched in (
            ("hot", ("hot",)),
            ("hot_warm", ("hot", "warm")),
            ("all", ("hot", "warm", "cold")),
        ):
            for _ in range(200):
                request = SearchRequest(
                    agent_id=rng.randrange(agents), query=query_for(rng), tiers=tiers_searched
                )
                t0 = time.perf_counter()
                await group.search_many([request])
                latencies[name].append((time.perf_counter() - t0) * 1000)
        out["cold_rows_read_per_search"] = (group.cold.rows_read - read_before) / 200
        out["memories_total"] = total
        out["memories_by_tier"] = await group.tier_counts()
        for name, values in latencies.items():
            out[f"search_p50_ms_{name}"] = round(percentile(values, 50), 3)
        await group.close()
    peaks.stop()
    out["rss_process_peak_mb"] = round(peak_rss_mb(), 1)  # the kernel's, whole run
    # Child processes of this one (with `vector_store.compact_in_child`, the shard's
    # compactions): their peak is RAM the machine needs beside this process's for a moment.
    out["children_peak_rss_mb"] = round(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
    )
    return out


def child(agents: int, days: int, tiered: bool) -> dict:
    args = [
        sys.executable,
        __file__,
        "--part",
        "tiered" if tiered else "flat",
        "--agents",
        str(agents),
        "--days",
        str(days),
    ]
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--json", default=None)
    parser.add_argument("--part", choices=["tiered", "flat"], default=None)
    args = parser.parse_args()
    if args.agents < 1 or args.days < 4:
        parser.error("--agents must be >= 1 and --days >= 4 (RSS is compared with day 3)")
    if args.part:
        tune_worker()  # a group's process, as the Ray actor tunes it
        print(json.dumps(asyncio.run(run(args.agents, args.days, args.part == "tiered"))))
        return
    tiered = child(args.agents, args.days, True)
    rss, peaks = tiered["rss_mb_by_day"], tiered["rss_peak_mb_by_day"]
    result = {
        "agents": args.agents,
        "days": args.days,
        "memories_total": tiered["memories_total"],
        "rss_mb_by_day": rss,
        "memories_by_tier": tiered["memories_by_tier"],
        "migrate_s_by_day": tiered["migrate_s_by_day"],
        "search_p50_ms_hot": tiered["search_p50_ms_hot"],
        "search_p50_ms_hot_warm": tiered["search_p50_ms_hot_warm"],
        "search_p50_ms_all_tiers": tiered["search_p50_ms_all"],
        "cold_rows_read_per_search": tiered["cold_rows_read_per_search"],
        "cold_index_build_ms": tiered["cold_index_build_ms"],
        "cold_index_rss_mb": tiered["cold_index_rss_mb"],
        "rss_peak_mb_by_day": peaks,
        "rss_process_peak_mb": tiered["rss_process_peak_mb"],
        "rss_last_over_day3": round(rss[-1] / rss[3], 3),  # simulated days count from 0
        # Within-day peaks (tier passes included) over day 3's end; day ends alone apart.
        "rss_peak_over_day3": round(max(peaks[3:]) / rss[3], 3),
        "rss_peak_day": peaks.index(max(peaks[3:])),
        "rss_day_end_peak_over_day3": round(max(rss[3:]) / rss[3], 3),
        "children_peak_rss_mb": tiered["children_peak_rss_mb"],
        "cached": CACHED,
    }
    if not args.no_baseline:
        flat = child(args.agents, args.days, False)
        result["baseline_untiered_rss_mb_by_day"] = flat["rss_mb_by_day"]
        result["baseline_untiered_search_p50_ms_hot_warm"] = flat["search_p50_ms_hot_warm"]
        result["rss_last_day_vs_untiered"] = round(rss[-1] / flat["rss_mb_by_day"][-1], 3)
    result["machine"] = machine()
    emit(result, args.json)


if __name__ == "__main__":
    main()
