"""run.json carries `schema_version`; a run folder written before the field still loads for
`report`, `export` and `resume` (a missing version reads as 1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from societas.cluster.cli import app
from societas.cluster.observe.run_folder import (
    RUN_FILE,
    RUN_SCHEMA_VERSION,
    RunRecord,
    load_record,
    read_record,
)

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"


def _as_written_before(run_dir: Path) -> None:
    """Drop the field, as run.json was before it existed."""
    data = json.loads((run_dir / RUN_FILE).read_text())
    del data["schema_version"]
    (run_dir / RUN_FILE).write_text(json.dumps(data))


def test_missing_schema_version_reads_as_1(tmp_path: Path) -> None:
    record = {"status": "completed", "scenario": "town", "mode": "local", "run_id": "r"}
    record |= {"pid": 1, "host": "h", "started_at": "t", "updated_at": "t", "ticks": 2}
    (tmp_path / RUN_FILE).write_text(json.dumps(record))
    assert read_record(tmp_path)["schema_version"] == 1
    loaded = load_record(tmp_path)
    assert isinstance(loaded, RunRecord) and loaded.schema_version == 1
    assert load_record(tmp_path / "missing") is None


def test_old_run_folder_reports_exports_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    runner = CliRunner()
    args = ["run", str(TOWN), "--local", "--agents", "20", "--ticks", "6"]
    res = runner.invoke(app, [*args, "--checkpoint-every", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert read_record(out)["schema_version"] == RUN_SCHEMA_VERSION
    _as_written_before(out)
    shutil.rmtree(out / "checkpoints" / "tick=6")  # as if it had stopped after tick 4

    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "report.html").exists()
    res = runner.invoke(app, ["export", str(out), "--out", str(tmp_path / "csv")])
    assert res.exit_code == 0, res.output
    assert list((tmp_path / "csv").glob("*.csv"))

    res = runner.invoke(app, ["resume", str(out), "--local"])
    assert res.exit_code == 0, res.output
    record = read_record(out)
    assert record["status"] == "completed" and record["resumes"] == 1
    assert record["schema_version"] == RUN_SCHEMA_VERSION
