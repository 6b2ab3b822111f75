"""The HTML report in real headless Chromium: every section, every chart drawn, no console
error, no request to any host (Chromium's proxy refuses all), labels inside their charts;
a screenshot of the first screen is kept in tests/artifacts/ for a person to look at."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from typer.testing import CliRunner

from societas.cluster.cli import app

from .browser import check_page
from .conftest import ARTIFACTS

SECTIONS = ["run-card", "interventions", "findings", "network", "conversations", "agents"]
COMPARED = [*SECTIONS[:2], "effects", *SECTIONS[2:]]  # arms compared: the effects table


class _Links(HTMLParser):
    """Every src/href the page would load or link."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [v or "" for k, v in attrs if k in ("src", "href")]


def _external(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    return [u for u in parser.urls if u.startswith(("http:", "https:", "//"))]


def _assert_page_is_sound(html_path, shot_name, sections=SECTIONS):
    html = html_path.read_text()
    for section in sections:
        assert f'<section id="{section}"' in html, section
    assert _external(html) == []
    assert html.count("<script") - html.count("Plotly.newPlot") <= 2  # plotly.js once + toggle
    assert html_path.stat().st_size < 20e6
    seen = check_page(html_path, ARTIFACTS / shot_name)
    assert seen.console_errors == []
    assert seen.external_requests == [], seen.external_requests
    assert seen.sections == sections
    assert seen.charts >= 8 and seen.drawn == seen.charts, (seen.charts, seen.drawn)
    assert seen.clipped_labels == [], seen.clipped_labels
    assert (ARTIFACTS / shot_name).stat().st_size > 20_000
    return html, seen


def test_run_report_loads_offline_with_every_chart(hurricane):
    res = CliRunner().invoke(app, ["report", str(hurricane)])
    assert res.exit_code == 0, res.output
    html, _ = _assert_page_is_sound(hurricane / "report.html", "report-hurricane.png")
    assert "not a language model" in html  # the rules-policy caveat is on the page
    for words in ("Evacuation by age group", "Social network", "Who talked to whom",
                  "Hurricane warning from the mayor"):  # fmt: skip
        assert words in html, words
    summary = json.loads((hurricane / "summary.json").read_text())
    evac = {r["series"]: r for r in summary["findings"]["evacuation"]}
    assert evac["all agents"]["peak"] == 1.0  # everyone is at a shelter at landfall
    assert evac["high trust"]["peak_at"] == evac["all agents"]["peak_at"]
    assert summary["sampled_agents"] and all(f'id="agent-{a}"' in html
                                             for a in summary["sampled_agents"])  # fmt: skip


def test_two_runs_compared_on_the_same_axes(hurricane, hurricane_control, tmp_path):
    out = tmp_path / "compare.html"
    res = CliRunner().invoke(
        app, ["report", str(hurricane), str(hurricane_control), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    html, _ = _assert_page_is_sound(out, "report-compare.png", COMPARED)
    summary = json.loads(out.with_suffix(".summary.json").read_text())
    rows = {r["series"]: r for r in summary["findings"]["evacuation"]}
    diff = rows["difference: no-warning − warned (all agents)"]
    # between the warning and landfall the warned town evacuates and the unwarned one does
    # not: the difference is negative and its whole interval below zero there
    assert diff["low"] < -0.2 and diff["low_hi"] < 0, diff
    assert diff["low_at"].startswith("day 0")
    assert rows["warned · all agents"]["peak"] == rows["no-warning · all agents"]["peak"] == 1.0
    assert "warned" in html and "no-warning" in html


def test_a_setting_compared_between_arms_reads_as_words() -> None:
    """An arm with no interventions reads 'none' beside the other's count, not '[]'."""
    from societas.cluster.report.card import _flat

    flat = _flat({"interventions": [], "treated": [{"tick": 4}], "seeds": [1, 2]})
    assert flat == {
        "interventions": "none",
        "treated": "1 item(s), see the tables",
        "seeds": "[1, 2]",
    }
