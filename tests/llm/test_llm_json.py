"""json(): malformed output is repaired, re-asked, then falls back — each step counted."""

from __future__ import annotations

import asyncio
import json

import pytest

from societas.agents.llm.errors import LLMSchemaError
from societas.agents.llm.gateway import parse_json_text
from societas.agents.llm.tasks import DailyPlan, ImportanceScore, Reaction

CTX = {"profile": {"workplace": "bakery", "occupation": "baker"}, "needs": {"social": 0.2}}


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_parse_json_text_repairs_fences_and_trailing_commas() -> None:
    assert parse_json_text('{"a": 1}') == ({"a": 1}, False)
    obj, repaired = parse_json_text('Sure:\n```json\n{"a": 1, "b": [1, 2,],\n```')
    assert repaired and obj == {"a": 1, "b": [1, 2]}


async def test_malformed_replies_are_repaired_and_counted(emulator, make_gateway) -> None:
    async with emulator(rate_malformed=1.0) as (_, url), make_gateway(url) as gw:
        plans = await asyncio.gather(
            *(
                gw.json(user(f"plan day {i}"), DailyPlan, task="daily_plan", context=CTX)
                for i in range(5)
            )
        )
    assert all(any("bakery" in it.location for it in p.items) for p in plans)
    assert gw.accounting.events["json.repaired"] == 5
    assert gw.accounting.events["http.requests"] == 5  # no re-ask needed


async def test_garbage_is_reasked_with_the_error_then_succeeds(
    emulator, make_gateway, emu_stats
) -> None:
    # seed chosen so that some first answers are garbage and their re-asks are not
    async with emulator(rate_garbage=0.5, seed=7) as (_, url), make_gateway(url) as gw:
        outs = await asyncio.gather(
            *(
                gw.json(
                    user(f"event {i}"),
                    Reaction,
                    task="reaction",
                    context={"event": f"a fire at house {i}", "name": "Ann"},
                    fallback=Reaction(react=False),
                )
                for i in range(20)
            )
        )
        stats = await emu_stats(url)
    ev = gw.accounting.events
    garbage = stats["injected"]["garbage"]
    assert garbage > 0
    assert ev["json.invalid"] == garbage
    assert ev["json.reask"] == garbage - ev.get("json.fallback", 0)
    assert sum(o.react for o in outs) == 20 - ev.get("json.fallback", 0)


async def test_persistent_garbage_returns_the_declared_fallback(emulator, make_gateway) -> None:
    async with emulator(rate_garbage=1.0) as (_, url), make_gateway(url, json_reasks=2) as gw:
        out = await gw.json(
            user("rate"),
            ImportanceScore,
            task="importance",
            fallback=lambda: ImportanceScore(score=5),
        )
    assert out.score == 5
    assert gw.accounting.events["json.reask"] == 2
    assert gw.accounting.events["json.fallback"] == 1
    assert gw.accounting.events["http.requests"] == 3


async def test_no_fallback_raises_a_counted_schema_error(emulator, make_gateway) -> None:
    async with emulator(rate_garbage=1.0) as (_, url), make_gateway(url, json_reasks=1) as gw:
        with pytest.raises(LLMSchemaError, match=r"'daily_plan'.*DailyPlan after 2 asks"):
            await gw.json(user("plan"), DailyPlan, task="daily_plan", context=CTX)
    assert gw.accounting.events["json.failed"] == 1


async def test_reask_names_the_error_and_carries_no_schema_text(
    emulator, make_gateway, tmp_path
) -> None:
    """Without task hints the emulator echoes; the recorded re-ask names where the reply
    failed and holds none of the schema's descriptions (a model echoes them as answers)."""
    cache = {"mode": "read-write", "dir": str(tmp_path)}
    async with (
        emulator() as (_, url),
        make_gateway(url, endpoint={"send_task_hints": False}, json_reasks=1, cache=cache) as gw,
    ):
        out = await gw.json(
            user("plan"),
            DailyPlan,
            fallback=DailyPlan(items=[{"start_hour": 8, "activity": "rest", "location": "home"}]),
        )
    assert out.items[0].activity == "rest"
    assert gw.accounting.events["json.reask"] == 1 and gw.accounting.events["json.fallback"] == 1
    requests = [json.loads(line)["request"] for line in read_segments(tmp_path)]
    reask = max(requests, key=lambda r: len(r["messages"]))["messages"]
    assert [m["role"] for m in reask] == ["user", "assistant", "user"]
    assert "(items missing)" in reask[2]["content"]
    assert "broad strokes" not in reask[2]["content"] and "{" not in reask[2]["content"]


def read_segments(directory) -> list[str]:
    files = sorted(directory.glob("segment-*.jsonl"))
    return [line for p in files for line in p.read_text().splitlines()]
