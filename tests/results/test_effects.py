"""The report's statistics on constructed data with known answers, and effects.csv from
constructed runs (two arms sharing seed and population, a known effect in one subgroup)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from societas.agents.runtime.results import ResultsWriter
from societas.cluster.report import write_report
from societas.cluster.report.stats import (
    newcombe_paired,
    newcombe_unpaired,
    paired_effect,
    t95,
    t_cdf,
    t_quantile,
    unpaired_effect,
    welch,
    wilson,
)


@pytest.mark.parametrize(
    ("df", "q"), [(1, 12.7062), (2, 4.3027), (3, 3.1824), (5, 2.5706), (10, 2.2281), (30, 2.0423)]
)
def test_t_quantile_matches_the_published_table(df, q):
    assert t95(df) == pytest.approx(q, abs=1e-4)
    assert t_cdf(t95(df), df) == pytest.approx(0.975, abs=1e-10)
    assert t_quantile(0.025, df) == pytest.approx(-q, abs=1e-4)


def test_t_quantile_tends_to_the_normal_and_takes_fractional_df():
    assert t95(100_000) == pytest.approx(1.95996, abs=1e-4)
    assert t95(2) > t95(2.5) > t95(3)
    assert t_quantile(0.95, 5) == pytest.approx(2.0150, abs=1e-4)


def test_wilson_stays_in_the_unit_interval_and_matches_known_values():
    lo, hi = wilson(5, 20)
    assert (lo, hi) == (pytest.approx(0.1119, abs=1e-4), pytest.approx(0.4687, abs=1e-4))
    lo, hi = wilson(0, 3)
    assert lo == 0.0 and 0.0 < hi < 1.0  # a share near 0: no interval below 0
    for n in (1, 2, 3, 10, 200):
        for k in range(n + 1):
            lo, hi = wilson(k, n)
            assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_a_paired_difference_without_spread_has_no_interval():
    same = np.array([0.2, 0.5, 0.9, 0.4])
    one = paired_effect([(same, same.copy())])
    assert one.estimate == 0.0 and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    assert "within one run" in one.method and one.n_seeds == 1
    assert one.method.endswith("no interval: every value equal or too few")
    three = paired_effect([(same, same.copy())] * 3)
    assert three.estimate == 0.0 and math.isnan(three.ci_low) and math.isnan(three.ci_high)
    assert three.method.startswith("paired, t over seeds (df=2); no interval")
    m, lo, hi, df = welch(np.ones(4), np.zeros(5))
    assert m == 1.0 and math.isnan(lo) and math.isnan(hi) and df == 7.0


@pytest.mark.parametrize(
    ("table", "expected"),
    [  # (both, arm only, reference only, neither): published method-10 intervals
        ((59, 6, 16, 80), (-0.1186, -0.0046)),  # Cavo et al.; Fagerland et al. 2014
        ((1, 1, 7, 12), (-0.5069, -0.0256)),  # Bentur et al.; Fagerland et al. 2014
        ((10, 0, 0, 10), (-0.0898, 0.0898)),  # no discordant pair: still an interval
    ],
)
def test_a_paired_share_difference_is_newcombes_method_10(table, expected):
    _, only_arm, only_ref, _ = table
    arm = np.repeat([1.0, 1.0, 0.0, 0.0], table)
    ref = np.repeat([1.0, 0.0, 1.0, 0.0], table)
    assert newcombe_paired(arm, ref) == pytest.approx(expected, abs=1e-4)
    est = paired_effect([(arm, ref)], share=True)
    assert est.estimate == pytest.approx((only_arm - only_ref) / sum(table))


def test_an_unpaired_share_difference_is_newcombes_method_10():
    # Newcombe (1998) Stat Med 17:873, table II (a): 56/70 - 48/80
    assert newcombe_unpaired(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    all_or_none = unpaired_effect([np.ones(5)], [np.zeros(5)], share=True)
    assert all_or_none.method == "unpaired, Newcombe share difference within one run"
    assert (all_or_none.ci_low, all_or_none.ci_high) == pytest.approx((0.3855, 1.0), abs=1e-4)
    nobody = unpaired_effect([np.zeros(40)], [np.zeros(40)], share=True)
    assert (nobody.ci_low, nobody.ci_high) == pytest.approx((-0.0876, 0.0876), abs=1e-4)


def test_a_paired_effect_reads_the_one_seed_that_has_answers():
    """The first seed's arrays are empty (nobody in the subgroup answered there)."""
    arm, ref = np.array([2.0, 3.0, 4.0, 3.0]), np.array([1.0, 1.0, 3.0, 1.0])
    empty = np.array([])
    est = paired_effect([(empty, empty), (arm, ref)])
    assert est.estimate == pytest.approx(1.5) and est.n_seeds == 1 and est.n_agents == 4
    # scipy.stats.ttest_rel(arm, ref).confidence_interval()
    assert (est.ci_low, est.ci_high) == pytest.approx((0.5813, 2.4187), abs=1e-4)
    share = paired_effect(
        [(empty, empty), (np.array([1.0, 1, 0, 1]), np.array([0.0, 1, 0, 0]))], True
    )
    assert share.estimate == pytest.approx(0.5) and math.isfinite(share.ci_low)


