"""run.json counts the whole run across resumes: a run stopped after a checkpoint and
resumed ends with the totals, top-level counts and final progress of an uninterrupted run,
says it was resumed and lists its segments."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from societas.cluster.cli import app
from societas.cluster.observe.run_folder import RUN_FILE, read_record

TOWN = Path(__file__).resolve().parents[2] / "configs" / "town.yaml"
ARGS = ["run", str(TOWN), "--local", "--agents", "20", "--ticks", "6", "--checkpoint-every", "2"]


def test_resumed_run_counts_the_whole_run(tmp_path: Path) -> None:
    runner = CliRunner()
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    for out in (whole, parts):
        res = runner.invoke(app, [*ARGS, "--out", str(out)])
        assert res.exit_code == 0, res.output
    shutil.rmtree(parts / "checkpoints" / "tick=6")  # as if stopped (Ctrl-C) after tick 4
    data = json.loads((parts / RUN_FILE).read_text())
    data.update(status="interrupted", ticks_done=4, last_checkpoint=4)
    del data["segments"]  # an interrupted invocation never wrote its end
    (parts / RUN_FILE).write_text(json.dumps(data))
    res = runner.invoke(app, ["resume", str(parts), "--local"])
    assert res.exit_code == 0, res.output
    a, b = read_record(whole), read_record(parts)
    assert a is not None and b is not None
    assert b["totals"] == a["totals"]
    for key in ("llm_requests", "llm_tokens", "agent_steps"):
        assert b[key] == a[key] == int(a["totals"][key]), key
    assert b["progress"]["llm_requests"] == a["progress"]["llm_requests"]
    assert b["llm"] == a["llm"] and a["llm"]  # per model, over both invocations
    assert a["progress"]["tick"] == 6 and b["progress"]["tick"] == 6  # written at the end
    assert b["resumed"] is True and a["resumed"] is False
    assert [s.get("status") for s in b["segments"]] == ["interrupted", None]
    assert b["segments"][-1]["start_tick"] == 4 and b["segments"][-1]["ticks_run"] == 2


def test_the_run_card_counts_the_whole_resumed_run(tmp_path: Path) -> None:
    from societas.cluster.report.card import run_card
    from societas.cluster.report.data import RunData

    runner = CliRunner()
    out = tmp_path / "run"
    res = runner.invoke(app, [*ARGS, "--out", str(out)])
    assert res.exit_code == 0, res.output
    shutil.rmtree(out / "checkpoints" / "tick=6")
    data = json.loads((out / RUN_FILE).read_text())
    data.update(status="interrupted", ticks_done=4, last_checkpoint=4)
    del data["segments"]
    (out / RUN_FILE).write_text(json.dumps(data))
    res = runner.invoke(app, ["resume", str(out), "--local"])
    assert res.exit_code == 0, res.output
    record = read_record(out)
    assert record is not None
    card = run_card(RunData(out))
    assert "LLM calls" not in card  # the rules policy makes decisions, not model calls
    assert card["rules decisions"].startswith(f"{record['llm_requests']:,} over 2 segments")
    assert card["LLM tokens"] == f"{record['llm_tokens']:,} over the whole run"


def test_days_are_numbered_from_zero_in_the_progress_line_as_in_the_report():
    from types import SimpleNamespace

    from societas.cluster.observe.run_folder import sim_time

    lab = SimpleNamespace(start_hour=7, tick_minutes=30)
    assert sim_time(0, lab) == "day 0 07:00"  # the report's tick_label(0) for the lab
    assert sim_time(50, lab) == "day 1 08:00"  # `branch --at 1:08` is tick 50
