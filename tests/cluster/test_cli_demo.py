"""`societas demo` (what `make run` shows until the runtime exists) works on both backends."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from societas.cluster.cli import app


@pytest.mark.parametrize("backend", ["edge", "qdrant"])
def test_demo_shows_memories_and_scores(backend):
    result = CliRunner().invoke(app, ["demo", "--agents", "2", "--backend", backend])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "the mayor issued an" in out  # top hit of 'hurricane evacuation warning'
    assert re.search(r"- .*\[day: 0, time: \d\d:\d\d, location: \w+\]", out)
    assert "('thought', 'I am worried about the storm and my pupils')" in out.replace("\n", " ")


def test_demo_rejects_bad_backend_and_agents():
    runner = CliRunner()
    bad = runner.invoke(app, ["demo", "--backend", "mongo"])
    assert bad.exit_code != 0 and "mongo" in str(bad.exception)
    assert runner.invoke(app, ["demo", "--agents", "0"]).exit_code == 2


def test_the_command_list_keeps_each_summary_in_one_piece():
    """A docstring's line breaks do not reach `societas --help`: on a wide terminal each
    command's summary is one line, however its docstring was wrapped."""
    result = CliRunner().invoke(app, ["--help"], terminal_width=200, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.strip("│ ").split()) for line in result.output.splitlines()]
    check = next(line for line in lines if line.startswith("check "))
    assert check.endswith("(several configs: each is checked; exit code 2 if any has a problem).")
