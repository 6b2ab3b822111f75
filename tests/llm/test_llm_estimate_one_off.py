"""`societas estimate` counts an intervention that fires once in the run once: over a count
span shorter than the run, what the one-off events add to a baseline count run without them
is scaled by the agents only, and the estimate comes close to the run it stands for."""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from societas.agents.llm.config import LLMConfig
from societas.agents.scenario import ScenarioConfig, load_scenario
from societas.cluster.experiments.estimate import Counted, _scaled
from societas.cluster.experiments.estimate_sample import Plan, one_off, sampled
from societas.cluster.loop.in_process import run_in_process

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
EVENT = {"kind": "event", "text": "A fire at the town hall.", "importance": 0.9}


def _town(*interventions: dict[str, Any], ticks: int = 96) -> ScenarioConfig:
    """A small town of `ticks` half-hour ticks with these interventions."""
    return load_scenario(
        {
            "name": "one-off",
            "ticks": ticks,
            "agents": {"count": 20},
            "interventions": list(interventions),
            "llm": {"provider": "rules"},
        }
    )


def test_an_intervention_fires_once_unless_it_fires_again_in_the_run() -> None:
    """No `every`, `when:` alone, or an `every` whose next firing is past `until` or the end:
    once; an `every` that fires again: recurring."""
    sc = _town(
        {**EVENT, "tick": 60},
        {**EVENT, "tick": 60, "when": "income < 1500"},
        {**EVENT, "tick": 60, "every": "day", "until": 90},
        {**EVENT, "tick": 60, "every": 48},
        {**EVENT, "tick": 60, "every": 12},
        {**EVENT, "tick": 10, "every": 4, "until": 30},
    )
    assert one_off(sc) == [0, 1, 2, 3]


def test_a_moved_one_off_fires_once_and_the_baseline_leaves_it_out(tmp_path) -> None:
    """Past the span a one-off moves to the same time of day and fires once there (a daily
    one that fires once in the run is not made to recur); a recurring one keeps `every`;
    `without` leaves the one-offs out of the baseline."""
    sc = _town(
        {**EVENT, "tick": 60, "every": "day", "until": 100}, {**EVENT, "tick": 70, "every": 6}
    )
    rules = LLMConfig(provider="rules")
    small, notes = sampled(sc, 20, 48, rules, tmp_path)
    assert [(iv.tick, iv.every) for iv in small.interventions] == [(12, None), (22, 6)]
    assert notes == [
        "interventions [0, 1] fire after tick 47: moved to the same time of day inside the "
        "count runs; [1] recur in the run and are scaled with the count runs (x2)",
        # the one-off at tick 12 of a 48-tick count run: 36 ticks of what it sets off
        "what the one-off interventions [0] set off is counted over the 36 ticks after them in "
        "the count runs, not beyond",
    ]
    calm, calm_notes = sampled(sc, 20, 48, rules, tmp_path, without=one_off(sc))
    assert [(iv.tick, iv.every) for iv in calm.interventions] == [(22, 6)]
    assert not any("one-off" in note for note in calm_notes)
    _, whole = sampled(sc, 20, 96, rules, tmp_path)  # the whole run: nothing cut off
    assert not any("one-off" in note for note in whole)


def _counted(events: dict[str, dict[str, int]], calm: dict[str, dict[str, int]]) -> Counted:
    """Count runs standing in for real ones: their per-task figures, a second each tick."""
    run = SimpleNamespace(result=SimpleNamespace(llm_tasks=events, tick_seconds=[1.5] * 4))
    base = SimpleNamespace(result=SimpleNamespace(llm_tasks=calm, tick_seconds=[1.0] * 4))
    return Counted(run=cast(Any, run), base=cast(Any, base))


def test_what_one_offs_add_scales_by_agents_and_is_never_below_none() -> None:
    """The baseline scales by agents x ticks, the events' addition by agents only; a task the
    events cut adds none and is named."""
    sc = _town(ticks=96).with_overrides(agents=40)
    counted = _counted(
        {"reaction": {"requests": 5, "prompt_tokens": 50}, "talk": {"requests": 7}},
        {"talk": {"requests": 9}},
    )
    tasks, engine, fewer = _scaled(sc, Plan(agents=20, ticks=48), counted)
    assert tasks["reaction"] == {"requests": 10, "prompt_tokens": 100}  # x2 agents, once
    assert tasks["talk"] == {"requests": 36}  # the baseline x2 agents x2 ticks, nothing added
    assert fewer == ["talk"]
    assert engine == 4.0 * 4 + 2.0 * 2


async def test_a_late_one_off_storm_is_counted_close_to_the_run(monkeypatch, bm25_embedder):
    """The hurricane's warning, landfall and all clear on days 2 and 3 of 4, counted over day
    1 only: the estimate's calls, and the storm's reactions and re-plans, are within a tenth
    and a fifth of a run's own count (scaling them with the ticks made them 4 times as many
    and the whole a fifth too many)."""
    import societas.cluster.experiments.estimate_sample as sample
    from societas.cluster.experiments.estimate import estimate

    monkeypatch.setattr(sample, "COUNT_BUDGET", 100 * 48)
    sc = load_scenario(CONFIGS / "validation/hurricane.yaml").with_overrides(agents=100)
    est = await estimate(sc, embedder=bm25_embedder)
    assert est.calibration["count_ticks"] == 48 and sc.ticks == 192
    assert any("[0, 1, 2] fire once in the run and are counted once" in s for s in est.sampling)
    with tempfile.TemporaryDirectory() as tmp:
        run = await run_in_process(sc, Path(tmp) / "run", embedder=bm25_embedder)
    actual = {t: c["requests"] for t, c in run.result.llm_tasks.items()}
    total = sum(actual.values())
    assert abs(est.calls - total) <= 0.1 * total, (est.calls, total)
    for task in ("reaction", "replan"):
        assert abs(est.tasks[task].calls - actual[task]) <= 0.2 * actual[task], task
