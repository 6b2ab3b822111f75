"""Runs stop loudly for their LLM: a server answering invalid JSON stops the run with an
error naming task, endpoint and the bad answer, after a checkpoint; the token budget stops a
run and resuming it reaches the same results as an uninterrupted run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from societas.agents.llm.errors import LLMBudgetExhausted, LLMFallbackRateExceeded
from societas.cluster import checkpoint as ckpt
from societas.cluster.loop.in_process import run_in_process
from tests.cluster.synthetic_groups import results_digest

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"


def town(**over: Any) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(TOWN.read_text())
    data["interventions"] = []  # a fact at tick 4 would outlast these short runs
    data["agents"] = {**data["agents"], "count": 6}
    data["network"] = {**data["network"], "k": 2}
    data.update(over)
    return data


async def test_invalid_json_stops_the_run_after_a_checkpoint(
    tmp_path, emulator, bm25_embedder
) -> None:
    async with emulator(rate_garbage=1.0) as (_emu, url):
        llm = {
            "endpoints": [{"base_url": url, "model": "emulated", "name": "scripted-server"}],
            "json_reasks": 0,
            "timeout_s": 5,
            "fallback_stop": {"max_rate": 0.05, "window": 200, "min_calls": 3},
        }
        with pytest.raises(LLMFallbackRateExceeded) as ei:
            await run_in_process(town(ticks=6, llm=llm), tmp_path, embedder=bm25_embedder)
    stop = ei.value
    message = str(stop)
    assert stop.endpoint == "scripted-server" and "scripted-server" in message
    assert stop.task and repr(stop.task) in message
    assert "I'm sorry, but I can't help with that" in stop.sample
    assert stop.sample in message
    assert stop.checkpoint_tick is not None and stop.checkpoint_tick < 6
    assert ckpt.last_complete(tmp_path) == stop.checkpoint_tick


async def test_budget_stops_and_resume_gives_the_uninterrupted_results(
    tmp_path, bm25_embedder
) -> None:
    cfg = town(ticks=6)
    whole = await run_in_process(cfg, tmp_path / "whole", embedder=bm25_embedder)
    tokens = int(whole.result.totals["llm_tokens"])
    assert tokens > 0
    split = tmp_path / "split"
    with pytest.raises(LLMBudgetExhausted) as ei:
        await run_in_process(cfg, split, embedder=bm25_embedder, budget_tokens=tokens // 2)
    stopped_at = ei.value.checkpoint_tick
    assert stopped_at is not None and 0 < stopped_at < 6
    assert "societas resume" in str(ei.value)
    with pytest.raises(LLMBudgetExhausted):  # the same small budget stops again
        await run_in_process(cfg, split, embedder=bm25_embedder, resume=True, budget_tokens=1)
    resumed = await run_in_process(
        cfg, split, embedder=bm25_embedder, resume=True, budget_tokens=tokens * 10
    )
    assert resumed.result.start_tick >= stopped_at
    assert resumed.result.digest == whole.result.digest
    assert results_digest(split / "results") == results_digest(tmp_path / "whole" / "results")
    assert resumed.result.totals["llm_tokens"] == whole.result.totals["llm_tokens"]
