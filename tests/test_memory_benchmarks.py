"""The memory benchmarks run end to end at a tiny size: their timing hooks still find what
they wrap, and their JSON carries the figures the README and issue 15 quote. No timing is
asserted here (speed is measured in benchmarks/, never in tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _run(script: str, *args: str, out: Path) -> dict:
    subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args, "--json", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return json.loads(out.read_text())


def test_memory_ops_compares_the_same_agents_with_nothing_cached(tmp_path):
    run = _run("memory_ops.py", "--sizes", "6x6", "--repeats", "1", out=tmp_path / "m.json")
    figures = run["runs"]["6x6"]
    assert figures["agents"] == {"societas": 6, "naive": 6, "agentsociety": 6}
    assert figures["query_cache_hits"] == 0
    assert figures["wall_vs_naive"] > 0 and figures["wall_vs_naive_sequential"] > 0
    assert figures["wall_vs_naive_paired"] > 0 and figures["wall_vs_naive_sequential_paired"] > 0
    assert figures["societas_stored"] == 6 * 6
    assert figures["same_top3_as_naive"] > 0.8  # the same answers, ties aside
    assert "machine" in run and "cached" in run


def test_memory_breakdown_times_every_part_of_a_turn(tmp_path):
    run = _run("memory_breakdown.py", "--agents", "6", "--memories", "6", out=tmp_path / "b.json")
    for mode in ("gather", "sequential"):
        parts = run["modes"][mode]
        assert parts["turn"] > 0
        assert parts["rank"] > 0 and parts["hit_records"] > 0 and parts["embed_documents"] > 0
    assert run["modes"]["floor"]["turn"] > 0  # the API's fixed costs, nothing stored
