"""Interventions that recur (`every:`) and that fire on a condition over status (`when:`),
and their errors before tick 0."""

from __future__ import annotations

import pytest

from societas.agents.runtime.results import read_table
from societas.agents.scenario import ScenarioConfigError, load_scenario

from .test_outcomes_recorded import cfg


def _with(*interventions):
    return cfg(interventions=list(interventions), analysis={}, outcomes={"record": ["mood"]})


async def test_every_and_when_fire_on_their_ticks_and_agents(tmp_path, bm25_embedder):
    from societas.cluster.loop.local import run_local_async

    data = _with(
        {"tick": 1, "every": 3, "until": 6, "kind": "set", "values": {"mood": 0.9},
         "select": {"ids": [0, 1]}},
        {"tick": 2, "kind": "set", "values": {"mood": 0.1}, "when": "income < 2500"},
    )  # fmt: skip
    out = tmp_path / "run"
    await run_local_async(data, out, embedder=bm25_embedder)
    treated = read_table(out, "treated").to_pylist()
    recurring = [(r["tick"], r["agent_id"]) for r in treated if r["intervention"] == 0]
    assert recurring == [(t, a) for t in (1, 4) for a in (0, 1)]
    state = read_table(out, "agent_state").to_pylist()
    income = {r["agent_id"]: r["income"] for r in state if r["tick"] == 1}
    low = sorted(a for a, v in income.items() if v < 2500)
    assert low and len(low) < 10
    assert [r["agent_id"] for r in treated if r["intervention"] == 1] == low
    mood = {(r["tick"], r["agent_id"]): r["value"] for r in read_table(out, "outcomes").to_pylist()}
    assert all(mood[(3, a)] != 0.5 for a in low)  # set at tick 2, drifted by nothing else
    assert all(mood[(3, a)] == 0.5 for a in set(range(10)) - set(low) - {0, 1})


@pytest.mark.parametrize(
    ("iv", "where", "words"),
    [
        ({"when": "income <"}, "interventions.0.when", "does not parse"),
        ({"when": "salary < 3"}, "interventions.0.when", "salary"),
        ({"when": "__import__('os')"}, "interventions.0.when", "not allowed"),
        ({"until": 5}, "interventions.0.until", "needs every"),
        ({"every": 2, "until": 0}, "interventions.0.until", "before tick"),
    ],
)
def test_bad_schedules_name_the_field(iv, where, words):
    base = {"tick": 2, "kind": "set", "values": {"mood": 0.1}}
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(_with({**base, **iv}))
    assert [p for p, _ in err.value.problems] == [where]
    assert words in err.value.problems[0][1]


def test_every_day_repeats_at_the_same_hour():
    from societas.agents.experiments.schedule import ticks_of

    sc = load_scenario(
        _with({"tick": 3, "every": "day", "kind": "set", "values": {"mood": 0.2}})
    ).model_copy(update={"ticks": 100})
    assert ticks_of(sc.interventions[0], sc) == [3, 51, 99]
