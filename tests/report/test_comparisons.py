"""Comparing runs: arms of one experiment on their common ticks, unrelated runs refused in one
line; paired differences for economy and attitude metrics with captions that say what the
lower panel is; a banner when a model's answers fell back; headline tables without `None`."""

from __future__ import annotations

import copy
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from societas.cluster.cli import app

from .conftest import CONFIGS

LAB = CONFIGS / "examples" / "lab"


def _lab(**over: Any) -> dict[str, Any]:
    """The lab experiment for 12 ticks (its interventions at tick 4), without its surveys."""
    data = yaml.safe_load((LAB / "experiment.yaml").read_text())
    data["agents"]["profiles"] = str(LAB / "profiles.csv")
    data["code_dirs"] = [str(LAB)]
    data.update(ticks=12, surveys=[], **over)
    return data


def _run(config: dict[str, Any], out: Path, *extra: str) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    path = out.with_suffix(".yaml")
    path.write_text(yaml.safe_dump(config))
    res = CliRunner().invoke(app, ["run", str(path), "--local", "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return out


def _report(*runs: Path, out: Path | None = None) -> Any:
    args = ["report", *map(str, runs), *(["--out", str(out)] if out else [])]
    return CliRunner().invoke(app, args)


def _findings(summary_path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    summary = json.loads(summary_path.read_text())
    return {k: {r["series"]: r for r in rows} for k, rows in summary["findings"].items()}


def _captions(page: Path) -> dict[str, str]:
    """Each finding's caption by its key."""
    text = page.read_text()
    found = re.findall(r'<div class="chart" id="finding-([^"]+)">.*?<p class="note">(.*?)</p>',
                       text, flags=re.S)  # fmt: skip
    return {key: html.unescape(caption) for key, caption in found}


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    """The two arms of the lab experiment (same seed and population), reported as a folder."""
    out = _run(_lab(), tmp_path_factory.mktemp("lab") / "lab")
    res = _report(out)
    assert res.exit_code == 0, res.output
    return out


def test_arms_of_one_experiment_of_different_lengths_share_their_common_ticks(tmp_path):
    data = _lab()
    data["arms"][1]["overrides"] = {"ticks": 16}  # the treatment arm runs 4 ticks longer
    out = _run(data, tmp_path / "lab")
    res = _report(out)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ticks_compared"] == 12
    found = _findings(out / "summary.json")
    diff = found["outcome_mood"]["difference: treatment − control (all agents)"]
    assert diff["final"] is not None and diff["interval_over"] == "agents (paired)"
    page = (out / "report.html").read_text()
    assert "Compared on the 12 ticks every run has (to day 0 12:30, the end of control)" in page
    assert "treatment (16) ticks" in page


def test_unrelated_runs_are_refused_in_one_line_naming_them(tmp_path):
    town = yaml.safe_load((CONFIGS / "town.yaml").read_text()) | {"interventions": []}
    town_run = _run(town, tmp_path / "runs" / "town", "--agents", "8", "--ticks", "6")
    market = copy.deepcopy(town) | {"name": "market"}  # another scenario on the same clock
    market_run = _run(market, tmp_path / "runs" / "market", "--agents", "8", "--ticks", "8")
    for args in ([town_run, market_run], [tmp_path / "runs"]):
        res = _report(*args, out=tmp_path / "r.html")
        assert res.exit_code == 2, res.output
        (line,) = res.output.strip().splitlines()
        assert line.startswith("error: cannot compare ") and "Traceback" not in res.output
        assert f"{town_run} (scenario town, 6 ticks of 30 min from day 0 06:00)" in line
        assert f"{market_run} (scenario market, 8 ticks of 30 min" in line
        assert "different lengths" in line and "different clocks" not in line
    lab_arm = _run(_lab(), tmp_path / "lab") / "control"  # its ticks start at 07:00
    res = _report(town_run, lab_arm, out=tmp_path / "r.html")
    assert res.exit_code == 2 and "different clocks and different lengths" in res.output
    short = _run(town, tmp_path / "town-short", "--agents", "8", "--ticks", "4")
    res = _report(town_run, short, out=tmp_path / "same.html")  # one scenario, two lengths
    assert res.exit_code == 0, res.output
    assert json.loads(tmp_path.joinpath("same.summary.json").read_text())["ticks_compared"] == 4


def test_economy_and_attitudes_are_paired_per_agent_when_arms_share_seed_and_population(lab):
    found = _findings(lab / "summary.json")
    before = "before #1, #2 (day 0 08:30)"  # both interventions are at tick 4
    for key, series in (("income", "all agents"), ("attitude_basic income", "mean")):
        diff = found[key][f"difference: treatment − control ({series})"]
        assert diff["interval_over"] == "agents (paired)", key
        assert diff["at"] == {before: "0.0 [0.0, 0.0]"}, key  # identical arms before treatment
    captions = _captions(lab / "report.html")
    paired = (
        "Lower panel: treatment − control ({}), paired per agent (the arms share seed and "
        "population): the mean of each agent's own difference, with a t interval over the "
        "agents of the one run."
    )
    assert captions["income"].endswith(paired.format("all agents"))
    assert captions["attitude_basic-income"].endswith(paired.format("mean"))


def test_recipients_are_the_same_agents_in_both_arms_and_paired(lab, tmp_path):
    """With the treatment first, income is drawn for its recipients: the control's line is
    the same agents, and the difference is each recipient's own transfer, exactly."""
    out = tmp_path / "reversed.html"
    res = _report(lab / "treatment", lab / "control", out=out)
    assert res.exit_code == 0, res.output
    income = _findings(out.with_suffix(".summary.json"))["income"]
    control, treated = income["control · recipients"], income["treatment · recipients"]
    assert treated["final"] - control["final"] == pytest.approx(800, abs=1)
    diff = income["difference: control − treatment (recipients)"]
    assert (diff["final"], diff["final_lo"], diff["final_hi"]) == (-800, -800, -800)
    assert diff["interval_over"] == "agents (paired)"
    caption = _captions(out)["income"]
    assert "Recipients: agents with a transfer at the end of the run in any arm, the same " \
        "agents in every arm" in caption  # fmt: skip
    assert "Lower panel: control − treatment (recipients), paired per agent" in caption


def test_arms_of_different_seeds_say_their_lower_panel_is_unpaired(tmp_path):
    town = yaml.safe_load((CONFIGS / "town.yaml").read_text()) | {"interventions": []}
    runs = [
        _run(town, tmp_path / f"seed{s}", "--agents", "8", "--ticks", "4", "--seed", str(s))
        for s in (0, 1)
    ]
    res = _report(*runs, out=tmp_path / "r.html")
    assert res.exit_code == 0, res.output
    assert _captions(tmp_path / "r.html")["needs"].endswith(
        "Lower panel: seed1 − seed0 (hunger), unpaired (the arms do not share seed and "
        "population): the difference of the two means, its interval combining the two arms' "
        "intervals over agents as independent."
    )


def test_headline_tables_merge_one_tick_and_print_no_none(lab):
    found = _findings(lab / "summary.json")
    spread = found["attitude_basic income"]["control · spread (sd)"]
    (value,) = spread["at"].values()
    assert value.endswith(" (no interval)")
    assert all(list(r["at"]) == ["before #1, #2 (day 0 08:30)"]
               for rows in found.values() for r in rows.values())  # fmt: skip
    page = (lab / "report.html").read_text()
    assert "None" not in re.sub(r"<script.*?</script>", "", page, flags=re.S)


async def _emulated_run(out: Path, embedder: Any, garbage_for_plans: float) -> None:
    """A 6-agent town on two emulated endpoints: plans on one answering `garbage_for_plans`
    of the time with prose (no JSON: a fallback), every other task on a sound one."""
    from societas.cluster.loop.local import run_local_async
    from societas.testing.emulator import EmulatorConfig, serve

    town = yaml.safe_load((CONFIGS / "town.yaml").read_text())
    town.update(interventions=[], agents={**town["agents"], "count": 6}, ticks=6)
    town["network"] = {**town["network"], "k": 2}
    bad = EmulatorConfig(base_latency_s=0.001, rate_garbage=garbage_for_plans)
    async with serve(bad) as (_, plans), serve(EmulatorConfig(base_latency_s=0.001)) as (_, rest):
        hints = {"model": "emulated", "send_task_hints": True}
        endpoints = [{"name": "plans", "base_url": plans, **hints},
                     {"name": "rest", "base_url": rest, **hints}]  # fmt: skip
        routes = {"daily_plan": "plans", "hourly_plan": "plans", "default": "rest"}
        town["llm"] = {"endpoints": endpoints, "routes": routes}
        await run_local_async(town, out, embedder=embedder)


async def test_a_model_run_whose_answers_fell_back_gets_a_banner(tmp_path, bm25_embedder):
    await _emulated_run(tmp_path / "fell", bm25_embedder, 1.0)
    await _emulated_run(tmp_path / "sound", bm25_embedder, 0.0)
    banners = {}
    for name in ("fell", "sound"):
        res = _report(tmp_path / name)
        assert res.exit_code == 0, res.output
        page = (tmp_path / name / "report.html").read_text()
        banners[name] = [html.unescape(b) for b in re.findall(r'class="caveat"[^>]*>(.*?)</div>',
                                                              page)]  # fmt: skip
    (banner,) = banners["fell"]  # a model answered every task: no rules-policy banner
    assert re.search(r"fell back to defaults written in code: daily_plan 100% \(6 of 6; replies "
                     r"refused: 12 not the asked JSON\), hourly_plan 100% \(6 of 6; replies "
                     r"refused: 12 not the asked JSON\);", banner), banner  # fmt: skip
    assert "importance" not in banner  # its answers were the model's (each plan asked twice)
    assert banners["sound"] == []
