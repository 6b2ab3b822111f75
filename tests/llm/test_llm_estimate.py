"""`societas estimate`: calls, tokens and cost per task before a run, from calibrations on a
sample; prices come from the config; bad input is one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from societas.cluster.cli import app

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"


def _config(tmp_path: Path, **llm: object) -> Path:
    data = yaml.safe_load(TOWN.read_text())
    data["interventions"] = []
    if llm:
        data["llm"] = llm
    path = tmp_path / "town.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_estimate_scales_a_sample_to_the_run(tmp_path, emulator) -> None:
    cfg = _config(tmp_path)
    runner = CliRunner()
    res = runner.invoke(
        app, ["estimate", str(cfg), "--agents", "40", "--ticks", "6", "--sample", "20", "--json"]
    )
    assert res.exit_code == 0, res.output
    est = json.loads(res.output)
    assert est["agents"] == 40 and est["ticks"] == 6
    assert est["calibration"]["count_sample_agents"] == 20
    assert est["calls"] > 0 and est["prompt_tokens"] > est["calls"]
    assert est["wall_s"] > 0  # the rules run's engine time, scaled
    assert set(est["tasks"]) >= {"daily_plan"}
    assert abs(sum(t["calls"] for t in est["tasks"].values()) - est["calls"]) < 1e-6
    longer = json.loads(
        runner.invoke(
            app,
            ["estimate", str(cfg), "--agents", "80", "--ticks", "6", "--sample", "20", "--json"],
        ).output
    )
    assert longer["calls"] == 2 * est["calls"]  # same sample, twice the agents


async def test_estimate_prices_the_model_calibration(tmp_path, emulator, bm25_embedder) -> None:
    from societas.cluster.experiments.estimate import estimate

    async with emulator() as (_emu, url):
        cfg = yaml.safe_load(_config(tmp_path).read_text())
        cfg["agents"]["count"] = 20
        cfg["ticks"] = 4
        cfg["llm"] = {
            "endpoints": [{"base_url": url, "model": "emulated", "send_task_hints": True}],
            "prices": {"emulated": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
        }
        est = await estimate(cfg, sample=10, hours=1, embedder=bm25_embedder)
    assert est.calibration["token_ticks"] == 2 and est.calibration["token_provider"] == "openai"
    assert est.cost_usd > 0
    want = (est.prompt_tokens * 1.0 + est.completion_tokens * 2.0) / 1e6
    assert abs(est.cost_usd - want) < 1e-9
    assert all(t.model == "emulated" for t in est.tasks.values())


def test_estimate_bad_config_is_one_clear_error(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("ticks: -3\n")
    res = CliRunner().invoke(app, ["estimate", str(bad)])
    assert res.exit_code == 2 and "ticks" in res.output and "Traceback" not in res.output


async def test_estimate_routes_rules_and_plans_wall_time(tmp_path, emulator, bm25_embedder) -> None:
    """Tasks routed to `rules` cost nothing and take no model time; wall_s grows with the
    calls' measured latency over the endpoints' concurrency; a budget below it warns."""
    from societas.cluster.experiments.estimate import estimate

    async with emulator(base_latency_s=0.05) as (_emu, url):
        cfg = yaml.safe_load(_config(tmp_path).read_text())
        cfg["agents"]["count"] = 20
        cfg["ticks"] = 4
        ep = {"base_url": url, "model": "emulated", "send_task_hints": True, "name": "large"}
        price = {"emulated": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}
        routes = {"daily_plan": "large", "default": "rules"}
        cfg["llm"] = {"endpoints": [ep], "prices": price, "routes": routes, "budget": 10}
        est = await estimate(cfg, sample=10, hours=1, embedder=bm25_embedder)
        one = {**ep, "max_concurrency": 1}
        cfg["llm"] = {**cfg["llm"], "endpoints": [one]}
        narrow = await estimate(cfg, sample=10, hours=1, embedder=bm25_embedder)
    assert est.tasks["daily_plan"].model == "emulated" and est.tasks["daily_plan"].cost_usd > 0
    ruled = [t for name, t in est.tasks.items() if name != "daily_plan"]
    assert ruled and all(t.model.startswith("rules") and t.cost_usd == 0 for t in ruled)
    assert est.calibration["seconds_per_model_call"] >= 0.05
    assert est.wall_s > 0 and narrow.wall_s > est.wall_s  # one call in flight: slower
    assert est.warnings and "llm.budget 10 tokens is below the estimate" in est.warnings[0]


def test_estimate_with_the_endpoint_down_is_one_line(tmp_path) -> None:
    """An endpoint that refuses connections: one line naming its setting, exit 2, no
    calibration started (so no traceback from one)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    cfg = _config(tmp_path, endpoints=[{"base_url": f"http://127.0.0.1:{port}/v1", "model": "m"}])
    res = CliRunner().invoke(app, ["estimate", str(cfg)])
    assert res.exit_code == 2, res.output
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert res.output.startswith(f"error: llm.endpoints.0.base_url = http://127.0.0.1:{port}/v1")
    assert "connection refused" in res.output