def test_one_replicated_arm_against_one_run_is_a_pooled_t_over_seeds():
    arm = [np.full(6, mean) for mean in (2.0, 6.0, 10.0)]
    est = unpaired_effect(arm, [np.full(6, 3.0)])
    # scipy.stats.ttest_ind([2, 6, 10], [3], equal_var=True).confidence_interval()
    assert (est.ci_low, est.ci_high) == pytest.approx((-16.8731, 22.8731), abs=1e-4)
    assert est.method == "unpaired, pooled t over seeds (df=2): one arm has 1 seed"
    assert est.n_seeds == 1


def test_paired_effect_over_seeds_is_a_t_interval_of_the_seed_means():
    ref = np.zeros(5)
    per_seed = [(ref + d, ref) for d in (1.0, 2.0, 3.0)]
    est = paired_effect(per_seed)
    half = t95(2) * 1.0 / math.sqrt(3)  # sd of 1, 2, 3 is 1
    assert est.estimate == pytest.approx(2.0)
    assert (est.ci_low, est.ci_high) == (pytest.approx(2 - half), pytest.approx(2 + half))
    assert est.n_agents == 5 and est.n_seeds == 3
    # the same agents with different noise: pairing removes what they share
    rng = np.random.default_rng(1)
    base = rng.normal(0, 10, 200)
    paired = paired_effect([(base + 1 + rng.normal(0, 0.1, 200), base)])
    unpaired = unpaired_effect([base + 1 + rng.normal(0, 0.1, 200)], [base])
    assert paired.ci_high - paired.ci_low < (unpaired.ci_high - unpaired.ci_low) / 10
    assert paired.ci_low < 1 < paired.ci_high


def test_share_differences_stay_in_range_near_zero():
    arm = np.zeros(30)
    arm[0] = 1
    ref = np.zeros(30)
    lo, hi = newcombe_paired(arm, ref)
    assert -1.0 <= lo < 1 / 30 < hi <= 1.0
    est = paired_effect([(arm, ref)], share=True)
    assert "Newcombe" in est.method and est.estimate == pytest.approx(1 / 30)
    assert "t over agents" in paired_effect([(arm, ref)]).method  # 0/1 values, no share
    lo, hi = newcombe_paired(np.ones(10), np.zeros(10))
    assert 0 < lo <= 1.0 and hi == 1.0


def test_welch_equal_samples_and_known_difference():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    m, lo, hi, df = welch(a, a)
    assert m == 0.0 and lo == pytest.approx(-hi) and df == pytest.approx(6.0)
    m, lo, hi, _ = welch(a + 10, a)
    assert m == 10.0 and lo < 10 < hi


# ---------------------------------------------------------------- effects from runs
AGENTS = 12
LOW = {0, 3, 4, 7, 9}  # baseline income < 2000


SURVEY = {"id": "s", "day": 0, "hour": 1, "questions": [
    {"id": "life", "kind": "likert", "scale": 5, "text": "How satisfied are you?"},
    {"id": "vote", "kind": "choice", "options": ["yes", "no"], "text": "Would you vote?"},
]}  # fmt: skip


