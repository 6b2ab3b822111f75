"""Provenance of thoughts, memory importance and reactions: each has results rows carrying
`answer_source` (a parrot server's copies never count as `first_try`, a rules run says
`rules`), run.json's per-task counts include their tasks, and the report card shows their
shares."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow.parquet as pq

from societas.agents.llm.accounting import SOURCE_PREFIX, split_counts
from societas.agents.llm.provenance import SOURCES
from societas.cluster.loop.in_process import run_in_process
from societas.cluster.report.card import answer_sources
from societas.cluster.report.tidy import SOURCE_TABLES

from .parrot import endpoint, parrot

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
WARNING = {"tick": 1, "kind": "event", "text": "A storm warning for the town tonight."}
TASKS = ("importance", "thought_update", "reaction")


def town(**over: Any) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(TOWN.read_text())
    data["interventions"] = [{**WARNING, "select": {"all": True}}]
    data["agents"] = {**data["agents"], "count": 4}
    data["network"] = {**data["network"], "k": 2}
    data["cognition"] = {**(data.get("cognition") or {}), "thought_hour": 6}  # the first tick
    data.update(over)
    return data


def rows(run: Path, table: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in sorted((run / "results" / table).glob("*/*.parquet")):
        out += pq.read_table(f).to_pylist()
    return out


def model_rows(run: Path) -> dict[str, list[dict[str, Any]]]:
    """Rows holding a model's text or decision: thoughts, importance, reaction events."""
    events = [r for r in rows(run, "events") if r["kind"] in ("reaction", "replan")]
    return {
        "thoughts": rows(run, "thoughts"),
        "importance": rows(run, "importance"),
        "events": events,
    }


async def test_a_rules_run_writes_thoughts_importance_and_reactions_as_rules(
    tmp_path, bm25_embedder
) -> None:
    run = await run_in_process(town(ticks=3), tmp_path, embedder=bm25_embedder)
    found = model_rows(tmp_path)
    for table, got in found.items():
        assert got, f"no {table} rows"
        assert {r["answer_source"] for r in got} == {"rules"}, table
    assert {r["agent_id"] for r in found["thoughts"]} == {0, 1, 2, 3}
    assert all(0 < r["importance"] <= 1 for r in found["importance"])
    others = [r for r in rows(tmp_path, "events") if r["kind"] not in ("reaction", "replan")]
    assert all(r["answer_source"] == "" for r in others)  # not a model's answer
    sources = split_counts(run.result.llm_tasks, SOURCE_PREFIX)  # run.json's llm_tasks
    for task in TASKS:
        assert set(sources[task]) == {"rules"}, (task, sources)
    assert sources["reaction"]["rules"] == len(found["events"]) - sum(
        r["kind"] == "replan" for r in found["events"]
    )

    card = answer_sources(SimpleNamespace(run={"llm_tasks": run.result.llm_tasks}))  # type: ignore[arg-type]
    for task in TASKS:
        assert f"{task}: 100% rules" in card, card
    assert {"thoughts", "importance", "events"} <= set(SOURCE_TABLES)


async def test_a_parrot_run_writes_no_thought_or_reaction_as_first_try(
    tmp_path, bm25_embedder
) -> None:
    async with parrot("example") as (url, _served):
        llm = {"endpoints": [endpoint(url)], "fallback_stop": {"enabled": False}}
        run = await run_in_process(town(ticks=2, llm=llm), tmp_path, embedder=bm25_embedder)
    found = model_rows(tmp_path)
    assert found["thoughts"] and found["importance"] and found["events"]
    for table, got in found.items():
        for row in got:
            assert row["answer_source"] in SOURCES, (table, row)
    for table in ("thoughts", "events"):
        assert all(r["answer_source"] != "first_try" for r in found[table]), table
    sources = split_counts(run.result.llm_tasks, SOURCE_PREFIX)
    for task in TASKS:
        assert sum(sources[task].values()) > 0, (task, sources)
    rated = {r["answer_source"] for r in found["importance"]}
    assert rated <= set(sources["importance"]), (rated, sources["importance"])
