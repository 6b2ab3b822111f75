"""An API key never appears in logs, errors, reprs or files."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from societas.agents.llm.errors import LLMRequestError
from societas.agents.llm.tasks import ThoughtUpdate

KEY = "sk-societas-FAKE-key-0123456789abcdefXYZ"
WRONG = "sk-societas-WRONG-key-9876543210zyxwvu"


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def grep_dir(directory: Path, needle: str) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file() and needle in p.read_text()]


async def test_key_never_leaks(
    emulator,
    make_gateway,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("SOCIETAS_TEST_KEY", KEY)
    monkeypatch.setenv("SOCIETAS_TEST_WRONG", WRONG)
    cache = {"mode": "read-write", "dir": str(tmp_path / "cache")}
    async with emulator(
        api_key_env="SOCIETAS_TEST_KEY", rate_429=0.3, retry_after_s=0.01, seed=2
    ) as (_, url):
        async with make_gateway(
            url, endpoint={"api_key_env": "SOCIETAS_TEST_KEY"}, cache=cache
        ) as gw:
            out = await gw.json(
                user("think"),
                ThoughtUpdate,
                task="thought_update",
                context={"recent": ["a storm is coming"]},
            )
            for i in range(10):
                await gw.complete(user(f"q{i}"))
            texts = [repr(gw), repr(gw.pool.endpoints[0]), str(gw.stats())]  # type: ignore[union-attr]
        # the server echoes the wrong key in its 401 body; our error must not
        async with make_gateway(url, endpoint={"api_key_env": "SOCIETAS_TEST_WRONG"}) as bad:
            with pytest.raises(LLMRequestError) as ei:
                await bad.complete(user("x"))
    assert out.emotion == "fear"
    assert gw.accounting.events["retry.429"] > 0  # retries were logged
    err = f"{ei.value} {ei.value!r} {ei.value.args}"
    assert "401" in err and "Incorrect API key provided" in err
    for secret in (KEY, WRONG):
        assert secret not in err
        assert secret not in caplog.text
        assert not any(secret in t for t in texts)
        assert grep_dir(tmp_path, secret) == []
    assert list((tmp_path / "cache").glob("segment-*.jsonl"))  # the cache was written


def test_redact_masks_registered_and_key_shaped_values() -> None:
    from societas.agents.llm.errors import redact, register_secret

    register_secret("plain-secret-value-42")
    text = redact("a plain-secret-value-42 b sk-abcdefghijkl c Bearer xyz123456789")
    assert "plain-secret-value-42" not in text and "sk-abcdefghijkl" not in text
    assert "xyz123456789" not in text and text.count("***") == 3
