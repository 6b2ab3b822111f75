"""A small smallville run on the rules policy writes the Generative Agents metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from societas.cluster.validation.records import Report, load_suite_data
from societas.cluster.validation.runner import SUITES

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
        if len(set(m["per_seed"])) == 1:  # the seeds agree: no spread, no interval
            assert low is None and high is None, name
            continue
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


def test_invitations_are_recorded_and_make_the_invited(
    small_smallville: tuple[Path, dict[str, Any]],
) -> None:
    out, data = small_smallville
    by_name = {m["name"]: m for m in data["metrics"]}
    attendance = by_name["party_attendance_invited"]
    assert "invitations.csv" in attendance["note"]
    details = attendance["note"].split("per seed: ")[1].split(", ")
    for run, detail in zip(data["runs"], details, strict=True):
        lines = (out / run / "invitations.csv").read_text(encoding="utf-8").splitlines()
        assert lines[0] == "tick,inviter,invitee"
        rows = [tuple(int(x) for x in line.split(",")) for line in lines[1:]]
        knew = {0: -1}  # the host knows from tick 0; an inviter must know before inviting
        for tick, inviter, invitee in rows:
            assert inviter in knew and knew[inviter] <= tick, (run, tick, inviter)
            knew.setdefault(invitee, tick)
        invitees = {b for _, _, b in rows}
        assert len(invitees) == len(rows) and 0 not in invitees  # each invitee's first
        if not rows:
            assert detail.startswith("-"), detail
            continue
        assert detail.split(" ")[0].split("/")[1] == str(len(invitees))
        assert f"(by the host {sum(1 for _, a, _ in rows if a == 0)})" in detail


def test_every_published_value_says_where_it_was_checked() -> None:
    for suite in SUITES:
        data = load_suite_data(suite)
        assert data.sources and data.protocol, suite
        for value in data.values:
            source = data.source(value)
            assert "§" in source or "figure" in source, (suite, value.name)
            assert "Checked: " in source and value.verified, (suite, value.name)
            assert (
                "verified" in value.verified
                or "not verifiable" in value.verified
                or ("digitized" in value.verified or "read from" in value.verified)
            ), (suite, value.name)
