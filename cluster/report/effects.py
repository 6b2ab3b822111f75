"""Arm effects: one row per outcome x subgroup x comparison, written to effects.csv and shown
in the page (section `effects`).

Outcomes are the scenario's `outcomes:` at the last recorded tick and the survey answers
(a choice question as one share per option, Likert and number questions as means). Each arm
is compared with the reference arm (`control` when there is one, else the first); arms that
share seed and population are paired per agent, then across seeds (stats.paired_effect).
Subgroups are `all`, the scenario's `analysis.subgroups` evaluated on the baseline table,
`treated` (agents an intervention of the compared arm reached), and terciles of each
`analysis.terciles` covariate at baseline.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from societas.cluster.report.data import Arm, RunData
from societas.cluster.report.stats import Estimate, paired_effect, unpaired_effect

COLUMNS = (
    "outcome",
    "subgroup",
    "arm",
    "reference_arm",
    "estimate",
    "ci_low",
    "ci_high",
    "n_agents",
    "n_seeds",
    "method",
    "role",
    "measured",
)
NEED_ALIASES = {
    "hunger": "hunger_satisfaction",
    "energy": "energy_satisfaction",
    "safety": "safety_satisfaction",
    "social": "social_satisfaction",
}


@dataclass(frozen=True)
class EffectRow:
    """One comparison of an arm with the reference arm on one outcome in one subgroup."""

    outcome: str
    subgroup: str
    arm: str
    reference_arm: str
    estimate: float
    ci_low: float
    ci_high: float
    n_agents: int
    n_seeds: int
    method: str
    role: str  # primary, secondary, or survey
    measured: str  # when: the outcome's tick or the survey


def reference_arm(arms: list[Arm]) -> Arm:
    """The arm others are compared with: `control` when present, else the first."""
    return next((a for a in arms if a.label == "control"), arms[0])


def _plan(arm: Arm) -> dict[str, Any]:
    return arm.first.config.get("analysis") or {}


def _shared_point(arm: Arm) -> dict[str, Any]:
    point = _plan(arm).get("sweep_point") or {}
    return {k: v for k, v in point.items() if not k.startswith("arms.")}


def reference_for(arm: Arm, arms: list[Arm]) -> Arm | None:
    """The arm `arm` is compared with (None when it is a reference itself): `control` or the
    first arm; in a sweep the reference arm at the same point of the fields swept for all."""
    if not any(_plan(a).get("sweep_point") for a in arms):
        ref = reference_arm(arms)
        return None if arm is ref else ref
    bases = [_plan(a).get("arm_base") or "" for a in arms]
    ref_base = "control" if "control" in bases else bases[0]
    if ref_base and (_plan(arm).get("arm_base") or "") == ref_base:
        return None
    for other in arms:
        if (
            other is not arm
            and (_plan(other).get("arm_base") or "") == ref_base
            and _shared_point(other) == _shared_point(arm)
        ):
            return other
    return arms[0] if arm is not arms[0] and not ref_base else None


def seed_pairs(ref: Arm, arm: Arm) -> list[tuple[RunData, RunData]]:
    """(arm run, reference run) of each seed both arms ran, by seed, when every such pair
    shares its seed and population (their agents pair up); else none."""
    ref_runs = {r.seed: r for r in ref.runs}
    arm_runs = {r.seed: r for r in arm.runs}
    pairs = [(arm_runs[s], ref_runs[s]) for s in sorted(arm_runs.keys() & ref_runs.keys())]
    return pairs if all(shares_seed_and_population(a, b) for a, b in pairs) else []


def shares_seed_and_population(a: RunData, b: RunData) -> bool:
    """True when two runs have the same seed, population, map, network and clock."""
    from societas.agents.experiments.schema import SHARED_FIELDS

    return all(a.config.get(k) == b.config.get(k) for k in SHARED_FIELDS)


# ---------------------------------------------------------------- per-run data
def baseline(run: RunData) -> dict[int, dict[str, Any]]:
    """agent id -> its baseline status (numbers as floats, text as str; needs by short name)."""
    out: dict[int, dict[str, Any]] = {}
    for agent_id, variable, value, text in run.rows(
        "SELECT agent_id, variable, value, text FROM baseline ORDER BY ALL"
    ):
        out.setdefault(int(agent_id), {})[variable] = text if value is None else float(value)
    for values in out.values():
        for short, key in NEED_ALIASES.items():
            if key in values:
                values[short] = values[key]
    return out


def treated(run: RunData) -> set[int]:
    """Agents an intervention of this run reached, as far as who it reached was fixed before
    any treatment: every reach of an intervention without `when:` (chosen from profiles), and
    a `when:` intervention's reach at the first intervention tick only (later, the status its
    condition reads may itself be an effect of the treatment)."""
    ivs = run.interventions
    first = min((int(iv.get("tick", 0)) for iv in ivs), default=0)
    conditional = [n for n, iv in enumerate(ivs) if iv.get("when")]
    rows = run.rows(
        "SELECT DISTINCT agent_id FROM treated WHERE NOT list_contains(?::INTEGER[], intervention) "
        "OR tick <= ?",
        conditional,
        first,
    )
    return {int(r[0]) for r in rows}


def subgroups(run: RunData) -> dict[str, set[int] | None]:
    """Subgroup name -> its agents (None = everyone): all, the scenario's selectors on the
    baseline, treated, and terciles of the analysis covariates."""
    from societas.agents.experiments.expressions import ExpressionError, parse_expression

    plan = run.config.get("analysis") or {}
    out: dict[str, set[int] | None] = {"all": None}
    base = baseline(run) if run.has("baseline") else {}
    for name, text in (plan.get("subgroups") or {}).items():
        expr = parse_expression(text)
        members = set()
        for agent_id, values in base.items():
            try:
                if expr(values):
                    members.add(agent_id)
            except (ExpressionError, KeyError, ValueError):
                continue
        out[name] = members
    reached = treated(run) if run.has("treated") else set()
    if reached:
        out["treated"] = reached
    for covariate in plan.get("terciles") or []:
        scores = {i: v[covariate] for i, v in base.items() if isinstance(v.get(covariate), float)}
        if len(scores) < 3:
            continue
        cuts = np.quantile(list(scores.values()), [1 / 3, 2 / 3])
        for k, name in enumerate(("low", "mid", "high")):
            lo = -math.inf if k == 0 else cuts[k - 1]
            hi = math.inf if k == 2 else cuts[k]
            out[f"{covariate} tercile {k + 1} ({name})"] = {
                i for i, v in scores.items() if lo < v <= hi
            }
    return out


def outcome_values(run: RunData, variable: str, tick: int) -> dict[int, float]:
    """agent id -> the outcome's value at `tick`."""
    return {
        int(a): float(v)
        for a, v in run.rows(
            "SELECT agent_id, value FROM outcomes WHERE variable = ? AND tick = ?", variable, tick
        )
    }


