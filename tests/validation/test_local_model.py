"""A short smallville suite on the real local model (SmolLM2-135M, loopback): validation.json
and validation.html are written, with the model named and the interview check measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from societas.cluster.validation.cli import main
from societas.testing.local_server import INSTALL_HINT, LocalModelServer, server_available

pytestmark = [pytest.mark.llm, pytest.mark.slow]


@pytest.fixture(scope="module")
def server():
    """The real local model server for this module."""
    assert server_available(), INSTALL_HINT
    with LocalModelServer(n_ctx=4096, threads=2) as srv:
        yield srv


def test_smallville_on_the_local_model(server, tmp_path: Path) -> None:
    provider = tmp_path / "provider.yaml"
    llm = {
        "provider": "openai",
        "endpoints": [server.endpoint()],
        "timeout_s": 120,
        "max_tokens": 128,
        "fallback_stop": {"enabled": False},
    }
    provider.write_text(yaml.safe_dump({"llm": llm}), encoding="utf-8")
    out = tmp_path / "out"
    args = ["validate", "smallville", "--provider", str(provider), "--seeds", "1"]
    assert main([*args, "--agents", "3", "--hours", "1", "--out", str(out)]) == 0
    data = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    assert not data["rules_policy"] and data["caveat"] == ""
    assert data["model"] == server.endpoint()["model"]
    by_name = {m["name"]: m for m in data["metrics"]}
    halluc = by_name["hallucination_share"]
    assert halluc["n_seeds"] <= 1 and "automatic check" in halluc["note"]
    if halluc["ours_mean"] is not None:
        assert 0.0 <= halluc["ours_mean"] <= 1.0
    page = (out / "validation.html").read_text(encoding="utf-8")
    assert 'class="caveat"' not in page
