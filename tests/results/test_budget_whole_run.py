"""`--budget-tokens` bounds the whole run: a resume does not get the budget afresh (it stops
again at once when the run has spent it), `resume --budget-more N` raises it, and the run
then ends with the results and the per-model usage of an uninterrupted one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXIT_INTERRUPTED = 130


def societas(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "societas.cluster.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)


def test_the_budget_bounds_the_whole_run_and_budget_more_raises_it(tmp_path) -> None:
    from societas.agents.runtime.results import read_table

    data = yaml.safe_load((ROOT / "configs" / "town.yaml").read_text())
    data.update(ticks=6, interventions=[], cluster={"checkpoint_every": 100})
    data["agents"] = {**data["agents"], "count": 10}
    cfg = tmp_path / "town.yaml"
    cfg.write_text(yaml.safe_dump(data))
    full, cut = tmp_path / "full", tmp_path / "cut"
    res = societas("run", str(cfg), "--local", "--out", str(full))
    assert res.returncode == 0, res.stderr
    tokens = int(json.loads((full / "run.json").read_text())["llm_tokens"])
    budget = tokens // 3
    res = societas("run", str(cfg), "--local", "--out", str(cut), "--budget-tokens", str(budget))
    assert res.returncode == EXIT_INTERRUPTED, res.stdout + res.stderr
    spent_first = int(json.loads((cut / "run.json").read_text())["totals"]["llm_tokens"])
    res = societas("resume", str(cut))  # the same whole-run budget: it stops again
    assert res.returncode == EXIT_INTERRUPTED, res.stdout + res.stderr
    run = json.loads((cut / "run.json").read_text())
    spent = int(run["totals"]["llm_tokens"])
    assert spent_first < spent < tokens and run["status"] == "interrupted"
    assert f"token budget: {spent:,} of {budget:,} LLM tokens" in run["error"]  # cumulative
    res = societas("resume", str(cut), "--budget-more", str(2 * tokens))  # past any tick
    assert res.returncode == 0, res.stdout + res.stderr
    run = json.loads((cut / "run.json").read_text())
    assert run["status"] == "completed" and run["llm_tokens"] == tokens
    whole = json.loads((full / "run.json").read_text())["llm"]
    assert run["llm"] == whole  # per model, over all three invocations
    assert sum(m["requests"] for m in run["llm"].values()) == run["llm_requests"]
    assert sum(m["prompt_tokens"] + m["completion_tokens"] for m in run["llm"].values()) == tokens
    for table in ("agent_state", "needs", "llm"):
        assert read_table(full, table).to_pylist() == read_table(cut, table).to_pylist(), table