def binary_outcome(runs: list[RunData], variable: str) -> bool:
    """Whether a recorded outcome is a share: 0 or 1 at every tick of every run compared."""
    found = [run.outcome_is_binary(variable) for run in runs]
    return any(f is not None for f in found) and all(f in (True, None) for f in found)


def survey_outcomes(run: RunData) -> Iterator[tuple[str, str, dict[int, float], bool]]:
    """(outcome, survey label, agent id -> value, whether a share) per numeric survey
    question; a choice question gives one 0/1 outcome per option (`question = option`), the
    only survey outcomes that are shares."""
    questions = {
        (s["id"], q["id"]): q for s in run.config.get("surveys", []) for q in s["questions"]
    }
    answers: dict[tuple[str, str], dict[int, float]] = {}
    for survey, qid, agent_id, value in run.rows(
        "SELECT survey, question_id, agent_id, value FROM surveys "
        "WHERE value IS NOT NULL AND isfinite(value) ORDER BY ALL"
    ):
        answers.setdefault((survey, qid), {})[int(agent_id)] = float(value)
    for (survey, qid), values in answers.items():
        q = questions.get((survey, qid), {})
        if q.get("kind") == "choice":
            for index, option in enumerate(q.get("options") or []):
                shares = {a: float(v == index) for a, v in values.items()}
                yield f"{survey}.{qid} = {option}", f"survey {survey}", shares, True
        else:
            yield f"{survey}.{qid}", f"survey {survey}", values, False


# ---------------------------------------------------------------- the table
class Measure(NamedTuple):
    """One outcome compared: its values per run of the arm and of the reference arm."""

    outcome: str
    role: str  # primary, secondary or survey
    when: str  # "tick 95", "survey evening_day1"
    arm: list[dict[int, float]]
    ref: list[dict[int, float]]
    share: bool  # 0/1 by its kind: a choice's option, a recorded outcome always 0 or 1


