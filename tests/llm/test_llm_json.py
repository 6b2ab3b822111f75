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
    assert out.answer_source == "fallback"
    assert out.fallback_reason is not None and out.fallback_reason.startswith("not the asked JSON")
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


async def test_a_reply_cut_off_at_max_tokens_is_no_answer(tmp_path) -> None:
    """A reply the server stopped at max_tokens whose JSON json-repair had to close is a text
    cut mid-sentence: re-asked shorter, then the fallback, counted as meaning.cut_off; the
    same cut with the model's own stop is kept as repaired, a whole JSON at the limit as a
    first try; a replay from the cache decides as the run did, with no request."""
    from societas.agents.llm.gateway import LLMGateway
    from societas.agents.llm.meaning import CORRECTIONS
    from societas.agents.llm.tasks import ThoughtUpdate

    from ..chat_server import chat_server

    cut = '{"intensity": 0.6, "emotion": "fear", "thought": "The river is rising and the bakery'
    whole = '{"thought": "The river is rising.", "emotion": "fear", "intensity": 0.6}'
    replies = {"cut": (cut, "length"), "whole": (whole, "length"), "own stop": (cut, "stop")}

    def ask(gw: LLMGateway, case: str):
        fallback = ThoughtUpdate(thought="(none)", emotion="calm", intensity=0.0)
        messages = [{"role": "user", "content": case}]
        return gw.json(messages, ThoughtUpdate, task="thought_update", fallback=fallback)

    cache = {"mode": "read-write", "dir": str(tmp_path / "cache")}

    def answer(body: dict) -> tuple[str, str]:  # by the case the first message names
        return replies[body["messages"][0]["content"].split("\n")[0]]

    async with chat_server(answer) as (url, seen):
        config = {"endpoints": [{"base_url": url, "model": "m"}], "cache": cache}
        async with LLMGateway(config | {"fallback_stop": {"enabled": False}}) as gw:
            cut_off = await ask(gw, "cut")
            asked = len(seen)
            kept = await ask(gw, "whole")
            repaired = await ask(gw, "own stop")
        counts = gw.accounting.snapshot()["tasks"]["thought_update"]
    assert cut_off.answer_source == "fallback" and cut_off.thought == "(none)"
    assert asked == 2 and CORRECTIONS["cut_off"] in seen[1]["messages"][-1]["content"]
    assert counts["meaning.cut_off"] == 2 and counts["source.fallback"] == 1
    assert kept.answer_source == "first_try" and kept.intensity == 0.6
    assert repaired.answer_source == "repaired" and "bakery" in repaired.thought
    replay = {"endpoints": [{"base_url": "http://127.0.0.1:9/v1", "model": "m"}]}
    replay |= {"cache": {"mode": "replay", "dir": cache["dir"]}}
    async with LLMGateway(replay | {"fallback_stop": {"enabled": False}}) as gw:
        again = await ask(gw, "cut")
    assert again.answer_source == "fallback"
    assert gw.accounting.snapshot()["tasks"]["thought_update"]["meaning.cut_off"] == 2
