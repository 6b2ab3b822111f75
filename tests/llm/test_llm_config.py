"""Bad configuration and bad call-site input give clear errors naming field and value."""

from __future__ import annotations

import pytest

from societas.agents.llm.config import LLMConfig, load_config
from societas.agents.llm.errors import LLMConfigError, LLMInputError, UnknownTaskError
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import DailyPlan
from societas.testing.emulator import EmulatorConfig


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_every_bad_field_is_listed_with_path_and_value() -> None:
    with pytest.raises(LLMConfigError) as ei:
        load_config(
            {
                "endpoints": [
                    {"base_url": "ftp://x", "model": "m", "weight": -1, "max_concurrency": 0}
                ],
                "timeout_s": 0,
                "retry": {"max_attempts": 0},
            }
        )
    msg = str(ei.value)
    for needle in (
        "llm.endpoints.0.weight",
        "(got -1)",
        "llm.endpoints.0.max_concurrency",
        "llm.timeout_s",
        "llm.retry.max_attempts",
    ):
        assert needle in msg, msg


def test_openai_provider_needs_endpoints_and_cache_needs_dir() -> None:
    with pytest.raises(LLMConfigError, match="at least one entry in endpoints"):
        load_config({"provider": "openai"})
    with pytest.raises(LLMConfigError, match=r"cache.dir is required"):
        load_config({"provider": "rules", "cache": {"mode": "replay"}})
    with pytest.raises(LLMConfigError, match=r"llm.provider"):
        load_config({"provider": "gpt"})


def test_url_scheme_is_checked() -> None:
    with pytest.raises(LLMConfigError, match="base_url must start with http"):
        load_config({"endpoints": [{"base_url": "localhost:8000", "model": "m"}]})


def test_inline_secret_is_refused_without_echoing_it() -> None:
    secret = "sk-inline-SECRET-abcdef0123456789"
    with pytest.raises(LLMConfigError) as ei:
        load_config(
            {"endpoints": [{"base_url": "http://127.0.0.1:1/v1", "model": "m", "api_key": secret}]}
        )
    assert "api_key" in str(ei.value) and secret not in str(ei.value)
    with pytest.raises(LLMConfigError) as ei2:
        load_config(
            {
                "endpoints": [
                    {"base_url": "http://127.0.0.1:1/v1", "model": "m", "api_key_env": secret}
                ]
            }
        )
    assert "api_key_env" in str(ei2.value) and secret not in str(ei2.value)


def test_missing_env_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOCIETAS_NO_SUCH_KEY", raising=False)
    cfg = {
        "endpoints": [
            {
                "base_url": "http://127.0.0.1:1/v1",
                "model": "m",
                "api_key_env": "SOCIETAS_NO_SUCH_KEY",
            }
        ]
    }
    with pytest.raises(LLMConfigError, match="SOCIETAS_NO_SUCH_KEY"):
        LLMGateway(cfg)


def test_split_divides_limits_across_groups() -> None:
    cfg = load_config(
        {
            "endpoints": [
                {
                    "base_url": "http://127.0.0.1:1/v1",
                    "model": "m",
                    "rpm": 1200,
                    "tpm": 90000,
                    "max_concurrency": 64,
                }
            ]
        }
    )
    part = cfg.split(4).endpoints[0]
    assert (part.rpm, part.tpm, part.max_concurrency) == (300, 22500, 16)
    with pytest.raises(LLMConfigError, match="parts must be >= 1, got 0"):
        cfg.split(0)


def test_rules_is_documented_as_not_a_language_model() -> None:
    desc = LLMConfig.model_fields["provider"].description or ""
    assert "NOT a language model" in desc


def test_emulator_config_errors() -> None:
    with pytest.raises(LLMConfigError, match="fault rates must sum to at most 1"):
        EmulatorConfig.checked(rate_429=0.7, rate_500=0.5)
    with pytest.raises(LLMConfigError, match=r"emulator.capacity.*\(got 0\)"):
        EmulatorConfig.checked(capacity=0)
    with pytest.raises(LLMConfigError, match="not loopback"):
        EmulatorConfig.checked(host="0.0.0.0")


@pytest.mark.parametrize(
    ("messages", "needle"),
    [
        ([{"role": "bot", "content": "hi"}], "messages[0].role"),
        ([{"role": "user", "content": ""}], "messages[0].content"),
        ([{"role": "user"}], "messages[0].content"),
        ([{"role": "user", "content": "a"}, "hello"], "messages[1]"),
        ([], "at least one message"),
        ("hello", "expected a list"),
    ],
)
async def test_bad_messages_name_the_field(messages: object, needle: str) -> None:
    gw = LLMGateway({"provider": "rules"})
    with pytest.raises(LLMInputError) as ei:
        await gw.complete(messages, task="importance")  # type: ignore[arg-type]
    assert needle in str(ei.value)


async def test_bad_call_arguments() -> None:
    gw = LLMGateway({"provider": "rules"})
    with pytest.raises(LLMInputError, match=r"temperature: must be within 0..2, got 5"):
        await gw.complete(user("x"), task="importance", temperature=5)
    with pytest.raises(LLMInputError, match=r"max_tokens: .* got 0"):
        await gw.complete(user("x"), task="importance", max_tokens=0)
    with pytest.raises(LLMInputError, match="schema: must be a pydantic model class"):
        await gw.json(user("x"), dict, task="daily_plan")  # type: ignore[type-var]
    with pytest.raises(LLMInputError, match="context: must be a dict"):
        await gw.json(user("x"), DailyPlan, task="daily_plan", context=[1])  # type: ignore[arg-type]


async def test_unknown_task_on_rules_lists_known_tasks() -> None:
    gw = LLMGateway({"provider": "rules"})
    with pytest.raises(UnknownTaskError, match=r"no rule for 'horoscope'.*daily_plan"):
        await gw.complete(user("x"), task="horoscope")
    with pytest.raises(UnknownTaskError, match="needs a call-site task name"):
        await gw.complete(user("x"))
