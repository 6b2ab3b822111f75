"""Models where they matter: `rules` is a route target like an endpoint, a bad route is a
clear config error, and any run can be interviewed by another LLM (at a checkpoint of choice),
the answer kept with its source; bad interview input is one line and exit 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from societas.agents.llm.config import load_config
from societas.agents.llm.errors import LLMConfigError
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import ThoughtUpdate
from societas.agents.scenario import load_scenario
from societas.cluster.cli import app
from societas.cluster.experiments.arms import run_checkpointed
from societas.cluster.loop.in_process import run_in_process
from societas.testing.emulator import EmulatorConfig, serve

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
EMU = {"name": "large", "model": "emulated", "send_task_hints": True}


def town(**over: Any) -> dict[str, Any]:
    data = yaml.safe_load(TOWN.read_text())
    data["interventions"] = []
    data["agents"] = {**data["agents"], "count": 6}
    data["network"] = {**data["network"], "k": 2}
    data.update(over)
    return data


def test_rules_is_a_route_target_and_bad_routes_are_clear_errors() -> None:
    ep = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "name": "large"}
    cfg = load_config({"endpoints": [ep], "routes": {"survey": "large", "default": "rules"}})
    assert cfg.to_rules("daily_plan") and cfg.to_rules(None) and not cfg.to_rules("survey")
    assert load_config({"provider": "rules"}).to_rules("survey")
    bad = {
        "routes.gossip: no such task": {"gossip": "large"},
        "routes.survey: no endpoint named 'huge'": {"survey": "huge"},
        "'rules' cannot share a route": {"survey": ["large", "rules"]},
    }
    for message, routes in bad.items():
        with pytest.raises(LLMConfigError, match=message):
            load_config({"endpoints": [ep], "routes": routes})


async def test_a_routed_gateway_asks_the_model_only_where_routed() -> None:
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (emu, url):
        routes = {"survey": "large", "default": "rules"}
        gw = LLMGateway({"endpoints": [{**EMU, "base_url": url}], "routes": routes})
        async with gw:
            ctx = {"name": "Ann", "thought": "", "needs": {}, "recent": []}
            out = await gw.json(
                [{"role": "user", "content": "x"}],
                ThoughtUpdate,
                task="thought_update",
                context=ctx,
            )
    assert out.answer_source == "rules" and emu.stats["chat_requests"] == 0


async def test_a_run_keeps_routine_tasks_on_rules_and_surveys_on_the_model(
    tmp_path, bm25_embedder
) -> None:
    survey = {
        "id": "s",
        "day": 0,
        "hour": 7,
        "select": {"ids": [0, 1]},
        "questions": [{"id": "q", "kind": "open", "text": "How are you?"}],
    }
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (emu, url):
        llm = {
            "endpoints": [{**EMU, "base_url": url}],
            "routes": {"survey": "large", "default": "rules"},
        }
        await run_in_process(
            town(ticks=3, surveys=[survey], llm=llm), tmp_path, embedder=bm25_embedder
        )
    assert set(emu.stats["tasks"]) == {"survey"}
    rows = [
        r
        for f in sorted((tmp_path / "results").glob("*/*/*.parquet"))
        for r in pq.read_table(f).to_pylist()
        if "answer_source" in r
    ]
    by_table = {r.get("answer_text") is not None for r in rows}
    assert by_table == {True, False}
    assert {r["answer_source"] for r in rows if r.get("answer_text") is not None} == {"first_try"}
    assert {r["answer_source"] for r in rows if r.get("answer_text") is None} == {"rules"}


@pytest.fixture(scope="module")
def rules_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rules") / "run"
    cfg = load_scenario(town(ticks=6, cluster={"checkpoint_every": 3}))
    asyncio.run(run_checkpointed(cfg, out, groups=1))
    return out


def test_a_rules_run_is_interviewed_by_a_model_at_a_checkpoint_and_kept(
    rules_run, tmp_path
) -> None:
    async def go() -> tuple[Any, Any]:
        async with serve(EmulatorConfig(base_latency_s=0.001)) as (emu, url):
            llm = tmp_path / "llm.yaml"
            llm.write_text(yaml.safe_dump({"llm": {"endpoints": [{**EMU, "base_url": url}]}}))
            args = ["interview", str(rules_run), "--agent", "2", "--at", "0:8", "--llm", str(llm)]
            res = await asyncio.to_thread(
                CliRunner().invoke, app, [*args, "--json", "How are you?"]
            )
            return res, dict(emu.stats["tasks"])

    res, tasks = asyncio.run(go())
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["answer_source"] == "first_try" and out["model"] == "emulated"
    assert out["checkpoint_tick"] == 3 and tasks == {"interview": 1}
    kept = json.loads((rules_run / "interviews.jsonl").read_text().splitlines()[-1])
    assert kept == out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--at", "3:12"], "--at: day 3 12:00 is past the run's last checkpoint"),
        (["--at", "noon"], "--at: expected DAY:HOUR"),
        (
            ["--endpoint", "http://127.0.0.1:9/v1", "--model", "m"],
            "--endpoint: http://127.0.0.1:9/v1 is not reachable",
        ),
        (["--endpoint", "http://127.0.0.1:9/v1"], "--endpoint and --model go together"),
    ],
)
def test_bad_interview_input_is_one_line_and_exit_2(rules_run, args, message) -> None:
    res = CliRunner().invoke(app, ["interview", str(rules_run), "--agent", "1", *args, "Hi?"])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.output


def test_an_interview_llm_file_whose_server_is_down_names_llm(rules_run, tmp_path) -> None:
    llm = tmp_path / "llm.yaml"
    llm.write_text(
        yaml.safe_dump({"llm": {"endpoints": [{**EMU, "base_url": "http://127.0.0.1:9/v1"}]}})
    )
    res = CliRunner().invoke(
        app, ["interview", str(rules_run), "--agent", "1", "--llm", str(llm), "Hi?"]
    )
    assert res.exit_code == 2, res.output
    assert res.output.startswith("error: --llm: http://127.0.0.1:9/v1 is not reachable"), res.output


def test_an_interview_model_the_server_does_not_serve_is_named_before_any_chat(rules_run) -> None:
    async def go() -> tuple[Any, int]:
        async with serve(EmulatorConfig(base_latency_s=0.001)) as (emu, url):
            args = ["--agent", "1", "--endpoint", url, "--model", "gpt-9", "Hi?"]
            res = await asyncio.to_thread(
                CliRunner().invoke, app, ["interview", str(rules_run), *args]
            )
            return res, emu.stats["chat_requests"]

    res, chats = asyncio.run(go())
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "llm.endpoints.0.model = gpt-9: not served by" in lines[0], lines
    assert "emulated" in lines[0] and chats == 0  # told by the list: no request to the model


def test_a_route_to_an_unknown_task_in_an_interview_llm_file_exits_2(rules_run, tmp_path) -> None:
    llm = tmp_path / "llm.yaml"
    ep = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "name": "large"}
    llm.write_text(yaml.safe_dump({"llm": {"endpoints": [ep], "routes": {"gossip": "large"}}}))
    res = CliRunner().invoke(
        app, ["interview", str(rules_run), "--agent", "1", "--llm", str(llm), "Hi?"]
    )
    assert res.exit_code == 2 and "routes.gossip: no such task" in res.output, res.output


def test_an_interview_when_the_runs_own_model_is_down_is_one_line_and_exit_2(
    rules_run, tmp_path
) -> None:
    """A run made on a model whose server is stopped since: the run's endpoint is named."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(rules_run, run)
    config = json.loads((run / "config.json").read_text())
    ep = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "name": "large"}
    config["llm"] = {"provider": "openai", "endpoints": [ep],
                     "routes": {"interview": "large", "default": "rules"}}  # fmt: skip
    (run / "config.json").write_text(json.dumps(config))
    res = CliRunner().invoke(app, ["interview", str(run), "--agent", "1", "Hi?"])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    assert "llm.endpoints.0.base_url: http://127.0.0.1:9/v1, the run's model for interviews, " \
        "is not reachable" in lines[0] and "--endpoint URL --model NAME" in lines[0]  # fmt: skip
    assert (
        not (run / "interviews.jsonl").exists()
        or "Hi?" not in (run / "interviews.jsonl").read_text()
    )
