"""`societas export RUN_OR_FOLDER --tidy`: one long table across arms and seeds, the agents'
profiles with arm and seed, and `methods.json` (what a methods section needs).

The table has one row per arm, seed, agent, tick and variable: the scenario's outcomes (bare
names), needs (`need.hunger`), attitudes (`attitude.<topic>`) and numeric survey answers
(`survey.<survey>.<question>`), with `source` saying which. Written as Parquet, CSV or a
DuckDB database (tables `tidy` and `profiles`); beside it `<name>.profiles.<ext>` and
`<name>.methods.json`.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

import duckdb

from societas.cluster.report.card import memory_policy_totals
from societas.cluster.report.data import Arm, ReportInputError, RunData, discover
from societas.cluster.report.schemas import parquet_sql

FORMATS = ("parquet", "csv", "duckdb")
COLUMNS = ("arm", "seed", "agent_id", "tick", "variable", "value", "source")
SOURCE_TABLES = ("dialogues", "plans", "reflections", "surveys", "thoughts", "importance", "events")


def _lit(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _files(run: RunData, table: str) -> str:
    return parquet_sql(run.dir, table)


def _run_sql(arm: str, run: RunData) -> list[str]:
    """SELECTs of one run's long rows (only for the tables it has)."""
    seed = run.seed
    head = f"SELECT {_lit(arm)} AS arm, {seed}::BIGINT AS seed, agent_id, tick"
    parts = []
    if run.has("outcomes"):
        parts.append(f"{head}, variable, value, 'outcome' AS source FROM {_files(run, 'outcomes')}")
    if run.has("needs"):
        parts.append(
            f"{head}, 'need.' || need AS variable, value, 'need' AS source FROM "
            f"(UNPIVOT (SELECT tick, agent_id, hunger, energy, safety, social FROM "
            f"{_files(run, 'needs')}) ON hunger, energy, safety, social "
            "INTO NAME need VALUE value)"
        )
    if run.has("attitudes"):
        parts.append(
            f"{head}, 'attitude.' || topic AS variable, value, 'attitude' AS source "
            f"FROM {_files(run, 'attitudes')}"
        )
    if run.has("surveys"):
        parts.append(
            f"{head}, 'survey.' || survey || '.' || question_id AS variable, value, "
            f"'survey' AS source FROM {_files(run, 'surveys')} WHERE value IS NOT NULL"
        )
    return parts


def _arms(source: Path) -> list[Arm]:
    arms = discover([source])
    if len(arms) == 1 and len(arms[0].runs) >= 1:
        run = arms[0].first
        label = str(run.run.get("arm") or run.config.get("name") or arms[0].label)
        return [Arm(label, arms[0].runs)]
    return arms


def export_tidy(source: str | Path, fmt: str, out: str | Path | None = None) -> Path:
    """Write the long table (and profiles, methods.json beside it); returns its path."""
    from societas.cluster.report import write_derived

    source = Path(source)
    if fmt not in FORMATS:
        raise ReportInputError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if not source.is_dir():
        raise ReportInputError(f"{str(source)!r} is not a folder")
    arms = _arms(source)
    runs = [(arm.label, run) for arm in arms for run in arm.runs]
    for _, run in runs:
        write_derived(run)
    ext = "duckdb" if fmt == "duckdb" else fmt
    target = Path(out) if out is not None else source / f"tidy.{ext}"
    target.parent.mkdir(parents=True, exist_ok=True)
    stem = target.with_suffix("")
    parts = [p for label, run in runs for p in _run_sql(label, run)]
    if not parts:
        raise ReportInputError(f"{str(source)!r}: no outcomes, needs, attitudes or surveys")
    tidy = (
        "SELECT arm, seed, agent_id, tick, variable, value::DOUBLE AS value, source FROM ("
        + " UNION ALL ".join(parts)
        + ") ORDER BY arm, seed, tick, agent_id, variable"
    )
    profiles = " UNION ALL ".join(
        f"SELECT {_lit(label)} AS arm, {int(run.config.get('seed', 0))}::BIGINT AS seed, * "
        f"FROM read_parquet({_lit(str(run.dir / 'results' / 'profiles' / 'profiles.parquet'))})"
        for label, run in runs
        if (run.dir / "results" / "profiles" / "profiles.parquet").exists()
    )
    con = duckdb.connect()
    if fmt == "duckdb":
        target.unlink(missing_ok=True)
        con.execute(f"ATTACH {_lit(str(target))} AS out")
        con.execute(f"CREATE TABLE out.tidy AS {tidy}")
        if profiles:
            con.execute(f"CREATE TABLE out.profiles AS {profiles} ORDER BY arm, seed, agent_id")
        con.execute("DETACH out")
    else:
        option = "(FORMAT parquet, COMPRESSION zstd)" if fmt == "parquet" else "(HEADER)"
        con.execute(f"COPY ({tidy}) TO {_lit(str(target))} {option}")
        if profiles:
            beside = stem.with_name(f"{stem.name}.profiles.{ext}")
            con.execute(
                f"COPY ({profiles} ORDER BY arm, seed, agent_id) TO {_lit(str(beside))} {option}"
            )
    methods = stem.with_name(f"{stem.name}.methods.json")
    methods.write_text(json.dumps(methods_record(runs), indent=2, default=str) + "\n")
    return target


