"""The recall benchmark at a tiny size: its JSON carries the headline figures, every score is
a share, and a question whose evidence is the agent's only memory is recalled. No timing is
asserted (speed is measured in benchmarks/, never in tests)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from _recall_questions import Clock, questions_for, recall_at  # noqa: E402
from recall import RANKINGS, SCALES, memories_of  # noqa: E402

HEADLINE = (
    "recall_at_5",
    "recall_at_5_relevance_only",
    "recall_at_5_recency_only",
    "recall_at_5_importance_only",
    "recall_at_5_old",
)


def _shares(figures: dict) -> list[float]:
    """Every recall or hit figure in a ranking's block (None: no question of that group)."""
    values = [figures["recall_at_5"], figures["hit_at_5"], *figures["by_kind"].values()]
    values += [figures["recall_at_5_old"], figures["recall_at_5_old_hot_warm"]]
    return [v for v in values if v is not None]


def test_tiny_run_reports_every_ranking_as_shares(tmp_path):
    out = tmp_path / "recall.json"
    subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "recall.py"),
            *("--agents", "8", "--days", "1", "--sample", "3", "--per-kind", "1"),
            *("--variants", "default/bm25", "--workers", "1", "--json", str(out)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    run = json.loads(out.read_text())
    for key in HEADLINE:
        assert key in run
        assert run[key] is None or 0.0 <= run[key] <= 1.0
    assert run["recall_at_5"] is not None
    assert set(run["relevance_scales"]) == set(SCALES)
    assert "machine" in run and "cached" in run and "baselines" in run
    society = run["variants"]["default/bm25"]["societies"]["1d"]
    assert society["questions"] > 0
    assert set(RANKINGS) | set(SCALES) == set(society["rankings"])
    for figures in society["rankings"].values():
        assert all(0.0 <= v <= 1.0 for v in _shares(figures))


async def test_the_only_memory_is_recalled(tmp_path, bm25_embedder):
    from societas.memory import GroupMemory

    group = GroupMemory(root=tmp_path, embedder=bm25_embedder)
    await group.add_agents({0: {"name": "Ana Ruiz"}, 1: {"name": "Ben Cole"}})
    group.clock.set(0, 9 * 3600.0)  # day 0, 09:00: tick 6 of a day starting at 06:00
    stream = group.agent(0).stream
    await stream.add("dialogue", "Ben Cole told me: The bridge is closed.", 0.5, "cafe-0")
    memories = await memories_of(group, 0, days=0)
    assert len(memories) == 1
    tables = {
        "knowledge": [{"tick": 6, "agent_id": 0, "fact": "bridge", "source": 1}],
        "agent_state": [],
        "dialogues": [],
    }
    clock = Clock(tick_seconds=1800.0, start_hour=6)
    questions, unmatched = questions_for(
        0,
        memories,
        tables,
        {0: "Ana Ruiz", 1: "Ben Cole"},
        {"bridge": "The bridge is closed."},
        clock,
        random.Random(0),
        per_kind=1,
    )
    assert unmatched == 0
    assert {q.kind for q in questions} == {"told", "heard"}
    for q in questions:
        assert q.evidence == {memories[0].id}
        hits = await stream.search(q.text, top_k=5)
        assert recall_at([h.id for h in hits], q.evidence, 5) == 1.0
    await group.close()