def _pairs(
    arm_values: dict[int, float], ref_values: dict[int, float], members: set[int] | None
) -> tuple[np.ndarray, np.ndarray]:
    ids = sorted(set(arm_values) & set(ref_values))
    if members is not None:
        ids = [i for i in ids if i in members]
    return (
        np.array([arm_values[i] for i in ids], dtype=float),
        np.array([ref_values[i] for i in ids], dtype=float),
    )


def _values(members: set[int] | None, values: dict[int, float]) -> np.ndarray:
    return np.array(
        [v for i, v in sorted(values.items()) if members is None or i in members], dtype=float
    )


def _last_tick(runs: list[RunData]) -> int | None:
    ticks = [run.scalar("SELECT max(tick) FROM outcomes") for run in runs]
    known = [int(t) for t in ticks if t is not None]
    return min(known) if known else None


def effects_table(arms: list[Arm]) -> list[EffectRow]:
    """Every arm against the reference arm, per outcome and subgroup."""
    if len(arms) < 2:
        return []
    first = arms[0].first.config
    primary = (first.get("analysis") or {}).get("primary")
    names = [o["name"] for o in (first.get("outcomes") or {}).get("record", [])]
    rows: list[EffectRow] = []
    for arm in arms:
        ref = reference_for(arm, arms)
        if ref is None:
            continue
        pairs = seed_pairs(ref, arm)
        paired = bool(pairs)
        runs = [a for a, _ in pairs] if paired else arm.runs
        refs = [r for _, r in pairs] if paired else ref.runs
        groups = [subgroups(r) for r in runs]
        ref_groups = groups if paired else [subgroups(r) for r in refs]
        tick = _last_tick(runs + refs)
        measures: list[Measure] = []
        if tick is not None:
            for name in names:
                role = "primary" if name == primary else "secondary"
                measures.append(
                    Measure(
                        name,
                        role,
                        f"tick {tick}",
                        [outcome_values(r, name, tick) for r in runs],
                        [outcome_values(r, name, tick) for r in refs],
                        binary_outcome(runs + refs, name),
                    )
                )
        survey_arm = [{o: (w, v, sh) for o, w, v, sh in survey_outcomes(r)} for r in runs]
        survey_ref = [{o: (w, v, sh) for o, w, v, sh in survey_outcomes(r)} for r in refs]
        for outcome in dict.fromkeys(o for s in survey_arm for o in s):
            when, _, share = next(s[outcome] for s in survey_arm if outcome in s)
            measures.append(
                Measure(
                    outcome,
                    "survey",
                    when,
                    [s[outcome][1] if outcome in s else {} for s in survey_arm],
                    [s[outcome][1] if outcome in s else {} for s in survey_ref],
                    share,
                )
            )
        for outcome, role, when, arm_vals, ref_vals, share in measures:
            for subgroup in dict.fromkeys(g for gs in groups for g in gs):
                members = [gs.get(subgroup, set()) for gs in groups]
                if paired:
                    both = zip(arm_vals, ref_vals, members, strict=True)
                    est = paired_effect([_pairs(a, r, m) for a, r, m in both], share)
                else:
                    est = unpaired_effect(
                        [_values(m, a) for a, m in zip(arm_vals, members, strict=True)],
                        [_values(g.get(subgroup, set()), r)
                         for r, g in zip(ref_vals, ref_groups, strict=True)],
                        share,
                    )  # fmt: skip
                if est.n_agents == 0:
                    continue
                rows.append(_row(outcome, subgroup, arm.label, ref.label, est, role, when))
    return rows


def _row(
    outcome: str, subgroup: str, arm: str, ref: str, est: Estimate, role: str, when: str
) -> EffectRow:
    return EffectRow(
        outcome=outcome,
        subgroup=subgroup,
        arm=arm,
        reference_arm=ref,
        estimate=_r(est.estimate),
        ci_low=_r(est.ci_low),
        ci_high=_r(est.ci_high),
        n_agents=est.n_agents,
        n_seeds=est.n_seeds,
        method=est.method,
        role=role,
        measured=when,
    )