def _prompt_hashes(config: dict[str, Any]) -> dict[str, str]:
    """sha256 of every prompt template the run used (the scenario's folder overrides)."""
    from societas.agents import cognition

    folder = Path(cognition.__file__).parent / "prompts"
    files = {p.name: p for p in sorted(folder.glob("*.txt"))}
    own = config.get("prompts")
    if own and Path(own).is_dir():
        files.update({p.name: p for p in sorted(Path(own).glob("*.txt"))})
    return {name: hashlib.sha256(p.read_bytes()).hexdigest() for name, p in sorted(files.items())}


def _answer_sources(run: RunData) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in SOURCE_TABLES:
        if not run.has(table):
            continue
        cols = {c[0] for c in run.db.execute(f"DESCRIBE {table}").fetchall()}
        if "answer_source" not in cols:
            continue
        query = f"SELECT answer_source, count(*) FROM {table} WHERE answer_source <> '' GROUP BY 1"
        for source, n in run.rows(query):
            counts[str(source)] = counts.get(str(source), 0) + int(n)
    return counts


def methods_record(runs: list[tuple[str, RunData]]) -> dict[str, Any]:
    """Version, scenario digests, models and endpoints, prompt hashes, seeds, answer sources,
    and what each memory mechanism did (summed over the runs)."""
    try:
        version = metadata.version("societas")
    except metadata.PackageNotFoundError:
        version = "?"
    first = runs[0][1]
    llm = first.config.get("llm", {})
    sources: dict[str, int] = {}
    for _, run in runs:
        for k, v in _answer_sources(run).items():
            sources[k] = sources.get(k, 0) + v
    total = sum(sources.values())
    policies: dict[str, int] = {}  # each memory mechanism's count, summed over the runs
    for _, run in runs:
        for k, v in memory_policy_totals(run).items():
            policies[k] = policies.get(k, 0) + v
    return {
        "societas_version": version,
        "scenario": first.config.get("name"),
        "scenario_digests": {
            f"{label} seed-{run.config.get('seed')}": run.run.get("config_digest")
            for label, run in runs
        },
        "arms": sorted({label for label, _ in runs}),
        "seeds": sorted({run.seed for _, run in runs}),
        "agents": first.agents,
        "ticks": first.ticks,
        "tick_minutes": first.tick_minutes,
        "llm": {
            "provider": llm.get("provider"),
            "endpoints": [
                {"base_url": e.get("base_url"), "model": e.get("model")}
                for e in llm.get("endpoints", [])
            ],
            "temperature": llm.get("temperature"),
            "max_tokens": llm.get("max_tokens"),
        },
        "prompt_templates_sha256": _prompt_hashes(first.config),
        "answer_sources": {
            k: {"rows": v, "share": round(v / total, 4)} for k, v in sorted(sources.items())
        },
        "memory_policies": policies or None,
        "analysis": first.config.get("analysis"),
        "outcomes": first.config.get("outcomes"),
        "versions": first.run.get("versions"),
    }
