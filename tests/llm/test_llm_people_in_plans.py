"""Plans, reactions and reflections are checked for people who do not exist: a scripted model
server on loopback names a stranger in its first answer to every plan and reflection; the
run re-asks each one (counted as `unknown_person`), and no plan or reflection row names the
stranger."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from societas.agents.llm.accounting import MEANING_PREFIX, SOURCE_PREFIX, split_counts
from societas.cluster.loop.in_process import run_in_process
from tests.chat_server import chat_server, schema_of

from .parrot import endpoint

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
STRANGER = "Zed Quill"
CHECKED = ("daily_plan", "hourly_plan", "reflection_questions", "reflection_insights")


def reply(schema: dict[str, Any], asked_again: bool) -> dict[str, Any]:
    """A sensible answer for the schema; the first ask of a plan or reflection names the
    stranger, a re-ask does not."""
    props = schema.get("properties") or {}
    who = "" if asked_again else f" with {STRANGER}"
    if "items" in props:
        return {
            "items": [
                {"start_hour": 7, "activity": f"have breakfast{who}", "location": "home"},
                {"start_hour": 9, "activity": "read in the park", "location": "park"},
                {"start_hour": 22, "activity": "sleep", "location": "home"},
            ]
        }
    if "steps" in props:
        return {
            "steps": [
                {"minute": 0, "duration_min": 30, "action": f"tidy the kitchen{who}"},
                {"minute": 30, "duration_min": 30, "action": "water the plants"},
            ]
        }
    if "questions" in props:
        about = f"What does {STRANGER} want from me?" if who else "What matters most to me?"
        return {"questions": [about]}
    if "insights" in props:
        text = f"{STRANGER} is my closest friend." if who else "Quiet mornings calm me down."
        return {"insights": [{"text": text, "evidence": [1]}]}
    if "results" in props:
        n = props["results"].get("minItems", 1)
        return {"results": [{"score": 4 + i % 3} for i in range(n)]}
    if "thought" in props:
        return {"thought": "The morning feels calm.", "emotion": "joy", "intensity": 0.4}
    if "react" in props:
        return {"react": False, "reaction": "", "new_activity": None, "location": None}
    return {}


@asynccontextmanager
async def scripted() -> AsyncIterator[str]:
    """A model server on 127.0.0.1 answering by `reply`; yields its base URL."""

    def answer(body: dict[str, Any]) -> str:
        again = any(m["role"] == "assistant" for m in body["messages"])
        return json.dumps(reply(schema_of(body), again))

    async with chat_server(answer, model="parrot") as (url, _):
        yield url


def town(url: str) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(TOWN.read_text())
    data.update(ticks=6, interventions=[])
    data["agents"] = {**data["agents"], "count": 3}
    data["network"] = {**data["network"], "k": 2}
    data["social"] = {**data["social"], "chat_prob": 0.0, "message_prob": 0.0}
    data["cognition"] = {**(data.get("cognition") or {}), "reflection_threshold": 0.5}
    data["llm"] = {"endpoints": [endpoint(url)], "fallback_stop": {"enabled": False}}
    return data


def rows(run: Path, table: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in sorted((run / "results" / table).glob("*/*.parquet")):
        out += pq.read_table(f).to_pylist()
    return out


async def test_plans_and_reflections_naming_a_stranger_are_re_asked(
    tmp_path, bm25_embedder
) -> None:
    async with scripted() as url:
        run = await run_in_process(town(url), tmp_path, embedder=bm25_embedder)
    failed = split_counts(run.result.llm_tasks, MEANING_PREFIX)
    for task in CHECKED:
        assert failed.get(task, {}).get("unknown_person", 0) > 0, (task, failed)
    sources = split_counts(run.result.llm_tasks, SOURCE_PREFIX)
    for task in CHECKED:
        assert sources[task].get("re_asked", 0) > 0, (task, sources)
    plans, reflections = rows(tmp_path, "plans"), rows(tmp_path, "reflections")
    assert plans and reflections
    assert {r["answer_source"] for r in plans} == {"re_asked"}
    assert {r["answer_source"] for r in reflections} == {"re_asked"}
    for row in [*plans, *reflections]:
        assert "Zed" not in json.dumps(row), row
