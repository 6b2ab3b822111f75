"""Reproducibility, config errors, the CLI, and one run through the LLM emulator over HTTP."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from societas.agents.runtime.results import TABLES, read_table
from societas.agents.scenario import ScenarioConfigError, load_scenario
from societas.cluster.cli import app
from societas.cluster.loop.run import RunInterrupted
from societas.testing.emulator import EmulatorConfig, serve

from .conftest import CONFIGS, scenario

TOWN = {"agents": {"count": 30}, "ticks": 16}


def _files(out):
    return {
        p.relative_to(out): p.read_bytes()
        for p in sorted((out / "results").rglob("*"))
        if p.is_file()
    }


async def test_same_seed_gives_byte_identical_parquet(run):
    a = await run(scenario("town", **TOWN), "a")
    b = await run(scenario("town", **TOWN), "b")
    fa, fb = _files(a), _files(b)
    assert fa and fa == fb
    c = await run(scenario("town", seed=1, **TOWN), "c")
    assert _files(c) != fa


async def test_warm_memories_in_ram_or_in_the_engine_give_byte_identical_parquet(run):
    """Three simulated days, hot 6 h, warm 1 day: memories leave hot, stay warm, move to cold
    and are checkpointed; keeping warm ones in RAM (`tiers.warm_in_ram`) changes no result
    and writes nothing to the engine."""
    tiers = {"hot_window_hours": 6, "warm_max_age_days": 1}
    days = {"agents": {"count": 12}, "ticks": 144}
    kept = await run(scenario("town", memory={"tiers": tiers | {"warm_in_ram": True}}, **days))
    written = await run(
        scenario("town", memory={"tiers": tiers | {"warm_in_ram": False}}, **days), "written"
    )
    assert _files(kept) and _files(kept) == _files(written)
    # stopped on day 2 (warm memories in RAM columns, some already cold) and resumed from its
    # last checkpoint: the same results as the uninterrupted run
    cfg = scenario("town", memory={"tiers": tiers | {"warm_in_ram": True}}, **days)
    ticks = {"n": 0}

    def stop_on_day_two() -> bool:
        ticks["n"] += 1
        return ticks["n"] >= 80

    with pytest.raises(RunInterrupted):
        await run(cfg, "split", stop=stop_on_day_two)
    split = await run(cfg, "split", resume=True)
    for table in TABLES:  # the same rows (a resumed run's result files split at the stop)
        assert read_table(split, table).equals(read_table(kept, table)), table
    upserts = [
        json.loads((out / "run.json").read_text())["totals"]["vector_upserts"]
        for out in (kept, written)
    ]
    assert upserts[0] == 0 < upserts[1]


async def test_group_count_keeps_positions_needs_and_knowledge(run):
    one = await run(
        scenario("diffusion", agents={"count": 40}, ticks=12, network={"k": 4, "isolated": 5}),
        "one",
    )
    two = await run(
        scenario("diffusion", agents={"count": 40}, ticks=12, network={"k": 4, "isolated": 5}),
        "two",
        groups=3,
    )
    for table in ("agent_state", "needs", "knowledge"):
        assert read_table(one, table).equals(read_table(two, table)), table
    # Who talks to whom and what facts pass are identical; the utterances may differ, since
    # retrieval ranks with BM25 statistics of each group's own shard (documented).
    cols = ["tick", "speaker", "listener", "channel", "facts"]
    assert (
        read_table(one, "dialogues").select(cols).equals(read_table(two, "dialogues").select(cols))
    )


def test_bad_config_lists_every_bad_field():
    bad = scenario("town")
    bad["agents"] = {"count": 0, "age_mean": -1}
    bad["ticks"] = "many"
    bad["colour"] = "red"
    bad["interventions"] = [
        {"tick": -1, "kind": "fact", "fact": "festival"},
        {"tick": 1, "kind": "policy"},
    ]
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(bad)
    text = str(err.value)
    for path in (
        "agents.count",
        "agents.age_mean",
        "ticks",
        "colour",
        "interventions.0.tick",
        "interventions.1",
    ):
        assert f"  {path}" in text, text
    late = scenario("town", ticks=3)
    with pytest.raises(ScenarioConfigError, match=r"interventions\.0\.tick: 4 is not < ticks"):
        load_scenario(late)
    few = scenario("town", agents={"count": 5})  # the network's default 6 ties cannot fit
    with pytest.raises(ScenarioConfigError, match=r"network\.k: 6 ties per agent must be < the"):
        load_scenario(few)
    for path in CONFIGS.glob("*.yaml"):
        if not path.name.startswith("memory"):
            load_scenario(path)  # every shipped scenario is valid


async def test_a_run_through_the_llm_emulator_over_http(run):
    async with serve(EmulatorConfig(base_latency_s=0.001)) as (emu, url):
        cfg = scenario("town", agents={"count": 12}, ticks=6)
        cfg["llm"] = {
            "endpoints": [{"base_url": url, "model": "emulated", "send_task_hints": True}]
        }
        out = await run(cfg)
        assert emu.stats["served"] > 0
    llm = read_table(out, "llm")
    assert sum(llm.column("requests").to_pylist()) > 0
    assert read_table(out, "agent_state").num_rows == 72


def test_cli_run_local_and_report(tmp_path, monkeypatch):
    out = tmp_path / "cli"
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "run",
            str(CONFIGS / "town.yaml"),
            "--local",
            "--agents",
            "20",
            "--ticks",
            "6",
            "--out",
            str(out),
            "--groups",
            "2",
        ],
    )
    assert res.exit_code == 0, res.output
    assert all(read_table(out, t).schema for t in TABLES)
    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "report.html").exists() and (out / "summary.json").exists()
    assert 'id="findings"' in (out / "report.html").read_text()
    monkeypatch.setitem(sys.modules, "societas.cluster.ray.runtime", None)
    res = runner.invoke(app, ["run", str(CONFIGS / "town.yaml"), "--agents", "20"])
    assert res.exit_code == 2 and "Ray runtime is not available" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("agents: {count: -3}\nticks: 0\n")
    res = runner.invoke(app, ["run", str(bad), "--local"])
    assert res.exit_code == 2 and "agents.count" in res.output and "ticks" in res.output


async def test_agents_in_flight_bounds_the_window_not_the_results(run):
    """A group of 30 stepping 3 agents at a time writes the same Parquet bytes as all 30 at
    once (rules policy: no agent reads what another writes within a tick)."""
    window = await run(scenario("town", cluster={"agents_in_flight": 3}, **TOWN), "window")
    whole = await run(scenario("town", cluster={"agents_in_flight": 30}, **TOWN), "whole")
    assert _files(window) and _files(window) == _files(whole)
