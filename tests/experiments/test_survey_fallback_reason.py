"""A survey answer that fell back says why in the `surveys` table (`fallback_reason`), as an
interview does in interviews.jsonl; a run written before the column (its surveys files
without it) still reads, reports, exports and resumes, its older rows null.

The run: a survey model (the LLM emulator) answering half its calls with prose instead of the
asked JSON, on two groups, stopped after the first survey and resumed for the second; between
the two its surveys files are rewritten without the column, as an earlier version wrote them.
"""

from __future__ import annotations

import asyncio
import csv
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from societas.agents.runtime.results import read_table
from societas.cluster.loop.local import run_local_async
from societas.cluster.loop.run import RunInterrupted
from societas.cluster.report import RunData, write_report
from societas.cluster.report.export import export
from societas.testing.emulator import EmulatorConfig, serve
from tests.experiments.conftest import scenario

QUESTIONS = [
    {"id": "life", "kind": "likert", "scale": 5, "attribute": "mood", "text": "How satisfied?"},
    {"id": "feel", "kind": "choice", "options": ["good", "bad"], "text": "Is your mood good?"},
]
# start 07:00, 30-minute ticks: tick 2 and tick 6; a checkpoint every 4 ticks (after tick 3)
SURVEYS = [
    {"id": "morning", "day": 0, "hour": 8, "questions": QUESTIONS},
    {"id": "late", "day": 0, "hour": 10, "questions": QUESTIONS},
]
REFUSED = "not the asked JSON ("  # the gateway's reason for a reply that is prose
KEYS = ("tick", "agent_id", "question_id")


def _config(url: str) -> dict[str, Any]:
    cfg = scenario(ticks=8, surveys=SURVEYS, cluster={"checkpoint_every": 4})
    model = {"name": "m", "base_url": url, "model": "emulated", "send_task_hints": True}
    cfg["llm"] = {
        "endpoints": [model],
        "routes": {"survey": "m", "default": "rules"},  # only the surveys ask the model
        "fallback_stop": {"enabled": False},  # a quarter of them fall back, on purpose
    }
    return cfg


def _old_layout(run: Path) -> None:
    """Rewrite the run's surveys files as written before `fallback_reason` existed."""
    for path in sorted((run / "results" / "surveys").glob("group-*/*.parquet")):
        table = pq.read_table(path)
        if "fallback_reason" in table.column_names:  # not yet made old
            pq.write_table(table.drop_columns(["fallback_reason"]), path, compression="zstd")


async def _stopped_then_resumed(out: Path, old: Path, embedder: Any) -> list[dict[str, Any]]:
    """Run to tick 5 (checkpoint after tick 3: the first survey's files on disk), keep the
    rows that run wrote, make its files old, resume it; `old`: a copy of the whole run with
    every surveys file old."""
    done: list[int] = []
    garbage = EmulatorConfig(base_latency_s=0.0, rate_garbage=0.5, seed=1)
    async with serve(garbage) as (_, url):
        cfg = _config(url)
        with pytest.raises(RunInterrupted):
            await run_local_async(
                cfg,
                out,
                groups=2,
                embedder=embedder,
                stop=lambda: 5 in done,
                on_tick=lambda report: done.append(report.tick),
            )
        written = read_table(out, "surveys").to_pylist()
        _old_layout(out)
        await run_local_async(cfg, out, groups=2, embedder=embedder, resume=True)
    await asyncio.to_thread(shutil.copytree, out, old)
    _old_layout(old)
    return written


@pytest.fixture(scope="module")
def runs(tmp_path_factory, bm25_embedder) -> Iterator[tuple[list[dict[str, Any]], Path, Path]]:
    """(rows the first part wrote, the resumed run, the whole run in the old layout)."""
    root = tmp_path_factory.mktemp("fallback_reason")
    out, old = root / "run", root / "old"
    written = asyncio.run(_stopped_then_resumed(out, old, bm25_embedder))
    yield written, out, old


def _by_key(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(r[k] for k in KEYS): r for r in rows}


def test_a_fallback_row_says_why_and_a_first_try_row_is_null(runs):
    written, _, _ = runs
    assert len(written) == 12 * 2 and {r["tick"] for r in written} == {2}
    sources = {r["answer_source"] for r in written}
    assert {"first_try", "fallback"} <= sources, sources
    for r in written:
        if r["answer_source"] == "fallback":
            assert r["fallback_reason"].startswith(REFUSED), r
            assert r["value"] is None and r["answer_text"] == "(no answer)"
        else:  # the model's answer, at once or re-asked: nothing to explain
            assert r["fallback_reason"] is None, r


