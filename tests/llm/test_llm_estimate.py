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
