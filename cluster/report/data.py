"""One run's results as the report reads them: config, run record, tables through DuckDB.

Aggregates are computed by DuckDB straight from the Parquet files (nothing of the size of
`agent_state` is loaded into Python), so the report stays fast at 100,000 agents. `Arm`
groups replicate runs (seeds) under one label; `discover` turns the command's folders into
arms: a run folder, a folder of `seed-N` replicates, or a folder of arms; `common_ticks`
says on which ticks they are compared, or why they cannot be.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from societas.agents.llm.accounting import SOURCE_PREFIX, split_counts
from societas.cluster.observe.run_folder import SEED_FOLDER
from societas.cluster.report.schemas import parquet_sql, present_tables


class ReportInputError(ValueError):
    """A folder given to the report is not a run (names the folder and what is missing)."""


def is_run_dir(path: Path) -> bool:
    """A run folder has `config.json` and a `results/` folder."""
    return (path / "config.json").is_file() and (path / "results").is_dir()


class RunData:
    """A finished run: `config.json`, `run.json`, and SQL over its Parquet tables."""

    def __init__(self, run_dir: str | Path, label: str | None = None) -> None:
        self.dir = Path(run_dir)
        if not is_run_dir(self.dir):
            raise ReportInputError(
                f"{str(self.dir)!r} is not a run folder (needs config.json and results/)"
            )
        self.label = label or self.dir.name
        self.config: dict[str, Any] = json.loads((self.dir / "config.json").read_text())
        run_json = self.dir / "run.json"
        self.run: dict[str, Any] = json.loads(run_json.read_text()) if run_json.exists() else {}
        self.tables = set(present_tables(self.dir))
        self.db = duckdb.connect()
        for table in self.tables:
            self.db.execute(f"CREATE VIEW {table} AS SELECT * FROM {parquet_sql(self.dir, table)}")
        self.ticks = int(self.scalar("SELECT max(tick) + 1 FROM agent_state") or 0)
        self.agents = int(self.config.get("agents", {}).get("count") or self.run.get("agents") or 0)
        self.tick_minutes = int(self.config.get("tick_minutes", 30))
        self.start_hour = float(self.config.get("start_hour", 0))
        self.seed = int(self.config.get("seed", 0))  # runs of arms pair by it

    # ------------------------------------------------------------------ SQL
    def has(self, table: str) -> bool:
        return table in self.tables

    def scalar(self, sql: str, *params: Any) -> Any:
        """First value of the first row (None when the table is missing or empty)."""
        if not self._tables_exist(sql):
            return None
        row = self.db.execute(sql, list(params)).fetchone()
        return row[0] if row else None

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """All rows as tuples ([] when a table the query names is missing)."""
        if not self._tables_exist(sql):
            return []
        return self.db.execute(sql, list(params)).fetchall()

    def columns(self, sql: str, *params: Any) -> dict[str, np.ndarray]:
        """Result columns as numpy arrays ({} when a table the query names is missing)."""
        if not self._tables_exist(sql):
            return {}
        return self.db.execute(sql, list(params)).fetchnumpy()

    def _tables_exist(self, sql: str) -> bool:
        from societas.cluster.report.schemas import TABLE_DOCS

        named = set(re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", sql, flags=re.IGNORECASE))
        return all(t in self.tables for t in named if t in TABLE_DOCS)

    # ------------------------------------------------------------------ time
    def hours(self, ticks: np.ndarray | list[int]) -> np.ndarray:
        """Simulated hours since day 0 midnight for ticks."""
        return self.start_hour + np.asarray(ticks, dtype=float) * self.tick_minutes / 60.0

    def tick_label(self, tick: int) -> str:
        """`day 1 06:00` for a tick."""
        h = float(self.hours([tick])[0])
        day, rem = divmod(h, 24.0)
        return f"day {int(day)} {int(rem):02d}:{round((rem % 1) * 60):02d}"

    # ------------------------------------------------------------------ society
    @functools.cached_property
    def population(self) -> Any | None:
        """The generated society (profiles, friends, town map) or None when it cannot be
        rebuilt (e.g. a population file no longer present)."""
        from societas.agents.population import population_for
        from societas.agents.scenario import ScenarioConfig, load_scenario

        known = {k: v for k, v in self.config.items() if k in ScenarioConfig.model_fields}
        try:  # fields a run records beside the scenario (versions, ...) are not the scenario
            return population_for(load_scenario(known))
        except Exception:
            return None

    def profiles_table(self) -> None:
        """Make `profiles` (one row per agent, see profiles.py) available to SQL."""
        if "profiles" in self.tables or self.population is None:
            return
        from societas.cluster.report.profiles import profiles_table

        self.db.register("profiles", profiles_table(self.population))
        self.tables.add("profiles")

    @property
    def interventions(self) -> list[dict[str, Any]]:
        return list(self.config.get("interventions", []))

    @property
    def is_rules(self) -> bool:
        """True when no language model produced the behaviour (the rules policy)."""
        provider = str(self.config.get("llm", {}).get("provider", ""))
        return provider == "rules" or any("rules" in k for k in self.run.get("llm", {}))

    @property
    def answer_sources(self) -> dict[str, dict[str, int]]:
        """task -> answer source -> answers, from run.json (tasks with none left out)."""
        return split_counts(self.run.get("llm_tasks") or {}, SOURCE_PREFIX)

    @property
    def model_tasks(self) -> list[str]:
        """The tasks a language model was asked (its answers, re-asks and fallbacks); the
        rules policy answered the others."""
        sources = self.answer_sources
        return [task for task, n in sources.items() if any(v for s, v in n.items() if s != "rules")]

    def outcome_is_binary(self, variable: str) -> bool | None:
        """Whether a recorded outcome is 0 or 1 at every tick of this run (None: no rows)."""
        return self.scalar(
            "SELECT bool_and(value = 0 OR value = 1) FROM outcomes WHERE variable = ?", variable
        )


@dataclass
class Arm:
    """One arm of a comparison: a label and its replicate runs (one per seed)."""

    label: str
    runs: list[RunData] = field(default_factory=list)

    @property
    def first(self) -> RunData:
        return self.runs[0]


def _replicates(folder: Path) -> list[Path]:
    subs = [p for p in sorted(folder.iterdir()) if p.is_dir() and SEED_FOLDER.fullmatch(p.name)]
    return sorted((p for p in subs if is_run_dir(p)), key=lambda p: int(p.name[5:]))


def _arm(folder: Path, label: str) -> Arm | None:
    if is_run_dir(folder):
        return Arm(label, [RunData(folder, label)])
    reps = _replicates(folder)
    if reps:
        return Arm(label, [RunData(p, f"{label} {p.name}") for p in reps])
    return None


def _arms_by_seed(folder: Path) -> list[Arm]:
    """Arms from `seed-N/<arm>` folders (`run CONFIG --seeds` of a scenario with arms): one
    arm per name, its runs in seed order; [] when the folder is not laid out so."""
    seeds = sorted(
        (p for p in folder.iterdir() if p.is_dir() and SEED_FOLDER.fullmatch(p.name)),
        key=lambda p: int(p.name[5:]),
    )
    arms: dict[str, Arm] = {}
    for seed in seeds:
        for sub in sorted(p for p in seed.iterdir() if p.is_dir() and is_run_dir(p)):
            arm = arms.setdefault(sub.name, Arm(sub.name))
            arm.runs.append(RunData(sub, f"{sub.name} {seed.name}"))
    return list(arms.values())


def discover(paths: list[Path]) -> list[Arm]:
    """Arms from the folders given: each a run, a folder of seed-N replicates, or (one folder
    only) a folder whose sub-folders are arms (each a run or replicates) or seed-N folders
    of arms."""
    if not paths:
        raise ReportInputError("give at least one run folder")
    for p in paths:
        if not Path(p).is_dir():
            raise ReportInputError(f"{str(p)!r} is not a folder")
    if len(paths) == 1:
        folder = Path(paths[0])
        one = _arm(folder, folder.name)
        if one is not None:
            return [one]
        by_seed = _arms_by_seed(folder)
        if by_seed:
            return by_seed
        subs = [p for p in sorted(folder.iterdir()) if p.is_dir()]
        arms = [a for a in (_arm(p, p.name) for p in subs) if a is not None]
        if not arms:
            raise ReportInputError(
                f"{str(folder)!r} holds no run (no config.json + results/ in it or its sub-folders)"
            )
        return arms
    arms = []
    for p in paths:
        arm = _arm(Path(p), Path(p).name)
        if arm is None:
            raise ReportInputError(f"{str(p)!r} is not a run folder (needs config.json, results/)")
        arms.append(arm)
    return arms


def _clock(run: RunData) -> str:
    """How a run's ticks map to the clock: their length and the first tick's time."""
    return f"ticks of {run.tick_minutes} min from {run.tick_label(0)}"


def _one_study(runs: list[RunData]) -> bool:
    """Whether runs are arms of one experiment or runs of one scenario (their lengths may
    differ: an arm with its own `ticks`, a run stopped early)."""
    experiments = {r.run.get("experiment") for r in runs}
    if len(experiments) == 1 and None not in experiments:
        return True
    return len({r.config.get("name") for r in runs}) == 1


def common_ticks(arms: list[Arm]) -> tuple[int, str]:
    """The ticks every run compared has, and a note naming the longer runs ("" when all have
    them); a ReportInputError when the runs cannot share a time axis: different clocks, or
    different lengths without being arms of one experiment or runs of one scenario."""
    runs = [r for a in arms for r in a.runs]
    span = min(r.ticks for r in runs)
    clocks = len({_clock(r) for r in runs}) > 1
    lengths = any(r.ticks != span for r in runs)
    if clocks or (lengths and not _one_study(runs)):
        why = " and ".join(
            w for w, bad in (("different clocks", clocks), ("different lengths", lengths)) if bad
        )
        listed = ", ".join(
            f"{r.dir} (scenario {r.config.get('name')}, {r.ticks} {_clock(r)})" for r in runs
        )
        raise ReportInputError(
            f"cannot compare {listed}: {why}; only arms of one experiment or runs of one "
            "scenario are compared (on the ticks they share); report each run on its own"
        )
    if all(r.ticks == span for r in runs):
        return span, ""
    shorter = min(runs, key=lambda r: r.ticks)
    longer = ", ".join(f"{r.label} ({r.ticks})" for r in runs if r.ticks > span)
    return span, (
        f"Compared on the {span} ticks every run has (to {shorter.tick_label(max(span - 1, 0))}, "
        f"the end of {shorter.label}); longer runs are cut there: {longer} ticks."
    )
