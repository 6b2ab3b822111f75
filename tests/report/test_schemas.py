"""The results' documented schemas: every Parquet file of a run read by DuckDB with them,
every column documented, SCHEMAS.md in step with the code, the examples of that page run
(DuckDB and pandas agree), and `societas export` to CSV and DuckDB."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from societas.cluster.cli import app
from societas.cluster.report import write_report
from societas.cluster.report.examples import EXAMPLES, markdown_page
from societas.cluster.report.schemas import SCHEMAS_FILE, all_docs, duckdb_type

PAGE = Path(__file__).resolve().parents[2] / "cluster" / "report" / "SCHEMAS.md"


@pytest.fixture(scope="module")
def reported(hurricane) -> Path:
    """The hurricane run after `write_report` (profiles + schemas.json beside the results)."""
    write_report(hurricane)
    return hurricane


def test_every_parquet_file_reads_with_its_documented_schema(reported):
    schemas = json.loads((reported / "results" / SCHEMAS_FILE).read_text())["tables"]
    files = sorted((reported / "results").glob("*/**/*.parquet"))
    tables = {f.relative_to(reported / "results").parts[0] for f in files}
    assert {"agent_state", "needs", "dialogues", "llm", "profiles"} <= tables
    assert tables <= set(schemas), tables - set(schemas)
    con = duckdb.connect()
    for f in files:
        doc = schemas[f.relative_to(reported / "results").parts[0]]
        columns = {c["name"]: duckdb_type(c["type"]) for c in doc["columns"]}
        # DuckDB reads every documented column as its documented type ...
        typed = ", ".join(f'CAST("{n}" AS {t}) AS "{n}"' for n, t in columns.items())
        got = con.execute(f"DESCRIBE SELECT {typed} FROM read_parquet('{f}')").fetchall()
        assert [(r[0], r[1]) for r in got] == list(columns.items()), f
        # ... and the file holds exactly those columns with those types, nothing else
        described = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{f}')").fetchall()
        assert [(r[0], r[1]) for r in described] == list(columns.items()), f
        assert con.execute(f"SELECT count(*) FROM read_parquet('{f}')").fetchone()[0] == (
            pq.read_metadata(f).num_rows
        )


def test_every_column_is_documented_and_the_page_is_current():
    for doc in all_docs():
        assert not doc.row.startswith("(undocumented"), doc.table
        for col in doc.columns:
            assert col.description != "(undocumented)", f"{doc.table}.{col.name}"
    assert PAGE.read_text() == markdown_page(), (
        "SCHEMAS.md is stale: python -m societas.cluster.report.examples"
    )


def _run_example(ex, run: Path):
    duck = duckdb.connect().execute(ex.sql.replace("RUN", f"'{run}'")).fetchall()
    scope: dict = {"RUN": str(run)}
    exec(ex.pandas, scope)
    return duck, scope["result"]


def test_example_evacuation_by_age_group_duckdb_equals_pandas(reported):
    duck, frame = _run_example(EXAMPLES[0], reported)
    assert duck
    by_key = {(g, t): v for g, t, v in duck}
    for (group, tick), share in by_key.items():
        assert frame.loc[tick, group] == pytest.approx(share)
    assert max(by_key.values()) == 1.0  # everyone at a shelter at landfall


def test_example_opinion_change_of_contacts_of_the_treated(polarization):
    write_report(polarization)
    duck, frame = _run_example(EXAMPLES[1], polarization)
    assert {row[1] for row in duck} == {True, False}  # some talked to a treated agent
    for topic, talked, agents, mean, _sd in duck:
        assert frame.loc[(topic, talked), "count"] == agents
        assert frame.loc[(topic, talked), "mean"] == pytest.approx(mean)


def test_example_who_knows_a_fact(diffusion):
    write_report(diffusion)
    duck, frame = _run_example(EXAMPLES[2], diffusion)
    assert duck and all(0 < share <= 1 for *_, share in duck)
    assert len(frame) == len(duck)


def test_export_csv_and_duckdb(reported, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["export", str(reported), "--format", "csv", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    with (tmp_path / "agent_state.csv").open() as f:
        rows = list(csv.DictReader(f))
    state = pq.ParquetDataset(reported / "results" / "agent_state").read()
    assert len(rows) == state.num_rows and rows[0].keys() == set(state.column_names)
    db_path = tmp_path / "run.duckdb"
    res = runner.invoke(app, ["export", str(reported), "--format", "duckdb", "--out", str(db_path)])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM agent_state").fetchone()[0] == state.num_rows
    comment = con.execute(
        "SELECT comment FROM duckdb_columns() WHERE table_name = 'agent_state' "
        "AND column_name = 'place_kind'"
    ).fetchone()[0]
    assert "shelter" in comment
    res = runner.invoke(app, ["export", str(reported), "--format", "xlsx"])
    assert res.exit_code == 2 and "--format" in res.output and "xlsx" in res.output
