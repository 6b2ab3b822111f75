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
from societas.cluster.report.schemas import (
    TableDoc,
    duckdb_type,
    parquet_sql,
    present_tables,
    table_doc,
)

Format = Literal["csv", "duckdb"]


def _literal(text: str) -> str:
    """A SQL string literal (COMMENT ON takes no parameters)."""
    return "'" + text.replace("'", "''") + "'"


def _select(con: duckdb.DuckDBPyConnection, run_dir: Path, doc: TableDoc) -> str:
    """SELECT of a table's rows with its documented columns, in their order: one no file of
    this run holds (added after the run was written) as a null of its type."""
    source = parquet_sql(run_dir, doc.table)
    held = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
    documented = [c.name for c in doc.columns]
    cols = [
        f'"{c.name}"' if c.name in held else f'NULL::{duckdb_type(c.type)} AS "{c.name}"'
        for c in doc.columns
    ] + [f'"{name}"' for name in held if name not in documented]
    order = ", ".join(f'"{name}"' for name in documented if name in held)
    return f"SELECT {', '.join(cols)} FROM {source} ORDER BY {order}"


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
            select = _select(con, run_dir, _documented(table, run_dir))
            con.execute(f"COPY ({select}) TO '{target / (table + '.csv')}' (HEADER, DELIMITER ',')")
        return target
    target = Path(out) if out is not None else run_dir / "export" / "results.duckdb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    db = duckdb.connect(str(target))
    try:
        for table in tables:
            doc = _documented(table, run_dir)
            db.execute(f"CREATE TABLE {table} AS {_select(db, run_dir, doc)}")
            db.execute(f"COMMENT ON TABLE {table} IS {_literal(doc.row)}")
            for c in doc.columns:
                db.execute(f'COMMENT ON COLUMN {table}."{c.name}" IS {_literal(c.description)}')
    finally:
        db.close()
    return target
