"""Researcher-named outcomes: safe expressions, validation before tick 0, and the `outcomes`,
`baseline` and `treated` tables of a run (byte-identical on rerun)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

from societas.agents.experiments.expressions import ExpressionError, parse_expression
from societas.agents.runtime.results import read_table
from societas.agents.scenario import ScenarioConfigError, load_scenario

BASE: dict[str, Any] = {
    "name": "outcomes",
    "seed": 5,
    "ticks": 8,
    "start_hour": 7,
    "agents": {"count": 10},
    "network": {"k": 4},
    "map": {"workplaces": 2, "shops": 1, "cafes": 1, "parks": 1, "shelters": 1},
    "topics": [{"name": "basic income"}],
    "attributes": [{"name": "mood", "type": "float", "default": 0.5}],
    "interventions": [
        {"tick": 3, "kind": "policy", "policy": "ubi", "amount": 500,
         "select": {"income_below": 2500}},
        {"tick": 3, "kind": "set", "values": {"mood": 0.9}, "select": {"ids": [1, 2]}},
    ],
    "outcomes": {
        "every": 3,
        "record": [
            "mood",
            "hunger",
            "basic income",
            {"name": "cushion", "expr": "currency / max(consumption, 1)"},
            {"name": "rich", "expr": "income > 2500"},
        ],
    },
    "analysis": {"primary": "mood", "subgroups": {"low": "income < 2500"}, "terciles": ["age"]},
}  # fmt: skip


def cfg(**over: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(over)
    return data


def test_expressions_compute_and_refuse_code():
    expr = parse_expression("0.5 * mood + max(hunger, 0.2) if income < 2000 else -1")
    assert expr.names == {"mood", "hunger", "income"}
    assert expr({"mood": 0.4, "hunger": 0.1, "income": 1000}) == pytest.approx(0.4)
    assert expr({"mood": 0.4, "hunger": 0.1, "income": 3000}) == -1
    assert parse_expression("occupation == 'teacher' and not alert")(
        {"occupation": "teacher", "alert": False}
    )
    assert parse_expression("1 < age <= 30")({"age": 30}) is True
    for bad in (
        "__import__('os').system('true')",
        "mood.__class__",
        "[x for x in mood]",
        "lambda: 1",
        "open('f')",
        "income <",
        "",
    ):
        with pytest.raises(ExpressionError):
            parse_expression(bad)
    with pytest.raises(ExpressionError, match="exponent"):
        parse_expression("2 ** income")({"income": 10_000})


@pytest.mark.parametrize(
    ("where", "over", "words"),
    [
        ("outcomes.record.0.name", {"record": ["happiness"]}, "'happiness'"),
        ("outcomes.record.0.expr", {"record": [{"name": "x", "expr": "mood +"}]}, "parse"),
        ("outcomes.record.0.expr", {"record": [{"name": "x", "expr": "wealth * 2"}]}, "wealth"),
        ("outcomes.record.0.name", {"record": ["occupation"]}, "not a number"),
        ("outcomes.record.0.attitude", {"record": [{"name": "a", "attitude": "x"}]}, "topic"),
    ],
)
def test_bad_outcomes_name_the_field_before_the_run(where, over, words):
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(cfg(outcomes={**BASE["outcomes"], **over}, analysis={}))
    assert [p for p, _ in err.value.problems] == [where]
    assert words in err.value.problems[0][1]


@pytest.mark.parametrize(
    ("where", "analysis"),
    [
        ("analysis.subgroups.poor", {"subgroups": {"poor": "salary < 10"}}),
        ("analysis.subgroups.poor", {"subgroups": {"poor": "income <<< 3"}}),
        ("analysis.subgroups.treated", {"subgroups": {"treated": "income < 3"}}),
        ("analysis.primary", {"primary": "wellbeing"}),
        ("analysis.terciles.0", {"terciles": ["occupation"]}),
        ("analysis.baseline_tick", {"baseline_tick": 99}),
    ],
)
def test_bad_analysis_names_the_field_before_the_run(where, analysis):
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(cfg(analysis=analysis))
    assert [p for p, _ in err.value.problems] == [where], err.value.problems


def test_baseline_tick_is_the_first_intervention_over_all_arms():
    arms = [
        {"name": "control"},
        {"name": "late", "interventions": [{"tick": 6, "kind": "set", "values": {"mood": 1.0}}]},
    ]
    loaded = load_scenario(cfg(interventions=[], arms=arms))
    assert loaded.analysis.baseline_tick == 6
    from societas.agents.experiments.checks import arm_scenario

    assert arm_scenario(loaded, "control").analysis.baseline_tick == 6
    assert load_scenario(cfg(analysis={"baseline_tick": 2})).analysis.baseline_tick == 2


async def _run(tmp: Path, label: str, embedder) -> Path:
    from societas.cluster.loop.local import run_local_async

    out = tmp / label
    await run_local_async(cfg(), out, embedder=embedder)
    return out


async def test_outcomes_baseline_and_treated_tables(tmp_path, bm25_embedder):
    out = await _run(tmp_path, "a", bm25_embedder)
    outcomes = read_table(out, "outcomes")
    assert sorted(set(outcomes["tick"].to_pylist())) == [0, 3, 6, 7]  # every 3 and the last
    assert set(outcomes["variable"].to_pylist()) == {"mood", "hunger", "basic income", "cushion",
                                                     "rich"}  # fmt: skip
    rows = {(r["tick"], r["agent_id"], r["variable"]): r["value"] for r in outcomes.to_pylist()}
    state = read_table(out, "agent_state").to_pylist()
    needs = {(r["tick"], r["agent_id"]): r["hunger"] for r in read_table(out, "needs").to_pylist()}
    checked = 0
    for s in state:
        key = (s["tick"], s["agent_id"])
        if (*key, "cushion") in rows:
            assert rows[(*key, "cushion")] == pytest.approx(
                s["currency"] / max(s["consumption"], 1)
            )
            assert rows[(*key, "rich")] == float(s["income"] > 2500)
            assert rows[(*key, "hunger")] == needs[key]
            checked += 1
    assert checked == 4 * 10
    assert rows[(6, 1, "mood")] != 0.5 and rows[(0, 1, "mood")] == 0.5  # set at tick 3
    base = read_table(out, "baseline")
    assert set(base["tick"].to_pylist()) == {3}  # the first intervention's tick
    income = {r["agent_id"]: r["value"] for r in base.to_pylist() if r["variable"] == "income"}
    # baseline income is before the basic income: what agent_state had at tick 2
    before = {s["agent_id"]: s["income"] for s in state if s["tick"] == 2}
    assert income == pytest.approx(before)
    treated = read_table(out, "treated")
    policy = treated.filter(pc.equal(treated["intervention"], 0))["agent_id"].to_pylist()
    assert policy == sorted(i for i, v in income.items() if v < 2500) and policy
    assert treated.filter(pc.equal(treated["intervention"], 1))["agent_id"].to_pylist() == [1, 2]


async def test_outcomes_are_byte_identical_on_rerun(tmp_path, bm25_embedder):
    a = await _run(tmp_path, "a", bm25_embedder)
    b = await _run(tmp_path, "b", bm25_embedder)
    for table in ("outcomes", "baseline", "treated"):
        files_a = sorted((a / "results" / table).glob("*/*.parquet"))
        files_b = sorted((b / "results" / table).glob("*/*.parquet"))
        assert files_a and [f.name for f in files_a] == [f.name for f in files_b]
        for fa, fb in zip(files_a, files_b, strict=True):
            assert fa.read_bytes() == fb.read_bytes(), fa


def test_a_bad_selector_in_a_scenario_with_arms_is_one_line():
    arms = [{"name": "control"}, {"name": "treatment"}]
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(cfg(arms=arms, analysis={"subgroups": {"poor": "salary < 10"}}))
    assert [p for p, _ in err.value.problems] == ["analysis.subgroups.poor"]
