"""Shared fixtures of the validation tests: one small smallville run on the rules policy."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from societas.cluster.validation import validate


def report_browser() -> ModuleType:
    """tests/report/browser.py (headless Chromium over DevTools), loaded by path."""
    path = Path(__file__).resolve().parents[1] / "report" / "browser.py"
    spec = importlib.util.spec_from_file_location("validation_report_browser", path)
    assert spec and spec.loader
    if spec.name in sys.modules:
        return sys.modules[spec.name]
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def browser() -> ModuleType:
    """The report tests' Chromium helper."""
    return report_browser()


@pytest.fixture(scope="session")
def small_smallville(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A twelve-hour smallville run on two seeds (long enough for word of the party to pass
    from one resident to another before it begins): its folder and validation.json."""
    out = tmp_path_factory.mktemp("smallville")
    validate("smallville", out, provider="rules", seeds=[0, 1], hours=12)
    return out, json.loads((out / "validation.json").read_text(encoding="utf-8"))
