"""The polarization and hurricane suites at a small size, and the interview check's rule."""

from __future__ import annotations

from pathlib import Path

from societas.cluster.validation import validate
from societas.cluster.validation.hallucination import invented, share_invented


def test_polarization_measures_three_conditions(tmp_path: Path) -> None:
    report = validate("polarization", tmp_path, seeds=[0, 1], agents=24, hours=3)
    by_name = {m.name: m for m in report.metrics}
    shares = ("more_polarized", "more_moderate", "flipped", "unchanged")
    conditions = ("control", "echo_chamber", "opposing")
    assert set(by_name) == {f"{c}_{s}" for c in conditions for s in shares}
    assert by_name["echo_chamber_more_polarized"].published == 0.52
    for c in conditions:
        total = sum(by_name[f"{c}_{s}"].per_seed[0] or 0.0 for s in shares)
        assert abs(total - 1.0) < 1e-9, c  # every agent falls in exactly one category
    for m in report.metrics:
        assert "Piao et al. 2025" in m.source and m.n_seeds == 2
        low, high = m.ours_ci
        assert m.ours_mean is not None
        if len(set(m.per_seed)) == 1:  # the seeds agree: no spread, no interval
            assert low is None and high is None
            continue
        assert low is not None and high is not None
        assert 0.0 <= low <= m.ours_mean <= high <= 1.0
    assert (tmp_path / "inputs" / "opposing" / "seed-1" / "edges.csv").exists()
    for condition in ("control", "echo_chamber", "opposing"):
        profiles = tmp_path / "inputs" / condition / "seed-0" / "profiles.csv"
        starts = {line.split(",")[1] for line in profiles.read_text().splitlines()[1:]}
        assert starts == {"3.0", "7.0"}, condition  # the paper's start, half each


def test_hurricane_measures_phases_against_the_first_day(tmp_path: Path) -> None:
    report = validate("hurricane", tmp_path, seeds=[0, 1], agents=12)
    by_name = {m.name: m for m in report.metrics}
    assert list(by_name) == [
        "activity_before_landfall",
        "activity_at_landfall",
        "visits_at_landfall_real",
        "visits_after_real",
    ]
    for m in report.metrics:
        assert m.ours_mean is not None and m.ours_mean >= 0.0
        low, high = m.ours_ci
        if len(set(m.per_seed)) == 1:  # the seeds agree: no spread, no interval
            assert low is None and high is None
            continue
        assert low is not None and high is not None and 0.0 <= low <= m.ours_mean <= high
    assert by_name["visits_at_landfall_real"].per_seed == by_name["activity_at_landfall"].per_seed
    assert by_name["activity_before_landfall"].published_range == [0.7, 0.9]
    assert "SafeGraph" in by_name["visits_after_real"].source
    assert report.unpublished == []


def test_interview_check_flags_names_that_do_not_exist() -> None:
    known = {"Sam", "Moore", "Isabella", "Rodriguez", "Hobbs", "Cafe"}
    assert invented("Sam Moore is running for mayor.", known) == []
    assert invented("I think Emily Carter hosts it at Hobbs Cafe.", known) == ["Emily", "Carter"]
    assert invented("Yes. Isabella Rodriguez, at Hobbs Cafe.", known) == []
    assert share_invented(["Sam Moore.", "Ask Bob Lee."], known) == (0.5, "1/2")
    assert share_invented([" ", ""], known) == (None, "0/0")
