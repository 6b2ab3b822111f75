"""The shipped town with every seed memory mechanism on (configs/town-full-memory.yaml): run
as a user would, each mechanism acts, and the `memory_policies` table counts it once."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from societas.agents.runtime.memory_policies import COLUMNS
from societas.agents.runtime.results import read_table
from societas.cluster.cli import app

from .conftest import CONFIGS


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "run"
    args = ["run", str(CONFIGS / "town-full-memory.yaml"), "--local", "--agents", "24"]
    res = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def _log_entries(text: str, title: str) -> int:
    """Entries of one layer's section of an agent's cognitive log."""
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return len(re.findall(r"^- \*\*day ", section, flags=re.M))


def test_every_memory_mechanism_acts_in_the_shipped_scenario(full_run):
    table = read_table(full_run, "memory_policies")
    assert table.column_names == ["tick", "group_id", *COLUMNS]
    assert table.num_rows == 96  # one group, one row per tick
    assert table.column("tick").to_pylist() == list(range(96))
    sums = {c: sum(table.column(c).to_pylist()) for c in COLUMNS}
    assert all(v > 0 for v in sums.values()), sums
    assert all(v >= 0 for c in COLUMNS for v in table.column(c).to_pylist())  # deltas


def test_cognitive_counts_match_the_layers_logs(full_run):
    """Each L3 and L4 pass is counted once: the table's sums equal the logs' entries."""
    table = read_table(full_run, "memory_policies")
    logs = sorted((full_run / "memory_logs").glob("agent-*.md"))
    assert logs  # scholars run the cognitive profile
    texts = [p.read_text() for p in logs]
    for column, title in (
        ("cognitive_consolidations", "L3 consolidation"),
        ("meta_cognition", "L4 meta-cognition"),
    ):
        assert sum(table.column(column).to_pylist()) == sum(_log_entries(t, title) for t in texts)


def test_report_card_and_tidy_methods_give_each_mechanisms_total(full_run, tmp_path):
    from societas.cluster.report.tidy import export_tidy

    table = read_table(full_run, "memory_policies")
    sums = {c: sum(table.column(c).to_pylist()) for c in COLUMNS}
    res = CliRunner().invoke(app, ["report", str(full_run)])
    assert res.exit_code == 0, res.output
    page = (full_run / "report.html").read_text()
    assert f"moves to cold {sums['moves_to_cold']:,}" in page
    assert f"meta cognition {sums['meta_cognition']:,}" in page
    target = export_tidy(full_run, "csv", tmp_path / "tidy.csv")
    methods = json.loads(target.with_name("tidy.methods.json").read_text())
    assert methods["memory_policies"] == sums


async def test_reflections_give_their_evidence_feedback_when_importance_is_recomputed(run):
    """Each tick, every memory cited as evidence by that tick's reflections gets feedback once;
    with importance recomputation off, none is given."""
    from .conftest import scenario

    talk = {"chat_prob": 0.6, "friend_chat_prob": 0.9, "message_prob": 0.05}
    base = {"agents": {"count": 12}, "ticks": 24, "social": talk}
    on = {"policies": {"importance": {"enabled": True, "run_every_ticks": 6}}}
    out = await run(scenario("town", memory=on, **base), "on")
    evidence: dict[int, set[str]] = {}
    for r in read_table(out, "reflections").to_pylist():
        evidence.setdefault(r["tick"], set()).update(r["evidence_ids"].split(","))
    assert evidence  # the talkative town reflects within half a day
    table = read_table(out, "memory_policies").to_pylist()
    given = {r["tick"]: r["feedback"] for r in table if r["feedback"]}
    assert given == {t: len(ids - {""}) for t, ids in evidence.items() if ids - {""}}
    assert sum(r["importance_recomputations"] for r in table) > 0
    off = await run(scenario("town", **base), "off")
    assert read_table(off, "reflections").num_rows > 0
    assert sum(r["feedback"] for r in read_table(off, "memory_policies").to_pylist()) == 0


def test_a_resumed_run_with_every_mechanism_on_ends_row_for_row_the_same(full_run, tmp_path):
    """Stopped after an earlier checkpoint and resumed: every results table (memory policies
    included) equals the uninterrupted run's, row for row."""
    import shutil

    from societas.agents.runtime.results import SCHEMAS

    parts = tmp_path / "parts"
    shutil.copytree(full_run, parts)
    ticks = sorted(int(p.name.split("=")[1]) for p in (parts / "checkpoints").glob("tick=*"))
    assert len(ticks) >= 2, ticks
    for tick in ticks[1:]:  # as if stopped right after the earliest checkpoint kept
        shutil.rmtree(parts / "checkpoints" / f"tick={tick}")
    record = json.loads((parts / "run.json").read_text())
    record.update(status="interrupted", ticks_done=ticks[0], last_checkpoint=ticks[0])
    record.pop("segments", None)
    (parts / "run.json").write_text(json.dumps(record))
    res = CliRunner().invoke(app, ["resume", str(parts), "--local"])
    assert res.exit_code == 0, res.output
    tables = {p.name for p in (full_run / "results").iterdir()} & set(SCHEMAS)
    assert "memory_policies" in tables
    for table in sorted(tables):
        assert read_table(parts, table).to_pylist() == read_table(full_run, table).to_pylist(), (
            table
        )
