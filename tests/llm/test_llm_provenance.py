"""Provenance on every results row holding model text: a run against a parrot server (which
only copies the prompt's example or echoes the schema) writes no row as `first_try` and none
of the parrot's words; a rules run says `rules`; the run counts the sources per task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from societas.agents.llm.accounting import MEANING_PREFIX, SOURCE_PREFIX, split_counts
from societas.agents.llm.provenance import SOURCES
from societas.cluster.loop.in_process import run_in_process

from .parrot import endpoint, parrot

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
MODEL_TABLES = {  # table -> its model-text columns
    "plans": ("activity", "location"),
    "dialogues": ("text",),
    "reflections": ("text",),
    "surveys": ("answer_text",),
}
SURVEY = {
    "id": "morning",
    "day": 0,
    "hour": 7,
    "select": {"ids": [0, 1, 2]},
    "questions": [{"id": "feel", "kind": "open", "text": "How do you feel about the town?"}],
}


def town(**over: Any) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(TOWN.read_text())
    data["interventions"] = []
    data["agents"] = {**data["agents"], "count": 6}
    data["network"] = {**data["network"], "k": 2}
    data["social"] = {**data["social"], "chat_prob": 1.0, "message_prob": 0.5}
    data["surveys"] = [SURVEY]
    data.update(over)
    return data


def rows(run: Path, table: str) -> list[dict[str, Any]]:
    files = sorted((run / "results" / table).glob("*/*.parquet"))
    out: list[dict[str, Any]] = []
    for f in files:
        out += pq.read_table(f).to_pylist()
    return out


@pytest.mark.parametrize("mode", ["example", "schema"])
async def test_a_parrot_run_has_no_first_try_row_and_none_of_its_words(
    tmp_path, bm25_embedder, mode: str
) -> None:
    async with parrot(mode) as (url, served):  # type: ignore[arg-type]
        llm = {"endpoints": [endpoint(url)], "fallback_stop": {"enabled": False}}
        run = await run_in_process(town(ticks=4, llm=llm), tmp_path, embedder=bm25_embedder)
    said = set()
    for text in served:
        stack: list[Any] = [json.loads(text)]
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                stack += v.values()
            elif isinstance(v, list):
                stack += v
            elif isinstance(v, str) and len(v.split()) >= 2:
                said.add(v)
    assert said, "the parrot said something"
    seen = 0
    for table, columns in MODEL_TABLES.items():
        for row in rows(tmp_path, table):
            seen += 1
            assert row["answer_source"] in SOURCES, (table, row)
            assert row["answer_source"] != "first_try", (table, row)
            assert not any(row[c] in said for c in columns), (table, row)
    assert seen > 0
    assert {r["answer_source"] for r in rows(tmp_path, "plans")} == {"fallback"}
    tasks = run.result.llm_tasks  # what run.json's llm_tasks holds
    sources = split_counts(tasks, SOURCE_PREFIX)
    assert sources["daily_plan"] == {"fallback": 6}
    assert all("first_try" not in s for t, s in sources.items() if t != "importance"), sources
    assert split_counts(tasks, MEANING_PREFIX), "the meaning checks were counted"


async def test_a_rules_run_says_rules_on_every_row(tmp_path, bm25_embedder) -> None:
    run = await run_in_process(town(ticks=4), tmp_path, embedder=bm25_embedder)
    seen = 0
    for table in MODEL_TABLES:
        for row in rows(tmp_path, table):
            seen += 1
            assert row["answer_source"] == "rules", (table, row)
    assert seen > 0
    assert split_counts(run.result.llm_tasks, SOURCE_PREFIX)["daily_plan"] == {"rules": 6}


async def test_a_parrot_run_stops_loudly_past_the_fallback_limit(tmp_path, bm25_embedder) -> None:
    from societas.agents.llm.errors import LLMFallbackRateExceeded

    async with parrot("example") as (url, _):
        stop = {"max_rate": 0.2, "window": 50, "min_calls": 5}
        llm = {"endpoints": [endpoint(url)], "fallback_stop": stop}
        with pytest.raises(LLMFallbackRateExceeded) as ei:
            await run_in_process(town(ticks=6, llm=llm), tmp_path, embedder=bm25_embedder)
    message = str(ei.value)
    assert ei.value.task and f"task {ei.value.task!r}" in message
    assert "on endpoint parrot" in message and ei.value.sample in message
    assert "example" in ei.value.sample or "{" in ei.value.sample  # what the parrot said
    assert ei.value.checkpoint_tick is not None
