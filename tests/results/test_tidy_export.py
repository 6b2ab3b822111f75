"""`societas export FOLDER --tidy`: one long table across arms and seeds, its profiles and
methods.json, in Parquet, CSV and DuckDB; the SCHEMAS.md examples run on it (DuckDB equals
pandas, and both find the constructed effect)."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pytest
from typer.testing import CliRunner

from societas.cluster.cli import app
from societas.cluster.report.examples import TIDY_EXAMPLES

from .test_effects import AGENTS, LOW, _write_run

COLUMNS = ["arm", "seed", "agent_id", "tick", "variable", "value", "source"]


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "D"
    for seed in (0, 1):
        noise = np.random.default_rng(seed).uniform(0, 0.5, AGENTS)
        for arm in ("control", "treatment"):
            _write_run(root / f"seed-{seed}" / arm, arm, seed, noise)
    return root


@pytest.mark.parametrize("fmt", ["parquet", "csv", "duckdb"])
def test_tidy_export_has_every_arm_and_seed(folder, tmp_path, fmt):
    out = tmp_path / f"T.{fmt}"
    res = CliRunner().invoke(app, ["export", str(folder), "--tidy", "--format", fmt,
                                   "--out", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    con = duckdb.connect()
    if fmt == "duckdb":
        con.execute(f"ATTACH '{out}' AS t (READ_ONLY)")
        source = "t.tidy"
    else:
        source = f"'{out}'"
    names = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
    assert names == COLUMNS
    got = con.execute(
        f"SELECT arm, seed, count(*) FROM {source} WHERE variable = 'mood' GROUP BY ALL "
        "ORDER BY ALL"
    ).fetchall()
    assert got == [(a, s, AGENTS * 4) for a in ("control", "treatment") for s in (0, 1)]
    methods = json.loads(out.with_name("T.methods.json").read_text())
    assert methods["seeds"] == [0, 1] and methods["arms"] == ["control", "treatment"]
    assert methods["prompt_templates_sha256"] and "societas_version" in methods
    assert methods["analysis"]["primary"] == "mood"


def test_tidy_examples_agree_and_find_the_effect(folder, tmp_path):
    out = tmp_path / "T.parquet"
    res = CliRunner().invoke(app, ["export", str(folder), "--tidy", "--format", "parquet",
                                   "--out", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    ex = TIDY_EXAMPLES[0]
    duck = duckdb.connect().execute(ex.sql.replace("TIDY", f"'{out}'")).fetchall()
    scope: dict = {"TIDY": str(out)}
    exec(ex.pandas, scope)
    frame = scope["result"]
    assert [s for s, _, _ in duck] == [0, 1]
    for seed, effect, agents in duck:
        assert agents == AGENTS
        assert effect == pytest.approx(len(LOW) / AGENTS)  # +1 for the low earners
        assert frame.loc[seed] == pytest.approx(effect)


def test_tidy_export_of_a_folder_without_runs_is_one_clear_line(tmp_path):
    res = CliRunner().invoke(app, ["export", str(tmp_path), "--tidy", "--format", "csv"])
    assert res.exit_code == 2 and "holds no run" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["export", str(tmp_path), "--tidy", "--format", "xlsx"])
    assert res.exit_code == 2 and "--format" in res.output
