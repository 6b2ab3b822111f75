"""A rules run interviewed by the real local model (SmolLM2-135M on llama-cpp-python's
server, loopback) with `--endpoint`: the model answers, and the answer is kept in the run's
interviews.jsonl with its source."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from societas.agents.llm.provenance import SOURCES
from societas.agents.scenario import load_scenario
from societas.cluster.cli import app
from societas.cluster.experiments.arms import run_checkpointed

pytestmark = pytest.mark.llm
TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"


def test_a_rules_run_is_interviewed_by_the_local_model(server, tmp_path) -> None:
    data = yaml.safe_load(TOWN.read_text())
    data.update(ticks=4, interventions=[], cluster={"checkpoint_every": 2})
    data["agents"] = {**data["agents"], "count": 4}
    data["network"] = {**data["network"], "k": 2}
    run = tmp_path / "run"
    asyncio.run(run_checkpointed(load_scenario(data), run, groups=1))
    ep = server.endpoint()
    args = ["interview", str(run), "--agent", "1", "--endpoint", ep["base_url"]]
    res = CliRunner().invoke(app, [*args, "--model", ep["model"], "--json", "How was your day?"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["model"] == ep["model"] and out["llm"] == "openai"
    assert out["answer_source"] in SOURCES and out["answer_source"] != "rules"
    assert out["answer"].strip()
    kept = json.loads((run / "interviews.jsonl").read_text().splitlines()[-1])
    assert kept == out