def _write_run(
    folder: Path,
    arm: str,
    seed: int,
    noise: np.ndarray,
    surveyed: bool = False,
    when: str | None = None,
) -> None:
    """A run folder with the tables the effects read: treatment adds 1 to the mood of the
    low earners from tick 2 on; everything else equals the control. `surveyed`: every agent
    answers 1 of 5 to SURVEY's likert question, the low earners "yes" to its vote, the rest
    "no"."""
    config = {
        "name": f"lab-{arm}",
        "seed": seed,
        "ticks": 4,
        "agents": {"count": AGENTS},
        "outcomes": {"record": [{"name": "mood"}, {"name": "happy"}]},
        "analysis": {"primary": "mood", "subgroups": {"low_earners": "income < 2000"}},
    }
    if surveyed:
        config["surveys"] = [SURVEY]
    if when is not None:  # a recurring transfer to whoever meets `when` at the time
        config["interventions"] = [{"tick": 2, "every": 1, "kind": "policy", "when": when}]
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    writer = ResultsWriter(folder, 0, flush_every=100)
    for i in range(AGENTS) if surveyed else ():
        writer.add("surveys", (2, 0, "01:00", "s", i, "life", "1", 1.0, "first_try", None))
        vote = 0.0 if i in LOW else 1.0
        writer.add("surveys", (2, 0, "01:00", "s", i, "vote", "yes", vote, "first_try", None))
    for tick in range(4):
        for i in range(AGENTS):
            if tick == 0:
                income = 1500.0 if i in LOW else 3000.0
                writer.add("baseline", (0, i, "income", income, ""))
                writer.add("baseline", (0, i, "occupation", None, "clerk"))
            lift = 1.0 if (arm == "treatment" and i in LOW and tick >= 2) else 0.0
            mood = float(noise[i]) + lift
            writer.add("outcomes", (tick, i, "mood", mood))
            writer.add("outcomes", (tick, i, "happy", float(mood > 0.5)))
            row = (tick, i, "home", "home", "idle", "idle", "none", 0.0, 0.0, 0.0, 0.0, 0.0,
                   0.0, False, "")  # fmt: skip
            writer.add("agent_state", row)
        if arm == "treatment" and tick == 2:
            for i in sorted(LOW):
                writer.add("treated", (2, i, 0, "policy"))
        if arm == "treatment" and tick == 3 and when is not None:
            for i in sorted(LOW | {1}):  # agent 1 meets `when` only after the treatment began
                writer.add("treated", (3, i, 0, "policy"))
        writer.end_tick(tick)
    writer.flush(3)


def _effects(tmp_path: Path, seeds: list[int]) -> tuple[dict, Path]:
    root = tmp_path / "D"
    for seed in seeds:
        noise = np.random.default_rng(seed).uniform(0, 0.5, AGENTS)
        for arm in ("control", "treatment"):
            _write_run(root / f"seed-{seed}" / arm, arm, seed, noise)
    write_report(root)
    with (root / "effects.csv").open() as f:
        rows = list(csv.DictReader(f))
    return {(r["outcome"], r["subgroup"]): r for r in rows}, root


def test_effects_csv_pairs_arms_per_agent_and_over_seeds(tmp_path):
    rows, root = _effects(tmp_path, [0, 1])
    low = rows[("mood", "low_earners")]
    assert (low["arm"], low["reference_arm"]) == ("treatment", "control")
    assert float(low["estimate"]) == pytest.approx(1.0)
    assert low["ci_low"] == low["ci_high"] == "" and "no interval" in low["method"]  # no noise
    assert low["n_agents"] == str(len(LOW)) and low["n_seeds"] == "2"
    assert "paired" in low["method"] and "t over seeds (df=1)" in low["method"]
    assert low["role"] == "primary" and rows[("happy", "all")]["role"] == "secondary"
    every = rows[("mood", "all")]
    assert float(every["estimate"]) == pytest.approx(len(LOW) / AGENTS)
    assert rows[("mood", "treated")]["estimate"] == low["estimate"]
    happy = rows[("happy", "low_earners")]
    assert 0.0 <= float(happy["estimate"]) <= 1.0
    html = (root / "report.html").read_text()
    assert '<section id="effects"' in html and "degree(s) of freedom" in html
    assert "Primary outcome: mood" in html


