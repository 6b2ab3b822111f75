"""Bad memory input to `societas run`: one clear line naming the field and the value, exit code
2, no traceback, nothing run (no tick 0)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BASE = "name: bad\nticks: 2\nagents: {count: 12, types: {citizen: 1, trader: 1}}\n"
CASES = {
    "unknown memory type": (
        "memory:\n  policies:\n    sessions: {enabled: true, ttl_seconds: {sesion: 60}}\n",
        ("memory.policies.sessions.ttl_seconds.sesion", "'sesion'"),
    ),
    "negative trigger cadence": (
        "memory:\n  profile: cognitive\n  cognitive:\n    consolidation: {every_hours: -6}\n",
        ("memory.cognitive.consolidation.every_hours", "-6"),
    ),
    "negative count cadence on a type": (
        "memory:\n  agent_types:\n    trader:\n      profile: cognitive\n"
        "      cognitive: {attention: {every: -4}}\n",
        ("memory.agent_types.trader.cognitive.attention.every", "-4"),
    ),
    "cognitive option on a finmem type": (
        "memory:\n  agent_types:\n    trader:\n      profile: finmem\n"
        "      cognitive: {working_memory_capacity: 3}\n",
        ("memory.agent_types.trader", "cognitive", "'finmem'"),
    ),
    "cognitive option on a finmem scenario": (
        "memory:\n  profile: finmem\n  cognitive: {working_memory_capacity: 3}\n",
        ("memory:", "cognitive", "'finmem'"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_memory_config_is_one_line_before_tick_0(tmp_path: Path, case: str) -> None:
    text, words = CASES[case]
    config = tmp_path / "bad.yaml"
    config.write_text(BASE + text, encoding="utf-8")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "societas.cluster.cli", "run", str(config), "--local"]
    done = subprocess.run(
        [*cmd, "--out", str(out)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2, done.stdout + done.stderr
    text_out = done.stdout + done.stderr
    assert "Traceback" not in text_out and "tick=" not in text_out, text_out
    problems = [line for line in text_out.splitlines() if line.startswith("  ")]
    assert len(problems) == 1, text_out  # the header names the file, this line the field
    for word in words:
        assert word in problems[0], problems[0]
    assert "Value error" not in problems[0]
    assert not (out / "results").exists()
