"""Interventions and experiment fields you can trust: every bad input is an error naming the
field and the value before anything runs."""

from __future__ import annotations

import pytest

from societas.agents.scenario import ScenarioConfigError, load_scenario
from tests.experiments.conftest import scenario


def problems(data) -> dict[str, str]:
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(data)
    return dict(err.value.problems)


def test_set_key_unknown_or_mistyped_is_refused_at_load():
    bad = problems(
        scenario(
            interventions=[
                {"tick": 1, "kind": "set", "values": {"moood": 0.3}},
                {"tick": 1, "kind": "set", "values": {"mood": "happy"}},
            ]
        )
    )
    assert "unknown status attribute 'moood'" in bad["interventions.0.values.moood"]
    assert "expected float" in bad["interventions.1.values.mood"]
    assert "'happy'" in bad["interventions.1.values.mood"]
    # the declared custom attribute and a built-in one are fine
    ok = load_scenario(
        scenario(interventions=[{"tick": 1, "kind": "set", "values": {"mood": 1, "alert": True}}])
    )
    assert ok.interventions[0].values == {"mood": 1, "alert": True}


def test_selector_matching_no_agent_is_refused():
    bad = problems(
        scenario(
            interventions=[
                {"tick": 1, "kind": "event", "text": "x", "select": {"occupation": ["astronaut"]}}
            ],
            surveys=[
                {
                    "id": "s",
                    "day": 0,
                    "hour": 8,
                    "select": {"age_min": 119},
                    "questions": [{"id": "q", "kind": "open", "text": "How are you?"}],
                }
            ],
        )
    )
    assert "matches no agent" in bad["interventions.0.select"]
    assert "astronaut" in bad["interventions.0.select"]
    assert "matches no agent" in bad["surveys.0.select"] and "119" in bad["surveys.0.select"]


def test_negative_basic_income_is_refused():
    bad = problems(
        scenario(interventions=[{"tick": 1, "kind": "policy", "policy": "ubi", "amount": -50}])
    )
    assert "-50" in bad["interventions.0"] and "negative" in bad["interventions.0"]


def test_tick_beyond_the_run_is_refused():
    bad = problems(scenario(interventions=[{"tick": 12, "kind": "event", "text": "late"}]))
    assert bad["interventions.0.tick"] == "12 is not < ticks (12)"
    bad = problems(
        scenario(
            surveys=[
                {
                    "id": "s",
                    "day": 3,
                    "hour": 8,
                    "questions": [{"id": "q", "kind": "open", "text": "?"}],
                }
            ]
        )
    )
    assert "day 3 hour 8" in bad["surveys.0.day"] and "0..11" in bad["surveys.0.day"]


def test_misspelt_fields_are_named_with_a_suggestion():
    bad = problems(
        scenario(
            intervnetions=[],
            agents={"cuont": 5},
            surveys=[
                {
                    "id": "s",
                    "day": 0,
                    "hour": 8,
                    "questions": [{"id": "q", "kind": "likert", "txt": "?", "text": "?"}],
                }
            ],
        )
    )
    assert bad["intervnetions"] == "unknown field 'intervnetions'; did you mean 'interventions'?"
    assert bad["agents.cuont"] == "unknown field 'cuont'; did you mean 'count'?"
    assert "unknown field 'txt'" in bad["surveys.0.questions.0.txt"]
    assert "did you mean 'text'" in bad["surveys.0.questions.0.txt"]


def test_bad_values_name_the_value():
    bad = problems(
        scenario(ticks="many", attributes=[{"name": "mood", "type": "float", "default": "high"}])
    )
    assert "'many'" in bad["ticks"]
    assert "high" in bad["attributes.0"]


def test_custom_attribute_cannot_shadow_a_builtin_and_question_attribute_must_exist():
    bad = problems(scenario(attributes=[{"name": "currency", "type": "float"}]))
    assert "built-in" in bad["attributes.0.name"]
    bad = problems(
        scenario(
            surveys=[
                {
                    "id": "s",
                    "day": 0,
                    "hour": 8,
                    "questions": [{"id": "q", "kind": "likert", "text": "?", "attribute": "joy"}],
                }
            ]
        )
    )
    assert "'joy'" in bad["surveys.0.questions.0.attribute"]


def test_arms_share_population_and_report_their_own_problems():
    bad = problems(scenario(arms=[{"name": "t", "overrides": {"seed": 4, "agents": {}}}]))
    assert "['agents', 'seed']" in bad["arms.0"] and "shared" in bad["arms.0"]
    bad = problems(
        scenario(
            arms=[
                {"name": "control"},
                {"name": "control"},
                {"name": "u", "interventions": [{"tick": 99, "kind": "event", "text": "x"}]},
            ]
        )
    )
    assert "used twice" in bad["arms.1.name"]
    assert bad["arms.2.interventions.0.tick"] == "99 is not < ticks (12)"


def test_arm_scenarios_keep_seed_and_population():
    from societas.agents.experiments.checks import arm_scenario
    from societas.agents.population import population_for

    cfg = load_scenario(
        scenario(
            arms=[
                {"name": "control"},
                {
                    "name": "treatment",
                    "overrides": {"economy": {"meal_cost": 9}},
                    "interventions": [{"tick": 2, "kind": "policy", "policy": "ubi", "amount": 5}],
                },
            ]
        )
    )
    control, treatment = arm_scenario(cfg, "control"), arm_scenario(cfg, "treatment")
    assert control.seed == treatment.seed and not control.arms
    assert treatment.economy.meal_cost == 9 and control.economy.meal_cost == 8
    assert len(treatment.interventions) == 1 and not control.interventions
    a, b = population_for(control), population_for(treatment)
    assert [p.name for p in a.profiles] == [p.name for p in b.profiles]
    assert a.friends == b.friends


def test_block_that_is_not_a_block_is_refused_before_the_run(tmp_path):
    from societas.cluster.experiments.arms import preflight_code, run_arms
    from tests.experiments.conftest import CODE

    cfg = load_scenario(scenario(blocks=["probe_blocks:NotABlock"], code_dirs=[str(CODE)]))
    with pytest.raises(ScenarioConfigError, match="probe_blocks:NotABlock is not a Block"):
        preflight_code(cfg)
    cfg = load_scenario(
        scenario(arms=[{"name": "a"}, {"name": "b", "overrides": {"blocks": ["no_such_module:X"]}}])
    )
    with pytest.raises(ScenarioConfigError, match="cannot import 'no_such_module'"):
        run_arms(cfg, tmp_path / "run")
    assert not (tmp_path / "run").exists()  # no arm started