def _r(x: float) -> float:
    return float(f"{x:.6g}") if math.isfinite(x) else math.nan


def write_effects_csv(rows: list[EffectRow], path: Path) -> Path:
    """effects.csv: one row per outcome x subgroup x comparison, columns as COLUMNS."""
    with path.open("w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=COLUMNS)
        out.writeheader()
        for row in rows:
            out.writerow({k: _cell(v) for k, v in asdict(row).items()})
    return path


def _cell(value: Any) -> Any:
    """A CSV cell: NaN (no interval) as an empty cell."""
    return "" if isinstance(value, float) and math.isnan(value) else value


def notes(rows: list[EffectRow], arms: list[Arm]) -> list[str]:
    """What a reader must know to read the table: replication, width, multiplicity."""
    out = []
    seeds = max((r.n_seeds for r in rows), default=0)
    if rows and all("within one run" in r.method for r in rows):
        out.append(
            "One seed: each interval is within one run (over its agents, who interact and "
            "are not independent draws), not a replication. Run with --seeds 0,1,2 for "
            "intervals over seeds."
        )
    elif 1 < seeds < 3:
        out.append(
            f"Only {seeds} seeds: an interval over seeds has {seeds - 1} degree(s) of freedom "
            "and is wide; run more seeds for a usable interval."
        )
    first = reference_arm(arms).first.config
    primary = (first.get("analysis") or {}).get("primary")
    if primary:
        out.append(
            f"Primary outcome: {primary}. Every other row is secondary: with many outcomes "
            "and subgroups some intervals miss zero by chance (multiple comparisons)."
        )
    else:
        out.append(
            "No primary outcome named (analysis.primary): every row is exploratory, and with "
            "many rows some intervals miss zero by chance (multiple comparisons)."
        )
    if any(not r.method.startswith("paired") for r in rows):
        out.append("Unpaired rows: those arms do not share seed and population.")
    if any("one arm has 1 seed" in r.method for r in rows):
        out.append(
            "Pooled t rows: one of the two arms ran a single seed, so its seed-to-seed "
            "variation is assumed equal to the other's; run it with the same seeds."
        )
    if any("no interval" in r.method for r in rows):
        out.append(
            "Rows without an interval: every value was equal (or there were too few), so "
            "there is no spread to estimate one from; the estimate is still what happened."
        )
    return out


def sweep_figure(rows: list[EffectRow], arms: list[Arm]) -> Any | None:
    """The primary (or first) outcome's effect in the whole population against each swept
    field, one line per other swept field's value combination; None without a sweep."""
    import plotly.graph_objects as go

    from societas.cluster.report import figures as F

    points = {a.label: _plan(a).get("sweep_point") or {} for a in arms}
    keys = list(dict.fromkeys(k for p in points.values() for k in p))
    chosen = [r for r in rows if r.subgroup == "all" and r.role == "primary"]
    chosen = chosen or [r for r in rows if r.subgroup == "all" and r.role == "secondary"]
    if not keys or not chosen:
        return None
    outcome = chosen[0].outcome
    chosen = [r for r in chosen if r.outcome == outcome and points.get(r.arm)]
    fig = F.new_figure(f"Effect on {outcome} across the sweep", f"effect on {outcome}")
    fig.update_layout(hovermode="closest")
    for i, key in enumerate(keys):
        series: dict[str, list[EffectRow]] = {}
        for r in chosen:
            rest = {k: v for k, v in points[r.arm].items() if k != key}
            series.setdefault(", ".join(f"{k}={v}" for k, v in rest.items()), []).append(r)
        for j, (name, members) in enumerate(series.items()):
            members.sort(key=lambda r: points[r.arm][key])
            fig.add_trace(
                go.Scatter(
                    x=[points[r.arm][key] for r in members],
                    y=[r.estimate for r in members],
                    error_y={"type": "data", "symmetric": False, "visible": True,
                             "array": [r.ci_high - r.estimate for r in members],
                             "arrayminus": [r.estimate - r.ci_low for r in members]},
                    mode="lines+markers",
                    name=f"{key}" + (f" ({name})" if name else ""),
                    line={"color": F.PALETTE[(i + j) % len(F.PALETTE)]},
                )
            )  # fmt: skip
    fig.update_xaxes(title_text=" / ".join(keys))
    fig.add_hline(y=0, line={"color": "#444", "width": 1})
    return fig
