"""The tidy export's R example (SCHEMAS.md) runs in a real R and agrees with DuckDB."""

from __future__ import annotations

import csv
import subprocess

import duckdb
import pytest
from typer.testing import CliRunner

from societas.cluster.cli import app
from societas.cluster.report.examples import TIDY_EXAMPLES, TIDY_R
from tests.debian import debian_binary

from .test_tidy_export import folder  # noqa: F401  (the two-seed, two-arm run folder)


def test_the_r_example_finds_the_same_paired_effect_as_duckdb(folder, tmp_path):  # noqa: F811
    rscript = debian_binary("r-base-core", "Rscript")
    csv_out = tmp_path / "T.csv"
    res = CliRunner().invoke(
        app, ["export", str(folder), "--tidy", "--format", "csv", "--out", str(csv_out)]
    )
    assert res.exit_code == 0, res.output
    parquet = tmp_path / "T.parquet"
    res = CliRunner().invoke(
        app, ["export", str(folder), "--tidy", "--format", "parquet", "--out", str(parquet)]
    )
    assert res.exit_code == 0, res.output
    r_out = tmp_path / "effect.csv"
    code = TIDY_R.replace("TIDY_CSV", f'"{csv_out}"')
    code += f'\nwrite.csv(result, "{r_out}", row.names = FALSE)\n'
    done = subprocess.run(
        [rscript, "-e", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with r_out.open() as f:
        from_r = {int(row["seed"]): float(row["effect"]) for row in csv.DictReader(f)}
    sql = TIDY_EXAMPLES[0].sql.replace("TIDY", f"'{parquet}'")
    from_duckdb = {seed: effect for seed, effect, _ in duckdb.connect().execute(sql).fetchall()}
    assert set(from_r) == {0, 1}
    assert from_r == pytest.approx(from_duckdb)
