"""Batch prompting: many items per call, results in order, wrong counts re-asked or fall back."""

from __future__ import annotations

from societas.agents.llm.batching import batch_json, batch_messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import ImportanceScore

ITEMS = [
    f"my house burned down in a fire {i}" if i % 3 == 0 else f"ate breakfast {i}" for i in range(45)
]


async def test_45_items_take_3_calls_and_keep_order(emulator, make_gateway, emu_stats) -> None:
    async with emulator() as (_, url), make_gateway(url, batch_size=20) as gw:
        scores = await batch_json(
            gw,
            ITEMS,
            ImportanceScore,
            task="importance",
            instruction="Rate how poignant each memory is, 1..10.",
        )
        stats = await emu_stats(url)
    assert stats["chat_requests"] == 3
    assert len(scores) == 45
    fire = [s.score for i, s in enumerate(scores) if i % 3 == 0]
    meal = [s.score for i, s in enumerate(scores) if i % 3 != 0]
    assert min(fire) > max(meal)  # order preserved: the poignant ones are where they were


async def test_wrong_count_falls_back_per_item(emulator, make_gateway) -> None:
    # without hints the emulator echoes: no "results" list, so re-ask then fallback
    async with (
        emulator() as (_, url),
        make_gateway(url, endpoint={"send_task_hints": False}, json_reasks=1) as gw,
    ):
        scores = await batch_json(
            gw,
            ITEMS[:5],
            ImportanceScore,
            task="importance",
            instruction="Rate.",
            fallback_item=lambda text: ImportanceScore(score=3),
        )
    assert [s.score for s in scores] == [3] * 5
    assert gw.accounting.events["json.fallback"] == 1


async def test_rules_batches_match_http_batches(emulator, make_gateway) -> None:
    rules = LLMGateway({"provider": "rules"})
    offline = await batch_json(
        rules, ITEMS, ImportanceScore, task="importance", instruction="Rate."
    )
    async with emulator() as (_, url), make_gateway(url) as gw:
        online = await batch_json(
            gw, ITEMS, ImportanceScore, task="importance", instruction="Rate."
        )
    assert offline == online  # the emulator answers with the same rules policy
    assert await batch_json(rules, [], ImportanceScore, task="importance", instruction="x") == []


def test_prompt_lists_items_and_count() -> None:
    msgs = batch_messages(["a", "b  c"], ImportanceScore, "Rate these.", "You are Ann.")
    assert msgs[0] == {"role": "system", "content": "You are Ann."}
    assert "1. a\n2. b c" in msgs[1]["content"] and "exactly 2 objects" in msgs[1]["content"]