def test_a_run_resumed_across_the_change_reads_as_one_table(runs):
    """Older files lack the column, the resumed run's have it: one table, older rows null,
    the same through the writer's reader, the report's SQL and both exports."""
    written, out, _ = runs
    files = sorted((out / "results" / "surveys").glob("group-*/*.parquet"))
    layouts = {f.name: "fallback_reason" in pq.read_schema(f).names for f in files}
    assert layouts == {"ticks-000000-000003.parquet": False, "ticks-000006-000007.parquet": True}
    assert len(files) == 4  # two groups: the report's glob meets an old file first
    rows = read_table(out, "surveys").to_pylist()
    assert len(rows) == 2 * 12 * 2 and {r["tick"] for r in rows} == {2, 6}
    older = [r for r in rows if r["tick"] == 2]
    assert _by_key(older).keys() == _by_key(written).keys()
    assert all(r["fallback_reason"] is None for r in older)  # written without the column
    newer = [r for r in rows if r["tick"] == 6]
    fell = [r for r in newer if r["answer_source"] == "fallback"]
    assert fell and len(fell) < len(newer)
    assert all(r["fallback_reason"].startswith(REFUSED) for r in fell)
    assert all(r["fallback_reason"] is None for r in newer if r not in fell)
    expected = sorted(tuple(r[k] for k in (*KEYS, "fallback_reason")) for r in rows)

    write_report(out)
    assert (out / "report.html").is_file()
    sql = "SELECT tick, agent_id, question_id, fallback_reason FROM surveys ORDER BY ALL"
    assert RunData(out).rows(sql) == expected
    db = export(out, "duckdb")
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute(sql).fetchall() == expected
    with (export(out, "csv") / "surveys.csv").open(newline="") as fh:
        exported = list(csv.DictReader(fh))
    got = sorted(
        (int(r["tick"]), int(r["agent_id"]), r["question_id"], r["fallback_reason"] or None)
        for r in exported
    )
    assert got == expected


def test_a_run_written_before_the_column_reports_and_exports(runs):
    """Every surveys file without the column: read as null, reported, exported with the
    documented column (null) and its comment."""
    _, out, old = runs
    rows = read_table(old, "surveys").to_pylist()
    new = read_table(out, "surveys").drop_columns(["fallback_reason"]).to_pylist()
    assert [{k: v for k, v in r.items() if k != "fallback_reason"} for r in rows] == new
    assert all(r["fallback_reason"] is None for r in rows)
    write_report(old)
    assert (old / "report.html").is_file()
    db = export(old, "duckdb")
    with duckdb.connect(str(db), read_only=True) as con:
        counted = con.execute("SELECT count(*), count(fallback_reason) FROM surveys").fetchone()
        assert counted == (len(rows), 0)
        (comment,) = con.execute(
            "SELECT comment FROM duckdb_columns() "
            "WHERE table_name = 'surveys' AND column_name = 'fallback_reason'"
        ).fetchone()
        assert comment.startswith("For a fallback, why")
    with (export(old, "csv") / "surveys.csv").open(newline="") as fh:
        exported = list(csv.DictReader(fh))
    assert len(exported) == len(rows) and {r["fallback_reason"] for r in exported} == {""}


def test_inspect_prints_each_answers_source_and_a_fallbacks_reason(runs):
    """`societas inspect` lists an agent's answers with where each came from, as `interview`
    prints its own answer: `[first_try]`, `[fallback: not the asked JSON (...)]`."""
    from societas.cluster.experiments.interview import format_view, inspect_agent

    _, out, _ = runs
    rows = read_table(out, "surveys").to_pylist()
    fell = next(r for r in rows if r["answer_source"] == "fallback" and r["fallback_reason"])
    kept = next(r for r in rows if r["answer_source"] == "first_try")
    for row, shown in ((fell, f"[fallback: {fell['fallback_reason']}]"), (kept, "[first_try]")):
        page = format_view(inspect_agent(out, row["agent_id"]))
        lines = [line for line in page.splitlines() if f"/{row['question_id']}: " in line]
        wanted = f"{row['answer_text']} {shown}"
        assert any(line.endswith(wanted) for line in lines), (wanted, lines)
