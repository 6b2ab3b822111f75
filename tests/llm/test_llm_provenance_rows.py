"""Provenance of thoughts, memory importance and reactions: each has results rows carrying
`answer_source` (a parrot server's copies never count as `first_try`, a rules run says
`rules`), run.json's per-task counts include their tasks, and the report card shows their
shares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from societas.agents.llm.accounting import SOURCE_PREFIX, split_counts
from societas.agents.llm.provenance import SOURCES
from societas.cluster.loop.in_process import run_in_process
from societas.cluster.loop.local import run_local_async
from societas.cluster.observe.metrics import MetricsConfig, RunMetrics
from societas.cluster.report.card import answer_sources
from societas.cluster.report.conversations import samples
from societas.cluster.report.data import RunData
from societas.cluster.report.tidy import SOURCE_TABLES

from .parrot import endpoint, parrot

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
WARNING = {"tick": 1, "kind": "event", "text": "A storm warning for the town tonight."}
POLICY = {"tick": 1, "kind": "policy", "policy": "ubi", "amount": 100.0, "select": {"all": True}}
TASKS = ("importance", "thought_update", "reaction")
NOT_MODEL = ("reflection", "ignored", "all_clear", "policy", "payment")  # no model's answer


def town(**over: Any) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(TOWN.read_text())
    data["interventions"] = [{**WARNING, "select": {"all": True}}, POLICY]
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
    metrics = RunMetrics(MetricsConfig(port=0))

    def ingest(report: Any) -> None:
        for stats in report.groups:
            metrics.ingest(stats)

    await run_local_async(town(ticks=3), tmp_path, embedder=bm25_embedder, on_tick=ingest)
    found = model_rows(tmp_path)
    for table, got in found.items():
        assert got, f"no {table} rows"
        assert {r["answer_source"] for r in got} == {"rules"}, table
    assert {r["agent_id"] for r in found["thoughts"]} == {0, 1, 2, 3}
    assert all(0 < r["importance"] <= 1 for r in found["importance"])
    events = rows(tmp_path, "events")
    assert all(r["answer_source"] in ("", *SOURCES) for r in events)
    plain = [r for r in events if r["kind"] in NOT_MODEL]
    assert plain and all(r["answer_source"] == "" for r in plain)  # not a model's answer
    tasks = json.loads((tmp_path / "run.json").read_text())["llm_tasks"]
    sources = split_counts(tasks, SOURCE_PREFIX)
    for task in TASKS:
        assert set(sources[task]) == {"rules"}, (task, sources)
        counted = metrics.value("llm_answers_total", group="0", task=task, source="rules")
        assert counted == sources[task]["rules"], (task, counted)
    reactions = [r for r in found["events"] if r["kind"] == "reaction"]
    assert sources["reaction"]["rules"] == len(reactions)
    assert sources["thought_update"]["rules"] == len(found["thoughts"])
    report = RunData(tmp_path)
    card = answer_sources(report)
    for task in TASKS:
        assert f"{task}: 100% rules" in card, card
    quotes = samples(report)  # the report page's quotes say their source
    assert quotes["thought"] and {q["source"] for q in quotes["thought"]} == {"rules"}
    assert quotes["decided"]
    for q in quotes["decided"]:
        assert q["source"] == ("" if q["how"] in NOT_MODEL else "rules"), q
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


async def test_attitude_rows_say_where_the_stance_in_force_came_from(
    tmp_path, bm25_embedder
) -> None:
    import yaml

    from societas.cluster.loop.run import RunInterrupted

    data = yaml.safe_load((TOWN.parent / "polarization.yaml").read_text())
    data.update(ticks=6)
    data["agents"] = {"count": 12}
    data["network"] = {**data["network"], "k": 4}
    whole, split = tmp_path / "whole", tmp_path / "split"
    await run_local_async(data, whole, embedder=bm25_embedder)
    got = rows(whole, "attitudes")
    assert {r["answer_source"] for r in got} == {"", "rules"}  # initial, then updated
    first: dict[int, int] = {}
    for r in sorted(got, key=lambda r: (r["agent_id"], r["tick"])):
        if r["answer_source"]:
            first.setdefault(r["agent_id"], r["tick"])
        else:  # an initial stance is never shown after an update
            assert r["agent_id"] not in first, r
    assert first
    asked: list[bool] = []

    def finished(report: Any) -> None:
        asked.extend([True] if report.tick == 2 else [])

    with pytest.raises(RunInterrupted):  # a checkpoint mid-run keeps each stance's source
        await run_local_async(
            data, split, embedder=bm25_embedder, stop=lambda: bool(asked), on_tick=finished
        )
    await run_local_async(data, split, embedder=bm25_embedder, resume=True)
    key = lambda r: (r["tick"], r["agent_id"], r["topic"])  # noqa: E731
    assert sorted(rows(split, "attitudes"), key=key) == sorted(got, key=key)


async def test_a_failed_stance_update_keeps_the_stance_and_its_source(
    tmp_path, bm25_embedder
) -> None:
    """A model whose every stance is off the scale falls back: the stance in force stays with
    the source of the update that set it (here the initial one, ""), and no "My stance on
    ... is now" memory tells of a re-evaluation that never happened."""
    import yaml

    from tests.chat_server import chat_server, user_text

    from .parrot import answer as parrot_answer

    def say(body: dict[str, Any]) -> str:
        if '"attitude"' in user_text(body):
            return json.dumps({"attitude": 42, "reason": "I changed my mind."})
        return parrot_answer(body, "example")

    data = yaml.safe_load((TOWN.parent / "polarization.yaml").read_text())
    data.update(ticks=6, agents={"count": 8})
    data["network"] = {**data["network"], "k": 4}
    async with chat_server(say) as (url, seen):
        data["llm"] = {"endpoints": [endpoint(url)], "fallback_stop": {"enabled": False}}
        await run_local_async(data, tmp_path, embedder=bm25_embedder)
    assert any('"attitude"' in user_text(body) for body in seen)  # stances were asked
    got = rows(tmp_path, "attitudes")
    assert {r["answer_source"] for r in got} == {""}
    initial = {(r["agent_id"], r["topic"]): r["value"] for r in got if r["tick"] == 0}
    assert all(r["value"] == initial[(r["agent_id"], r["topic"])] for r in got)
    remembered = [
        body for body in seen if "My stance on" in json.dumps(body["messages"])
    ]  # every prompt shows memories: none holds a stance note
    assert not remembered
