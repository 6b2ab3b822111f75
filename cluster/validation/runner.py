"""Run a suite over seeds on a provider and write validation.json and validation.html."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from societas.agents.llm.config import LLMConfig
from societas.agents.scenario import ScenarioConfigError, load_scenario
from societas.cluster.validation.inputs import ValidationInputError, load_provider, model_name
from societas.cluster.validation.intervals import METHOD, over_seeds
from societas.cluster.validation.measured import Measured
from societas.cluster.validation.records import Metric, Report, Unpublished, load_suite_data
from societas.cluster.validation.suite import Suite, merged, patch_for
from societas.cluster.validation.tables import RunTables

RULES_CAVEAT = (
    "The rules policy ran: a deterministic offline policy, not a language model. Its figures "
    "show how far this policy is from the published runs; it is not tuned to them."
)


def _suites() -> dict[str, Suite]:
    from societas.cluster.validation import hurricane, polarization, smallville

    return {s.name: s for s in (smallville.SUITE, polarization.SUITE, hurricane.SUITE)}


SUITES = ("smallville", "polarization", "hurricane")


def _scenario(
    suite: Suite,
    condition: str,
    seed: int,
    agents: int,
    hours: float | None,
    llm: LLMConfig,
    inputs: Path,
) -> Any:
    base = load_scenario(suite.config).model_dump(mode="json", exclude_unset=True)
    inputs.mkdir(parents=True, exist_ok=True)
    raw = merged(base, patch_for(suite.conditions[condition], seed, agents, inputs))
    raw["seed"] = seed
    raw["name"] = f"{suite.name}-{condition}"
    raw.setdefault("agents", {})["count"] = agents
    if hours is not None:
        raw["ticks"] = max(1, round(hours * 60 / raw.get("tick_minutes", 30)))
        raw["interventions"] = [i for i in raw.get("interventions", []) if i["tick"] < raw["ticks"]]
    raw["llm"] = llm.model_dump(mode="json", exclude_unset=True)
    try:
        return load_scenario(raw)
    except ScenarioConfigError as err:
        problems = "; ".join(f"{path}: {msg}" for path, msg in err.problems)
        raise ValidationInputError(f"{suite.name}: {problems}") from None


def _check_reachable(llm: LLMConfig, provider: str) -> None:
    """One clear line when the provider's endpoint does not answer, before any run starts."""
    import asyncio

    from societas.cluster.experiments.interview import reachable

    if llm.provider == "rules":
        return
    try:
        asyncio.run(reachable(llm))
    except ValueError as err:
        raise ValidationInputError(
            f"--provider: {provider}: {str(err).removeprefix('--endpoint: ')}"
        ) from None


def _sizes(suite: Suite, agents: int | None, hours: float | None) -> tuple[int, float | None]:
    n = suite.default_agents if agents is None else agents
    if n < 2:
        raise ValidationInputError(f"--agents: {n} is fewer than 2")
    if suite.max_agents is not None and n > suite.max_agents:
        raise ValidationInputError(
            f"--agents: {n}: the {suite.name} suite has {suite.max_agents} residents"
        )
    if hours is not None and hours <= 0:
        raise ValidationInputError(f"--hours: {hours} must be more than 0")
    return n, hours


def validate(
    suite_name: str,
    out: str | Path,
    *,
    provider: str = "rules",
    seeds: list[int] | None = None,
    agents: int | None = None,
    hours: float | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> Report:
    """Run `suite_name` for each seed (and condition) on `provider`; write validation.json and
    validation.html into `out` and return the report."""
    from societas.cluster.society import Society
    from societas.cluster.validation.page import write_page

    suites = _suites()
    if suite_name not in suites:
        raise ValidationInputError(f"suite: unknown {suite_name!r}; choose one of {list(SUITES)}")
    suite = suites[suite_name]
    seeds = [0, 1, 2] if seeds is None else seeds
    if not seeds:
        raise ValidationInputError("--seeds: no seed given")
    llm = load_provider(provider)
    n, hours = _sizes(suite, agents, hours)
    _check_reachable(llm, provider)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    per_seed: list[dict[str, Measured]] = []
    run_dirs: list[str] = []
    ticks_run = 0
    for seed in seeds:
        runs: dict[str, RunTables] = {}
        for condition in suite.conditions:
            run_dir = folder / "runs" / condition / f"seed-{seed}"
            inputs = folder / "inputs" / condition / f"seed-{seed}"
            cfg = _scenario(suite, condition, seed, n, hours, llm, inputs)
            ticks_run = cfg.ticks * cfg.tick_minutes
            if on_progress:
                on_progress(f"{suite.name}: {condition}, seed {seed} ({cfg.ticks} ticks)")
            Society.from_scenario(cfg, out=run_dir).run(backend="local")
            runs[condition] = RunTables(run_dir, cfg)
            run_dirs.append(str(run_dir.relative_to(folder)))
        per_seed.append(suite.measure(runs))
    report = _report(suite, llm, provider, seeds, n, ticks_run / 60, per_seed, began)
    report.runs.extend(run_dirs)
    (folder / "validation.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    write_page(report, folder / "validation.html")
    return report


def _report(
    suite: Suite,
    llm: LLMConfig,
    provider: str,
    seeds: list[int],
    agents: int,
    hours: float,
    per_seed: list[dict[str, Measured]],
    began: float,
) -> Report:
    data = load_suite_data(suite.name)
    rules = llm.provider == "rules"
    metrics: list[Metric] = []
    unpublished: list[Unpublished] = []
    for value in data.values:
        got = [m.get(value.name, Measured(None, "not measured")) for m in per_seed]
        values = [g.value for g in got]
        mean, ci = over_seeds(values, share=value.kind == "share")
        notes = list(dict.fromkeys(g.note for g in got if g.note))
        if any(g.detail for g in got):
            notes.append("per seed: " + ", ".join(g.detail or "-" for g in got))
        if len(seeds) == 1 and mean is not None:
            notes.append("one seed: no interval over seeds")
        note = "; ".join(notes)
        if value.published is None:
            unpublished.append(
                Unpublished(
                    name=value.name,
                    source=data.source(value),
                    ours_mean=mean,
                    ours_ci=ci,
                    per_seed=values,
                    note=note,
                )
            )
            continue
        metrics.append(
            Metric(
                name=value.name,
                published=value.published,
                source=data.source(value),
                ours_mean=mean,
                ours_ci=ci,
                n_seeds=sum(v is not None for v in values),
                provider="rules" if rules else provider,
                model=model_name(llm),
                kind=value.kind,
                per_seed=values,
                interval_method=METHOD,
                published_range=(
                    None if value.low is None or value.high is None else [value.low, value.high]
                ),
                note=note,
            )
        )
    return Report(
        suite=suite.name,
        provider="rules" if rules else provider,
        model=model_name(llm),
        rules_policy=rules,
        seeds=seeds,
        agents=agents,
        hours=round(hours, 3),
        elapsed_s=round(time.monotonic() - began, 2),
        caveat=RULES_CAVEAT if rules else "",
        protocol=data.protocol,
        sources=data.sources,
        metrics=metrics,
        unpublished=unpublished,
    )
