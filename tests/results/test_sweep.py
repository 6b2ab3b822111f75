"""`sweep:` grids expanded into arms before validation: names, patches, clear errors for a
field that does not exist; a swept lab experiment over seeds reports paired effects per point
against the control and draws the effect against the swept amount."""

from __future__ import annotations

import copy
import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from societas.agents.scenario import ScenarioConfigError, load_scenario

LAB = Path(__file__).resolve().parents[2] / "configs" / "examples" / "lab"


def lab(**sweep: list) -> dict:
    data = yaml.safe_load((LAB / "experiment.yaml").read_text())
    data["agents"]["profiles"] = str(LAB / "profiles.csv")
    data["code_dirs"] = [str(LAB)]
    data["sweep"] = copy.deepcopy(sweep)
    return data


def test_a_sweep_becomes_arms_with_their_points():
    cfg = load_scenario(
        lab(**{"economy.consumption_propensity": [0.5, 0.7],
               "arms.treatment.interventions.0.amount": [400, 800]})
    )  # fmt: skip
    names = [a.name for a in cfg.arms]
    assert names == [
        "control-consumption_propensity-0p5",
        "control-consumption_propensity-0p7",
        "treatment-consumption_propensity-0p5-amount-400",
        "treatment-consumption_propensity-0p5-amount-800",
        "treatment-consumption_propensity-0p7-amount-400",
        "treatment-consumption_propensity-0p7-amount-800",
    ]
    arm = cfg.arms[3]
    assert arm.interventions[0].amount == 800 and arm.interventions[1].kind == "event"
    assert arm.overrides["economy"] == {"consumption_propensity": 0.5}
    assert arm.overrides["analysis"]["arm_base"] == "treatment"
    assert cfg.sweep == {}
    from societas.agents.experiments.checks import arm_scenario

    one = arm_scenario(cfg, arm.name)
    assert one.economy.consumption_propensity == 0.5 and one.analysis.primary == "mood"
    assert one.analysis.sweep_point == {
        "economy.consumption_propensity": 0.5,
        "arms.treatment.interventions.0.amount": 800,
    }


@pytest.mark.parametrize(
    ("sweep", "where", "words"),
    [
        ({"economy.wages": [1, 2]}, "sweep.economy.wages", "no field 'wages'"),
        ({"arms.placebo.interventions.0.amount": [1]}, "sweep.arms.placebo.interventions.0.amount",
         "no arm 'placebo'"),
        ({"arms.treatment.interventions.7.amount": [1]},
         "sweep.arms.treatment.interventions.7.amount", "no entry '7'"),
        ({"economy.meal_cost": []}, "sweep.economy.meal_cost", "non-empty list"),
        ({"interventions.0.amount": [1]}, "sweep.interventions.0.amount", "put interventions"),
    ],
)  # fmt: skip
def test_a_bad_sweep_is_one_line_naming_the_path(sweep, where, words):
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(lab(**sweep))
    assert [p for p, _ in err.value.problems] == [where]
    assert words in err.value.problems[0][1]


def test_a_swept_experiment_over_seeds_reports_effects_per_point(tmp_path):
    config = tmp_path / "sweep.yaml"
    data = lab(**{"arms.treatment.interventions.0.amount": [400, 800]})
    data["ticks"] = (
        36  # the first day and its evening survey; the day's transfer is paid at midnight
    )
    data["surveys"] = data["surveys"][:1]
    config.write_text(yaml.safe_dump(data))
    out = tmp_path / "D"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for args in (
        ["run", str(config), "--local", "--seeds", "0,1", "--out", str(out)],
        ["report", str(out)],
    ):
        command = [sys.executable, "-m", "societas.cluster.cli", *args]
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=600, env=env, check=False
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    with (out / "effects.csv").open() as f:
        rows = list(csv.DictReader(f))
    money = {r["arm"]: r for r in rows if r["outcome"] == "money" and r["subgroup"] == "treated"}
    assert set(money) == {"treatment-amount-400", "treatment-amount-800"}
    assert {r["reference_arm"] for r in money.values()} == {"control"}
    assert all(r["n_seeds"] == "2" and "paired" in r["method"] for r in money.values())
    assert (
        float(money["treatment-amount-800"]["estimate"])
        > float(money["treatment-amount-400"]["estimate"])
        > 0
    )
    assert 'id="fig-sweep"' in (out / "report.html").read_text()
