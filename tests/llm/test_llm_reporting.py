"""Fallbacks and per-task LLM figures reach the progress line, run.json and Prometheus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from societas.agents.runtime.protocol import GroupStats
from societas.cluster.observe.metrics import MetricsConfig, RunMetrics

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"


def test_fallbacks_by_task_are_a_prometheus_counter() -> None:
    metrics = RunMetrics(MetricsConfig(port=0))

    def stats(tick: int, fallbacks: int, failed: int = 0) -> GroupStats:
        tasks = {"dialogue_turn": {"requests": 9, "fallbacks": fallbacks, "failed": failed}}
        return GroupStats(group_id=0, tick=tick, llm_tasks=tasks)

    metrics.ingest(stats(0, 2))
    metrics.ingest(stats(1, 0))  # per-tick deltas: nothing new
    metrics.ingest(stats(2, 3, failed=1))
    assert metrics.value("llm_fallbacks_total", group="0", task="dialogue_turn") == 6
    assert metrics.totals["llm_fallbacks_total"] == 6


def test_answer_sources_and_meaning_failures_are_prometheus_counters() -> None:
    metrics = RunMetrics(MetricsConfig(port=0))
    tasks = {
        "daily_plan": {"source.first_try": 2, "source.fallback": 1, "meaning.copied_example": 3},
        "importance": {"source.rules": 5, "meaning.counting": 0},
    }
    metrics.ingest(GroupStats(group_id=1, tick=0, llm_tasks=tasks))
    metrics.ingest(GroupStats(group_id=1, tick=1, llm_tasks={"daily_plan": {"source.fallback": 2}}))
    answers = "llm_answers_total"
    assert metrics.value(answers, group="1", task="daily_plan", source="first_try") == 2
    assert metrics.value(answers, group="1", task="daily_plan", source="fallback") == 3
    assert metrics.value(answers, group="1", task="importance", source="rules") == 5
    kind = {"group": "1", "task": "daily_plan", "kind": "copied_example"}
    assert metrics.value("llm_meaning_check_failures_total", **kind) == 3
    assert metrics.totals[answers] == 10 and metrics.totals["llm_meaning_check_failures_total"] == 3


async def test_run_json_and_progress_carry_llm_tasks_and_fallbacks(
    tmp_path, emulator, bm25_embedder
) -> None:
    import yaml

    from societas.cluster.loop.local import run_local_async

    data: dict[str, Any] = yaml.safe_load(TOWN.read_text())
    data.update(ticks=2, interventions=[])
    data["agents"] = {**data["agents"], "count": 4}
    data["network"] = {**data["network"], "k": 2}
    seen: list[Any] = []
    async with emulator(rate_garbage=1.0) as (_emu, url):
        data["llm"] = {
            "endpoints": [{"base_url": url, "model": "emulated"}],
            "json_reasks": 0,
            "fallback_stop": {"enabled": False},
        }
        await run_local_async(data, tmp_path, embedder=bm25_embedder, on_progress=seen.append)
    run = json.loads((tmp_path / "run.json").read_text())
    tasks = run["llm_tasks"]
    assert tasks and all(t["fallbacks"] == t["json_calls"] for t in tasks.values()), tasks
    total = sum(t["fallbacks"] for t in tasks.values())
    assert total > 0 and run["llm_fallbacks"] == total
    assert seen[-1].fallbacks == total


def test_the_run_card_shows_answer_sources_per_task() -> None:
    from types import SimpleNamespace

    from societas.cluster.report.card import answer_sources

    tasks = {
        "daily_plan": {"requests": 12, "source.fallback": 5, "source.first_try": 1},
        "importance": {"source.rules": 4},
        "survey": {"requests": 3},
    }
    shown = answer_sources(SimpleNamespace(run={"llm_tasks": tasks}))  # type: ignore[arg-type]
    assert shown == "daily_plan: 83% fallback, 17% first_try (of 6); importance: 100% rules (of 4)"
    assert answer_sources(SimpleNamespace(run={})) == "not recorded"  # type: ignore[arg-type]
