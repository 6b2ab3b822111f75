"""validation.html loads in headless Chromium with no console error and shows both sides."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_page_loads_without_console_error(
    small_smallville: tuple[Path, dict[str, Any]], tmp_path: Path, browser: ModuleType
) -> None:
    out, _ = small_smallville
    page = out / "validation.html"
    seen = browser.check_page(page, tmp_path / "shot.png", settle_s=0.5)
    assert seen.console_errors == []
    assert seen.external_requests == []
    assert seen.title == "Validation: smallville"


def test_page_says_the_rules_policy_is_not_a_model(
    small_smallville: tuple[Path, dict[str, Any]],
) -> None:
    out, data = small_smallville
    text = (out / "validation.html").read_text(encoding="utf-8")
    assert 'class="caveat"' in text and "not a language model" in text
    for m in data["metrics"]:
        assert m["name"] in text
    assert "seed 0" in text and "seed 1" in text
