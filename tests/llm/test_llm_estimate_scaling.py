"""`societas estimate` on samples that stand for the whole run: every shipped scenario
estimates (surveys, interventions and selectors beyond the sample kept), a sample of every
agent counts exactly what the run does, a run too long to count whole folds its late events
into whole days, and the re-asks the model calibration sees are scaled in."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from societas.agents.experiments.checks import arm_scenario
from societas.agents.scenario import ScenarioConfig, load_scenario
from societas.cluster.cli import app
from societas.cluster.experiments.estimate_sample import survey_asks
from societas.cluster.loop.in_process import run_in_process

from .threaded_server import threaded_emulator

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _scenario_files() -> list[Path]:
    """Every YAML under configs/ that is a scenario (not a memory config or a branch patch)."""
    fields = set(ScenarioConfig.model_fields)
    return [
        p
        for p in sorted(CONFIGS.rglob("*.yaml"))
        if isinstance(raw := yaml.safe_load(p.read_text()), dict) and set(raw) <= fields
    ]


def _on(url: str, path: Path, folder: Path) -> Path:
    """`path` with its model endpoints moved to `url` (other scenarios as they are)."""
    data = yaml.safe_load(path.read_text())
    endpoints = (data.get("llm") or {}).get("endpoints")
    if not endpoints:
        return path
    for ep in endpoints:
        ep["base_url"] = url
    out = folder / path.name
    out.write_text(yaml.safe_dump(data))
    return out


def test_every_shipped_scenario_estimates_over_all_its_ticks(tmp_path) -> None:
    """Surveys on a later day, interventions after the first, arms and selectors for more
    agents than the sample: each shipped scenario's estimate counts them all."""
    files = _scenario_files()
    assert len(files) >= 12 and CONFIGS / "examples/lab/experiment.yaml" in files
    runner = CliRunner()
    with threaded_emulator(models=["smollm2-135m-instruct"], base_latency_s=0.001) as (_, url):
        for path in files:
            res = runner.invoke(
                app, ["estimate", str(_on(url, path, tmp_path)), "--sample", "8", "--json"]
            )
            assert res.exit_code == 0, f"{path}: {res.output}"
            est = json.loads(res.output)
            sc = load_scenario(path)
            runs = len(sc.arms) or 1
            assert est["calibration"]["count_ticks"] == sc.ticks, path  # no day left out
            assert est["calls"] > 0, path
            if sc.surveys:  # every survey of every arm, each selected agent each question
                assert est["tasks"]["survey"]["asks"] == runs * survey_asks(sc), path


async def _run_calls(sc: ScenarioConfig, **kw: Any) -> dict[str, dict[str, int]]:
    """Per-task figures of the whole run (every arm), in this process."""
    totals: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, arm in enumerate([arm_scenario(sc, a.name) for a in sc.arms] or [sc]):
            run = await run_in_process(arm, Path(tmp) / str(i), **kw)
            for task, c in run.result.llm_tasks.items():
                mine = totals.setdefault(task, {})
                for k, v in c.items():
                    mine[k] = mine.get(k, 0) + v
    return totals


@pytest.mark.parametrize(
    ("name", "agents"), [("examples/lab/experiment", None), ("validation/hurricane", 30)]
)
async def test_a_sample_of_every_agent_counts_what_the_run_does(
    name, agents, bm25_embedder
) -> None:
    """The lab's day-1 survey and two arms, the hurricane's storm on days 2 and 3: on the
    rules policy the estimate over every agent is the run's own count."""
    from societas.cluster.experiments.estimate import estimate

    sc = load_scenario(CONFIGS / f"{name}.yaml").with_overrides(agents=agents)
    est = await estimate(sc, sample=sc.agents.count, embedder=bm25_embedder)
    actual = await _run_calls(sc, embedder=bm25_embedder)
    assert est.calls == sum(c["requests"] for c in actual.values())
    assert {t: e.calls for t, e in est.tasks.items()} == {
        t: c["requests"] for t, c in actual.items() if c["requests"]
    }


async def test_a_run_too_long_to_count_whole_folds_its_late_events(
    monkeypatch, bm25_embedder
) -> None:
    """Past the count budget the sample covers whole days; the storm warnings of days 2 and 3
    move to the same time of day inside it and are counted, not dropped."""
    import societas.cluster.experiments.estimate_sample as sample
    from societas.cluster.experiments.estimate import estimate

    monkeypatch.setattr(sample, "COUNT_BUDGET", 20 * 48)
    sc = load_scenario(CONFIGS / "validation/hurricane.yaml").with_overrides(agents=20)
    est = await estimate(sc, sample=20, embedder=bm25_embedder)
    calm = await estimate(
        sc.model_copy(update={"interventions": []}), sample=20, embedder=bm25_embedder
    )
    assert est.calibration["count_ticks"] == 48 and sc.ticks == 192
    assert any("interventions [0, 1, 2] fire after tick 47" in s for s in est.sampling)
    assert est.tasks["reaction"].calls > 0 and "reaction" not in calm.tasks  # the storm's
    assert est.calls > calm.calls


@pytest.mark.llm
@pytest.mark.slow
async def test_on_the_local_model_survey_reasks_are_counted(server, tmp_path, bm25_embedder):
    """The town with surveys on a real model (the rest on rules): the model calibration asks
    the survey, sees its re-asks, and the estimate's survey calls match the run's."""
    from societas.cluster.experiments.estimate import estimate

    data = yaml.safe_load((CONFIGS / "town-model-where-it-matters.yaml").read_text())
    data["llm"]["endpoints"] = [server.endpoint(name="large")]
    data["llm"]["fallback_stop"] = {"enabled": False}
    est = await estimate(data, embedder=bm25_embedder)
    actual = await _run_calls(load_scenario(data), embedder=bm25_embedder)
    survey = actual["survey"]
    assert est.tasks["survey"].asks == survey["requests"] - survey["reasks"] == 6
    assert abs(est.tasks["survey"].calls - survey["requests"]) <= 0.3 * survey["requests"]
    rules = {t: c["requests"] for t, c in actual.items() if t != "survey" and c["requests"]}
    assert {t: e.calls for t, e in est.tasks.items() if t != "survey"} == rules
