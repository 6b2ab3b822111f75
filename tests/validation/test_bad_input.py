"""Bad input to `validate`: one clear line naming the field, exit code 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from societas.cluster.validation.inputs import ValidationInputError, parse_seeds


def _validate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "societas.cluster.cli", "validate", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=120, check=False)


def _one_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_unknown_suite(tmp_path: Path) -> None:
    _one_line(_validate("atlantis", "--out", str(tmp_path / "o"), cwd=tmp_path), "atlantis")


def test_zero_seeds(tmp_path: Path) -> None:
    done = _validate("smallville", "--seeds", "0", "--out", str(tmp_path / "o"), cwd=tmp_path)
    _one_line(done, "--seeds", "'0'")


def test_provider_config_that_does_not_load(tmp_path: Path) -> None:
    bad = tmp_path / "provider.yaml"
    bad.write_text("llm:\n  provider: gpt-by-wishful-thinking\n", encoding="utf-8")
    out = str(tmp_path / "o")
    done = _validate("smallville", "--provider", str(bad), "--out", out, cwd=tmp_path)
    _one_line(done, "--provider", "llm.provider")


def test_missing_provider_file(tmp_path: Path) -> None:
    out = str(tmp_path / "o")
    done = _validate("smallville", "--provider", "nope.yaml", "--out", out, cwd=tmp_path)
    _one_line(done, "--provider", "nope.yaml")


@pytest.mark.parametrize(
    ("text", "seeds"), [("3", [0, 1, 2]), ("0,1,2", [0, 1, 2]), ("5,7", [5, 7]), ("1", [0])]
)
def test_seeds_as_count_or_list(text: str, seeds: list[int]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["0", "-1", "a", "1,1", "", ","])
def test_bad_seeds_name_the_option(text: str) -> None:
    with pytest.raises(ValidationInputError, match="--seeds"):
        parse_seeds(text)


def test_too_many_agents_for_smallville(tmp_path: Path) -> None:
    done = _validate("smallville", "--agents", "30", "--out", str(tmp_path / "o"), cwd=tmp_path)
    _one_line(done, "--agents", "25")


@pytest.mark.parametrize(
    "routes",
    ["", "  routes: {interview: rules, default: large}\n"],  # every endpoint probed, not one
)
def test_provider_endpoint_that_does_not_answer(tmp_path: Path, routes: str) -> None:
    provider = tmp_path / "provider.yaml"
    provider.write_text(
        "llm:\n  provider: openai\n  endpoints:\n"
        "    - {base_url: 'http://127.0.0.1:9/v1', model: m, name: large}\n" + routes,
        encoding="utf-8",
    )
    out = str(tmp_path / "o")
    done = _validate("smallville", "--provider", str(provider), "--out", out, cwd=tmp_path)
    _one_line(done, "--provider", "not reachable")
