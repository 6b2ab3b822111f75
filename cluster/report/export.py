"""`societas export RUN --format csv|duckdb`: the results in the formats other tools open.

csv: one `<table>.csv` per results table (header row, all groups' files, sorted by the
table's columns). duckdb: one database file with a table per results table, each column
commented with its documented meaning (`SELECT * FROM duckdb_columns()` shows them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import duckdb

from societas.cluster.report.data import ReportInputError, is_run_dir
from societas.cluster.report.schemas import TableDoc, present_tables, table_doc

Format = Literal["csv", "duckdb"]


def _literal(text: str) -> str:
    """A SQL string literal (COMMENT ON takes no parameters)."""
    return "'" + text.replace("'", "''") + "'"


def _source(run_dir: Path, table: str) -> str:
    return f"read_parquet('{run_dir / 'results' / table / '**' / '*.parquet'}')"


def _documented(table: str, run_dir: Path) -> TableDoc:
    """The schema of a table the run wrote (every present table has one)."""
    doc = table_doc(table, run_dir)
    if doc is None:
        raise ReportInputError(f"{run_dir}: table {table!r} has no schema")
    return doc


def export(run_dir: str | Path, fmt: str, out: str | Path | None = None) -> Path:
    """Write the run's tables as CSV files (a folder) or one DuckDB file; returns the path."""
    run_dir = Path(run_dir)
    if fmt not in ("csv", "duckdb"):
        raise ReportInputError(f"--format: {fmt!r} is not one of csv, duckdb")
    if not is_run_dir(run_dir):
        raise ReportInputError(
            f"{str(run_dir)!r} is not a run folder (needs config.json, results/)"
        )
    from societas.cluster.report import RunData, write_derived

    write_derived(RunData(run_dir))
    tables = present_tables(run_dir)
    con = duckdb.connect()
    if fmt == "csv":
        target = Path(out) if out is not None else run_dir / "export" / "csv"
        target.mkdir(parents=True, exist_ok=True)
        for table in tables:
            cols = ", ".join(f'"{c.name}"' for c in _documented(table, run_dir).columns)
            con.execute(
                f"COPY (SELECT * FROM {_source(run_dir, table)} ORDER BY {cols}) "
                f"TO '{target / (table + '.csv')}' (HEADER, DELIMITER ',')"
            )
        return target
    target = Path(out) if out is not None else run_dir / "export" / "results.duckdb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    db = duckdb.connect(str(target))
    try:
        for table in tables:
            doc = _documented(table, run_dir)
            cols = ", ".join(f'"{c.name}"' for c in doc.columns)
            db.execute(
                f"CREATE TABLE {table} AS SELECT * FROM {_source(run_dir, table)} ORDER BY {cols}"
            )
            db.execute(f"COMMENT ON TABLE {table} IS {_literal(doc.row)}")
            for c in doc.columns:
                db.execute(f'COMMENT ON COLUMN {table}."{c.name}" IS {_literal(c.description)}')
    finally:
        db.close()
    return target