def test_estimate_says_how_it_scaled_and_a_short_wall_time(tmp_path) -> None:
    """On the rules policy the wall time is the engine's: seconds, not "0.0 min"; the output
    says how the sample stands for the run and what it does not count."""
    from societas.cluster.experiments.estimate import wall_text

    res = CliRunner().invoke(app, ["estimate", str(_config(tmp_path)), "--agents", "20"])
    assert res.exit_code == 0, res.output
    wall = next(line for line in res.output.splitlines() if line.startswith("expected wall"))
    assert wall in ("expected wall time: under a second",) or wall.endswith(" s"), wall
    assert "sample: calls counted on all 20 agents over all 48 ticks" in res.output
    assert "not counted: Ray start-up" in res.output
    assert [wall_text(s) for s in (0.2, 12.4, 600, 7200)] == [
        "under a second",
        "12 s",
        "10.0 min",
        "2.0 h",
    ]


async def test_estimate_counts_the_reasks_its_calibration_sees(tmp_path, emulator, bm25_embedder):
    """A model whose answers often fail their checks: each is re-asked once, then falls back.
    The estimate scales in the re-ask rate the model calibration measured, so its calls match
    the run's (first asks alone would be a quarter short); a fallback rate above the run's
    fallback stop is a warning."""
    from societas.cluster.experiments.estimate import estimate
    from societas.cluster.loop.in_process import run_in_process

    async with emulator(rate_garbage=0.4, base_latency_s=0.001) as (_emu, url):
        cfg = yaml.safe_load(_config(tmp_path).read_text())
        cfg["agents"]["count"], cfg["ticks"] = 20, 8
        ep = {"base_url": url, "model": "emulated", "send_task_hints": True}
        cfg["llm"] = {"endpoints": [ep], "fallback_stop": {"max_rate": 0.01}}
        est = await estimate(cfg, model_sample=8, hours=2, embedder=bm25_embedder)
        cfg["llm"]["fallback_stop"] = {"enabled": False}
        run = await run_in_process(cfg, tmp_path / "run", embedder=bm25_embedder)
    actual = sum(c["requests"] for c in run.result.llm_tasks.values())
    first_asks = actual - sum(c["reasks"] for c in run.result.llm_tasks.values())
    assert first_asks < 0.8 * actual  # the model re-asks: what the estimate must count
    assert est.reasks > 0 and abs(est.calls / actual - 1) < 0.15, (est.calls, actual)
    assert (
        est.fallbacks > 0
        and abs(est.calls - est.reasks - sum(t.asks for t in est.tasks.values())) < 1e-6
    )
    assert any(t.per_answer.startswith("measured on") for t in est.tasks.values())
    assert est.warnings and "llm.fallback_stop.max_rate 0.01" in est.warnings[0]
