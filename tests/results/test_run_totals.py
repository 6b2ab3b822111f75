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
    assert a["progress"]["tick"] == 6 and b["progress"]["tick"] == 6  # written at the end
    assert b["resumed"] is True and a["resumed"] is False
    assert [s.get("status") for s in b["segments"]] == ["interrupted", None]
    assert b["segments"][-1]["start_tick"] == 4 and b["segments"][-1]["ticks_run"] == 2
