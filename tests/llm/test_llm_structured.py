"""Structured outputs in each endpoint's dialect, per-task routing, and the fallback-rate
guard, all through the real `openai` client against emulators on loopback."""

from __future__ import annotations

import pytest

from societas.agents.llm.config import load_config
from societas.agents.llm.errors import LLMConfigError, LLMFallbackRateExceeded
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.structured import grammar_friendly, schema_of
from societas.agents.llm.tasks import DialogueTurn, ImportanceScore, ThoughtUpdate

MSG = [{"role": "user", "content": "Say something."}]


@pytest.mark.parametrize(
    ("dialect", "fmt_type", "schema_in_format", "schema_in_prompt"),
    [
        ("json_schema", "json_schema", True, False),
        ("json_object_schema", "json_object", True, False),
        ("json_object", "json_object", False, True),
        ("prompt", None, False, True),
    ],
)
async def test_each_dialect_sends_the_call_sites_schema(
    emulator, make_gateway, emu_stats, dialect, fmt_type, schema_in_format, schema_in_prompt
) -> None:
    async with emulator() as (_emu, url):
        gw = make_gateway(url, endpoint={"structured_output": dialect})
        async with gw:
            out = await gw.json(MSG, DialogueTurn, task="dialogue_turn", context=_turn_ctx())
        stats = await emu_stats(url)
    assert isinstance(out, DialogueTurn) and out.utterance
    sent = stats["last_request"]
    fmt = sent.get("response_format")
    if fmt_type is None:
        assert fmt is None
    else:
        assert fmt["type"] == fmt_type
    schema = DialogueTurn.model_json_schema()
    if dialect == "json_object_schema":  # what llama.cpp's grammar enforces fully
        schema = grammar_friendly(schema)
    carried = (fmt or {}).get("schema") or (fmt or {}).get("json_schema", {}).get("schema")
    assert (carried == schema) is schema_in_format
    assert ('"utterance"' in sent["last_user"] and "JSON schema" in sent["last_user"]) is (
        schema_in_prompt
    )
    task = gw.accounting.tasks["dialogue_turn"]
    assert (task.json_calls, task.valid_first_try, task.fallbacks) == (1, 1, 0)


def test_json_mode_is_replaced_with_a_clear_error() -> None:
    with pytest.raises(LLMConfigError, match="json_mode was replaced by structured_output"):
        load_config(
            {"endpoints": [{"base_url": "http://127.0.0.1:1/v1", "model": "m", "json_mode": True}]}
        )
    with pytest.raises(LLMConfigError, match=r"structured_output"):
        load_config(
            {
                "endpoints": [
                    {"base_url": "http://127.0.0.1:1/v1", "model": "m", "structured_output": "xml"}
                ]
            }
        )


def test_routes_must_name_existing_endpoints() -> None:
    eps = [{"base_url": "http://127.0.0.1:1/v1", "model": "m", "name": "small"}]
    with pytest.raises(LLMConfigError, match=r"routes.dialogue_turn: no endpoint named 'large'"):
        load_config({"endpoints": eps, "routes": {"dialogue_turn": "large"}})


async def test_routing_sends_each_task_to_its_endpoint(emulator, emu_stats) -> None:
    async with emulator() as (_a, small), emulator() as (_b, large):
        hints = {"send_task_hints": True}
        gw = LLMGateway(
            {
                "endpoints": [
                    {"base_url": small, "model": "tiny", "name": "small", **hints},
                    {"base_url": large, "model": "big", "name": "large", **hints},
                ],
                "routes": {"importance": "small", "default": "large"},
                "json_reasks": 0,
            }
        )
        async with gw:
            for _ in range(4):
                await gw.json(MSG, ImportanceScore, task="importance", fallback=None)
                await gw.json(MSG, DialogueTurn, task="dialogue_turn", context=_turn_ctx())
            await gw.json(MSG, ImportanceScore, task="reflection_questions_unlisted", fallback=None)
        s_small, s_large = await emu_stats(small), await emu_stats(large)
    assert s_small["tasks"] == {"importance": 4}
    assert s_large["tasks"] == {"dialogue_turn": 4, "reflection_questions_unlisted": 1}
    models = gw.accounting.models
    assert models["tiny"].requests == 4 and models["big"].requests == 5


async def test_garbage_answers_trip_the_fallback_rate_guard(
    emulator, make_gateway, emu_stats
) -> None:
    async with emulator(rate_garbage=1.0) as (_emu, url):
        gw = make_gateway(
            url,
            endpoint={"name": "bad-server", "send_task_hints": False},
            json_reasks=0,
            fallback_stop={"max_rate": 0.05, "window": 50, "min_calls": 5},
        )
        async with gw:
            for i in range(4):
                fb = DialogueTurn(utterance="Hello!", end=True)
                assert await gw.json(MSG, DialogueTurn, task="dialogue_turn", fallback=fb) == fb
                assert gw.stop is None, f"judged after {i + 1} < min_calls calls"
            await gw.json(MSG, DialogueTurn, task="dialogue_turn", fallback=fb)
    stop = gw.stop
    assert isinstance(stop, LLMFallbackRateExceeded)
    assert (stop.task, stop.endpoint) == ("dialogue_turn", "bad-server")
    assert "can't help" in stop.sample and "can't help" in str(stop)
    assert "100%" in str(stop) and "dialogue_turn" in str(stop)
    assert gw.accounting.tasks["dialogue_turn"].fallbacks == 5
    with pytest.raises(LLMFallbackRateExceeded):
        gw.raise_if_stopped()


async def test_guard_off_counts_but_never_stops(emulator, make_gateway) -> None:
    async with emulator(rate_garbage=1.0) as (_emu, url):
        gw = make_gateway(url, json_reasks=0, fallback_stop={"enabled": False, "min_calls": 1})
        async with gw:
            for _ in range(3):
                await gw.json(MSG, ImportanceScore, task="importance", fallback=None)
    assert gw.stop is None and gw.accounting.tasks["importance"].fallbacks == 3


def _turn_ctx() -> dict:
    return {
        "speaker": "Ana",
        "listener": "Bo",
        "topic": None,
        "memories": [],
        "history": [],
        "turn": 0,
        "max_turns": 4,
    }


def test_grammar_friendly_schema_bounds_what_llama_cpp_ignores() -> None:
    """llama.cpp drops minimum/maximum: ranges become enums, strings get a length cap; the
    call site's own schema (and its validation) stays as it is."""
    score = grammar_friendly(schema_of(ImportanceScore))["properties"]["score"]
    assert score["enum"] == list(range(1, 11)) and "minimum" not in score
    thought = grammar_friendly(schema_of(ThoughtUpdate))["properties"]
    assert thought["intensity"]["enum"][0] == 0 and thought["intensity"]["enum"][-1] == 1
    assert len(thought["intensity"]["enum"]) == 21
    assert thought["thought"]["maxLength"] == 120 and thought["thought"]["minLength"] == 1
    assert schema_of(ImportanceScore)["properties"]["score"]["maximum"] == 10  # untouched
    for value in thought["intensity"]["enum"]:
        ThoughtUpdate(thought="I feel calm", emotion="calm", intensity=value)
