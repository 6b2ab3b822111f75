"""`societas report`: one self-contained HTML page per run (or per comparison of runs), the
results' documented schemas, and exports. One module per view; templates beside them.

`write_report(RUN_DIR)` writes RUN_DIR/report.html, RUN_DIR/summary.json and
RUN_DIR/results/schemas.json; `write_report([A, B])` compares runs on the same axes;
`agent_view(RUN_DIR, ID)` is the agent view shared with `societas inspect`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from societas.cluster.report.agent_view import AgentView, agent_view
from societas.cluster.report.data import Arm, ReportInputError, RunData, common_ticks, discover
from societas.cluster.report.schemas import write_schemas_json

__all__ = [
    "AgentView",
    "Arm",
    "ReportInputError",
    "RunData",
    "agent_view",
    "discover",
    "write_agent_page",
    "write_derived",
    "write_report",
]


def _default_out(paths: list[Path], arms: list[Arm]) -> Path:
    if len(paths) == 1:
        return paths[0] / "report.html"
    names = "-vs-".join(a.label for a in arms)[:80]
    return paths[0].resolve().parent / f"report-{names}.html"


def write_report(runs: str | Path | Sequence[str | Path], out: str | Path | None = None) -> Path:
    """Write the HTML report (+ summary.json beside it, schemas.json beside each run's
    results) for one run folder, a folder of arms or seed-N replicates, or several runs."""
    from societas.cluster.report.page import render_report, write_summary

    paths = [Path(runs)] if isinstance(runs, str | Path) else [Path(r) for r in runs]
    arms = discover(paths)
    common_ticks(arms)  # runs that cannot be compared are refused before anything is written
    target = Path(out) if out is not None else _default_out(paths, arms)
    for arm in arms:
        for run in arm.runs:
            write_derived(run)
    html, summary = render_report(arms, target)
    write_summary(target.with_name("summary.json") if len(paths) == 1 else
                  target.with_suffix(".summary.json"), summary)  # fmt: skip
    if summary.get("effects"):
        write_effects(summary["effects"], target.with_name("effects.csv") if len(paths) == 1
                      else target.with_suffix(".effects.csv"))  # fmt: skip
    return html


def write_effects(rows: list[dict], path: Path) -> Path:
    """effects.csv from the summary's effect rows (see report.effects)."""
    from societas.cluster.report.effects import EffectRow, write_effects_csv

    return write_effects_csv([EffectRow(**r) for r in rows], path)


def write_derived(run: RunData) -> None:
    """Beside the results: the `profiles` table and `schemas.json` (documented schemas)."""
    from societas.cluster.report.profiles import write_profiles

    write_profiles(run.dir, run.population)
    write_schemas_json(run.dir)


def write_agent_page(run_dir: str | Path, agent_id: int, out: str | Path | None = None) -> Path:
    """Write RUN_DIR/agent-ID.html: one agent's page (the report's agent view)."""
    from societas.cluster.report.page import render_agent_page

    run = RunData(Path(run_dir))
    view = agent_view(run, agent_id)
    target = Path(out) if out is not None else run.dir / f"agent-{agent_id}.html"
    return render_agent_page(run, view, target)
