"""The agent view (report pages, `--agent`, and `inspect`'s code path), confidence bands over
agents and over seeds, `run --seeds` replicates, and clear errors for bad input."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from societas.cluster.cli import app
from societas.cluster.report import ReportInputError, RunData, agent_view
from societas.cluster.report.stats import (
    Band,
    agent_band,
    difference,
    newcombe_unpaired,
    over_seeds,
    share_band,
    t95,
    wilson,
)

from .conftest import CONFIGS


def test_agent_view_has_memories_reflections_with_evidence_and_conversations(hurricane):
    run = RunData(hurricane)
    talker = int(run.scalar("SELECT speaker FROM dialogues ORDER BY tick, speaker LIMIT 1"))
    view = agent_view(run, talker)
    assert view.profile["occupation"] and view.timeline["tick"] == list(range(run.ticks))
    assert view.checkpoint_tick == run.ticks  # the run's final checkpoint
    assert view.memories and all(0.0 <= m["importance"] <= 1.0 for m in view.memories)
    assert any(c["speaker"] == talker for c in view.conversations)
    assert all(talker in (c["speaker"], c["listener"]) for c in view.conversations)
    reflective = run.rows("SELECT agent_id FROM reflections GROUP BY 1 ORDER BY count(*) DESC")
    if reflective:  # reflections carry their evidence, resolved to stored memory texts
        view = agent_view(run, int(reflective[0][0]))
        assert view.reflections
        texts = [e["text"] for r in view.reflections for e in r["evidence_texts"]]
        assert texts and all(not t.startswith("(not in") for t in texts)


def test_report_agent_page_and_bad_agent_id(hurricane):
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(hurricane), "--agent", "3"])
    assert res.exit_code == 0, res.output
    page = (hurricane / "agent-3.html").read_text()
    assert 'id="agent-3"' in page and "Memories" in page and "Relationships" in page
    res = runner.invoke(app, ["report", str(hurricane), "--agent", "999"])
    assert res.exit_code == 2 and "--agent: 999" in res.output and "Traceback" not in res.output
    with pytest.raises(ReportInputError, match="--agent: -1"):
        agent_view(hurricane, -1)


def test_a_folder_of_arms_is_compared_with_surveys(hurricane, hurricane_control, tmp_path):
    arms = tmp_path / "arms"
    shutil.copytree(hurricane, arms / "warned", ignore=shutil.ignore_patterns("checkpoints"))
    shutil.copytree(hurricane_control, arms / "no-warning",
                    ignore=shutil.ignore_patterns("checkpoints"))  # fmt: skip
    parts = sorted((arms / "warned" / "results" / "surveys").glob("*/*.parquet"))
    for part in parts[:1]:  # five agents' answers fell back: no data
        table = pq.read_table(part).to_pylist()
        for r in [r for r in table if r["question_id"] == "safe"][:5]:
            r.update(value=None, answer_text="(no answer)", answer_source="fallback")
        pq.write_table(pa.Table.from_pylist(table, schema=pq.read_schema(part)), part)
    res = CliRunner().invoke(app, ["report", str(arms)])
    assert res.exit_code == 0, res.output
    summary = json.loads((arms / "summary.json").read_text())
    assert summary["arms"] == ["no-warning", "warned"]
    rows = {r["series"] for r in summary["findings"]["evacuation"]}
    assert "difference: warned − no-warning (all agents)" in rows
    answers = {(r["arm"], r["question"].split(" (")[0]): r for r in summary["surveys"]}
    assert set(answers) == {("no-warning", "afternoon · safe"), ("warned", "afternoon · safe")}
    assert all(1 <= r["mean"] <= 5 and r["asked"] == 40 for r in answers.values())
    counted = {arm: (r["n"], r["no_answer"]) for (arm, _), r in answers.items()}
    assert counted == {"no-warning": (40, 0), "warned": (35, 5)}  # non-response, per arm
    html = (arms / "report.html").read_text()
    assert "Answered in surveys" in html and "What differs between the arms" in html
    assert "n=35 of 40 asked, 5 without answer" in html


def test_report_of_a_folder_that_is_not_a_run(tmp_path):
    res = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "holds no run" in res.output


def test_agent_band_is_the_mean_with_a_t_interval_over_agents(hurricane):
    run = RunData(hurricane)
    band = agent_band(run, "currency")
    state = pq.ParquetDataset(hurricane / "results" / "agent_state").read()
    tick = state.column("tick").to_numpy()
    money = state.column("currency").to_numpy()
    for t in (0, run.ticks // 2, run.ticks - 1):
        v = money[tick == t]
        half = t95(v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
        assert band.mean[t] == pytest.approx(v.mean())
        assert band.hi[t] - band.mean[t] == pytest.approx(half)
        assert band.n[t] == v.size


def test_a_share_of_agents_has_wilson_intervals_and_one_agent_no_mean_interval(hurricane):
    run = RunData(hurricane)
    state = pq.ParquetDataset(hurricane / "results" / "agent_state").read()
    tick = state.column("tick").to_numpy()
    shelter = np.array([k == "shelter" for k in state.column("place_kind").to_pylist()])
    band = share_band(run, "place_kind = 'shelter'")
    assert band.share and shelter.any()
    for t in (0, int(tick[shelter].min()), run.ticks - 1):
        at = shelter[tick == t]
        assert band.mean[t] == pytest.approx(at.mean())
        assert (band.lo[t], band.hi[t]) == pytest.approx(wilson(at.sum(), at.size))
    one = agent_band(run, "currency", where="agent_id = 0")
    assert np.isfinite(one.mean).all() and np.isnan(one.lo).all() and np.isnan(one.hi).all()


def test_a_difference_of_two_shares_within_one_run_is_newcombes():
    ticks = np.arange(1)
    arm = Band(ticks, np.array([0.02]), np.zeros(1), np.ones(1), np.array([50.0]), "agents", True)
    ref = Band(ticks, np.array([0.0]), np.zeros(1), np.ones(1), np.array([50.0]), "agents", True)
    d = difference(ref, arm)
    assert d.mean[0] == pytest.approx(0.02)
    # statsmodels confint_proportions_2indep(1, 50, 0, 50, method="newcomb")
    assert (d.lo[0], d.hi[0]) == pytest.approx((-0.0532, 0.1050), abs=1e-4)
    assert (d.lo[0], d.hi[0]) == pytest.approx(newcombe_unpaired(1, 50, 0, 50))


def _band(values: list[float]) -> Band:
    x = np.array(values, dtype=float)
    return Band(np.arange(x.size), x, x, x, np.ones(x.size), "agents")


def test_bands_over_seeds_and_differences():
    seeds = [_band([0.0, 0.2]), _band([0.0, 0.4]), _band([0.0, 0.6])]
    b = over_seeds(seeds)
    assert b.over == "seeds" and b.mean[1] == pytest.approx(0.4)
    half = t95(2) * 0.2 / np.sqrt(3)  # sd of 0.2, 0.4, 0.6 is 0.2
    assert b.hi[1] - b.mean[1] == pytest.approx(half)
    d = difference(b, over_seeds([_band([0.0, 0.5])] * 3))
    assert d.mean[1] == pytest.approx(0.1)
    assert d.hi[1] - d.mean[1] == pytest.approx(half)  # the other arm has no spread


def test_run_seeds_writes_replicates_and_the_report_bands_them(tmp_path):
    out = tmp_path / "reps"
    runner = CliRunner()
    args = ["run", str(CONFIGS / "town.yaml"), "--local", "--agents", "12", "--ticks", "6"]
    res = runner.invoke(app, [*args, "--seeds", "0,1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["experiment.json", "seed-0", "seed-1"]
    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["card"][0]["seed"] == "0, 1" and summary["card"][0]["replicates"] == 2
    rows = summary["findings"]["needs"]
    assert rows and all(r["interval_over"] == "seeds" for r in rows)
    assert "95% intervals over replicate runs" in (out / "report.html").read_text()
    res = runner.invoke(app, [*args, "--seeds", "0,x"])
    assert res.exit_code == 2 and "--seeds" in res.output


def test_a_difference_of_bands_of_different_lengths_covers_the_shorter():
    short, long = _band([0.0, 0.2]), _band([0.1, 0.3, 0.5])
    d = difference(short, long)
    assert d.mean == pytest.approx([0.1, 0.1]) and d.n.tolist() == [1.0, 1.0]
    shares = [Band(np.arange(k), np.full(k, 0.5), np.zeros(k), np.ones(k), np.full(k, 20.0),
                   "agents", True) for k in (2, 3)]  # fmt: skip
    assert difference(shares[0], shares[1]).mean.tolist() == [0.0, 0.0]
