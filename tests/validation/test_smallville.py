"""A small smallville run on the rules policy writes the Generative Agents metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from societas.cluster.validation.records import Report

FIVE = {
    "candidacy_aware_end",
    "party_aware_end",
    "party_attendance_invited",
    "density_start",
    "density_end",
    "hallucination_share",
}


def test_metrics_have_published_value_source_and_interval(
    small_smallville: tuple[Path, dict[str, Any]],
) -> None:
    _, data = small_smallville
    Report.model_validate(data)
    assert data["rules_policy"] and data["caveat"]
    assert data["seeds"] == [0, 1]
    by_name = {m["name"]: m for m in data["metrics"]}
    assert set(by_name) >= FIVE
    for name, m in by_name.items():
        assert isinstance(m["published"], float), name
        assert "Park et al. 2023" in m["source"], name
        assert m["provider"] == "rules" and "not a language model" in m["model"]
        if name == "hallucination_share":
            assert m["ours_mean"] is None and "not applicable under the rules" in m["note"]
            continue
        mean, (low, high) = m["ours_mean"], m["ours_ci"]
        assert m["n_seeds"] == 2 and len(m["per_seed"]) == 2, name
        assert 0.0 <= mean <= 1.0, name
        assert low is not None and high is not None, name
        assert 0.0 <= low <= mean <= high <= 1.0, name


def test_seeding_and_start_density_are_the_papers_start(
    small_smallville: tuple[Path, dict[str, Any]],
) -> None:
    _, data = small_smallville
    by_name = {m["name"]: m for m in data["metrics"]}
    assert by_name["candidacy_aware_start"]["per_seed"] == [0.04, 0.04]
    assert by_name["party_aware_start"]["per_seed"] == [0.04, 0.04]
    assert abs(by_name["density_start"]["ours_mean"] - 35 / 300) < 1e-9  # the relations file
    assert by_name["density_end"]["ours_mean"] >= by_name["density_start"]["ours_mean"]


def test_runs_are_kept_per_seed(small_smallville: tuple[Path, dict[str, Any]]) -> None:
    out, data = small_smallville
    assert data["runs"] == ["runs/town/seed-0", "runs/town/seed-1"]
    assert all((out / r / "results" / "knowledge").exists() for r in data["runs"])