def test_one_seed_says_the_interval_is_within_one_run(tmp_path):
    rows, root = _effects(tmp_path, [3])
    every = rows[("mood", "all")]
    assert every["n_seeds"] == "1" and "within one run" in every["method"]
    assert float(every["ci_low"]) < float(every["estimate"]) < float(every["ci_high"])
    html = (root / "report.html").read_text()
    assert "not a replication" in html and "no spread to estimate one from" in html


def test_the_treated_subgroup_is_fixed_before_treatment(tmp_path):
    from societas.cluster.report.data import RunData
    from societas.cluster.report.effects import subgroups

    noise = np.random.default_rng(3).uniform(0, 0.5, AGENTS)
    _write_run(tmp_path / "when", "treatment", 3, noise, when="income < 2000")
    assert subgroups(RunData(tmp_path / "when"))["treated"] == LOW  # not agent 1, reached later
    _write_run(tmp_path / "fixed", "treatment", 3, noise)
    config = json.loads((tmp_path / "fixed" / "config.json").read_text())
    config["interventions"] = [{"tick": 2, "kind": "policy", "select": {"fraction": 0.5}}]
    (tmp_path / "fixed" / "config.json").write_text(json.dumps(config))
    assert subgroups(RunData(tmp_path / "fixed"))["treated"] == LOW


def test_effects_and_outcome_charts_load_in_chromium(tmp_path):
    from tests.report.browser import check_page

    _, root = _effects(tmp_path, [0, 1])
    seen = check_page(root / "report.html", tmp_path / "effects.png")
    assert seen.console_errors == [] and seen.external_requests == []
    assert "effects" in seen.sections and "findings" in seen.sections
    assert seen.charts >= 2 and seen.drawn == seen.charts
    html = (root / "report.html").read_text()
    assert 'id="finding-outcome_mood"' in html and "Primary outcome: mood" in html


def test_a_share_over_three_seeds_stays_in_the_unit_interval():
    from societas.cluster.report.stats import Band, over_seeds, within_unit

    ticks = np.arange(2)
    bands = [
        Band(ticks, np.array([0.0, s]), np.zeros(2), np.zeros(2), np.full(2, 20.0), "agents")
        for s in (0.0, 0.0, 0.1)
    ]
    raw = over_seeds(bands)
    assert raw.lo[1] < 0  # a t interval over 3 seeds' shares reaches below 0 ...
    band = within_unit(raw)
    assert band.lo[1] == 0.0 and 0.0 < band.hi[1] <= 1.0  # ... the share's does not
    assert band.mean[1] == pytest.approx(0.1 / 3)


def test_arms_without_a_shared_seed_are_compared_unpaired(tmp_path):
    root = tmp_path / "D"
    for arm, seed in (("control", 0), ("treatment", 5)):
        noise = np.random.default_rng(seed).uniform(0, 0.5, AGENTS)
        _write_run(root / arm, arm, seed, noise)
    write_report(root)
    with (root / "effects.csv").open() as f:
        rows = {(r["outcome"], r["subgroup"]): r for r in csv.DictReader(f)}
    every = rows[("mood", "all")]
    assert every["method"].startswith("unpaired, Welch t over agents")
    assert float(every["ci_low"]) < float(every["estimate"]) < float(every["ci_high"])
    assert "do not share seed and population" in (root / "report.html").read_text()


def test_a_likert_point_of_1_is_a_mean_and_a_choice_a_share(tmp_path):
    """A share by the outcome's kind, not by its values: every agent answering the likert
    point 1 is no proportion of 1."""
    root = tmp_path / "D"
    noise = np.random.default_rng(3).uniform(0, 0.5, AGENTS)
    for arm in ("control", "treatment"):
        _write_run(root / arm, arm, 3, noise, surveyed=True)
    write_report(root)
    with (root / "effects.csv").open() as f:
        rows = {(r["outcome"], r["subgroup"]): r for r in csv.DictReader(f)}
    life = rows[("s.life", "all")]
    assert life["method"].startswith("paired, t over agents within one run (df=11); no "), life
    assert float(life["estimate"]) == 0.0 and life["ci_low"] == life["ci_high"] == ""
    vote = rows[("s.vote = yes", "all")]
    assert "Newcombe" in vote["method"] and float(vote["estimate"]) == 0.0
    assert "Newcombe" in rows[("happy", "all")]["method"]  # a recorded 0/1 outcome
    assert "t over agents" in rows[("mood", "all")]["method"]
