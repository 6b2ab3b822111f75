"""`societas estimate CONFIG`: LLM calls, tokens, cost and wall time of a whole run, before it
starts.

The model endpoints are probed first (`preflight.check_llm`). Then two calibrations on
samples, never the run they predict:
1. answers asked — for each arm, a sample of the agents (`plan_counts`) runs on the `rules`
   policy, which fires the same call sites as a model would and costs nothing; every tick of
   the run when it fits the budget (else whole days), its surveys and interventions kept
   (`estimate_sample.sampled`); answers per task scale by agents and ticks, survey answers
   are counted exactly (selected agents x questions); over fewer ticks than the run, an
   intervention that fires once in it is counted once: a second count run without those
   gives the baseline that scales by agents and ticks, what they add to it scales by the
   agents only (as do the engine seconds);
2. per answer on the model — with an endpoint configured, a few agents run `hours` simulated
   hours on it, with the surveys moved into that time: prompt and completion tokens per
   call, re-asks and fallbacks per answer and seconds per call, per task (a task's rates
   lean on those pooled over every task seen as PRIOR_ASKS answers would; a model task not
   seen gets the pooled rates, the rules run's prompt size and the median completion size).
Calls are the answers times their re-ask rate. Cost uses `llm.prices` of the model each task
routes to (a task routed to `rules` costs nothing). Wall time: the count runs' engine time
scaled, plus the model calls at the measured seconds per call, as many in flight as the
endpoints' concurrency allows but an agent's calls of a tick one after another; arms run one
after another.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from societas.agents.experiments.checks import arm_scenario
from societas.agents.llm.config import FallbackStopConfig, LLMConfig
from societas.agents.llm.errors import LLMConfigError
from societas.agents.scenario import ScenarioConfig, load_scenario
from societas.cluster.experiments.estimate_sample import (
    Plan,
    default_sample,
    one_off,
    plan_counts,
    sampled,
    survey_asks,
)
from societas.cluster.loop.in_process import InProcessRun, run_in_process
from societas.memory.embedding import Embedder

__all__ = ["Estimate", "TaskEstimate", "default_sample", "estimate", "wall_text"]

RULES_MODEL = "rules (not a language model)"
PRIOR_ASKS = 4  # answers' worth of weight a task's measured rates give the pooled ones
NOT_COUNTED = (
    "what a model's answers change downstream (its plans and talk are not the rules "
    "policy's, which the calls are counted on)",
    "retries after transport errors (timeouts, HTTP 429/5xx)",
    "Ray start-up and checkpoints in the wall time",
)


class TaskEstimate(BaseModel):
    """Expected totals of one task over the whole run."""

    calls: float = Field(description="Requests to the model (rules decisions), re-asks included.")
    prompt_tokens: float
    completion_tokens: float
    cost_usd: float = 0.0
    model: str = ""
    asks: float = Field(0.0, description="Answers asked for: the calls less their re-asks.")
    reasks: float = Field(0.0, description="Calls that ask again after an answer failed checks.")
    fallbacks: float = Field(0.0, description="Answers given up on: the call site's fallback.")
    per_answer: str = Field(
        "", description="Where the re-ask and fallback rates come from (measured, pooled, none)."
    )

    def plus(self, other: TaskEstimate) -> TaskEstimate:
        """The sum of two arms' figures for this task."""
        summed = {k: getattr(self, k) + getattr(other, k) for k in _SUMMED}
        return self.model_copy(update=summed)


_SUMMED = (
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "asks",
    "reasks",
    "fallbacks",
)


class Estimate(BaseModel):
    """The whole run's expected LLM use, how the samples were scaled and what is not counted."""

    scenario: str
    agents: int
    ticks: int
    days: float
    provider: str
    tasks: dict[str, TaskEstimate]
    calls: float
    prompt_tokens: float
    completion_tokens: float
    cost_usd: float
    reasks: float = 0.0
    fallbacks: float = 0.0
    per_agent_day: dict[str, float] = Field(description="calls, prompt/completion tokens")
    wall_s: float = Field(0.0, description="Expected wall seconds of the whole run.")
    arms: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="Arm -> calls, cost_usd, wall_s (arms run in turn)."
    )
    sampling: list[str] = Field(
        default_factory=list, description="How the samples were drawn and scaled."
    )
    not_counted: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    calibration: dict[str, Any]


@dataclass
class Calibration:
    """What the model calibration measured, per task (empty without a model)."""

    llm: LLMConfig
    tasks: dict[str, dict[str, int]]
    seconds_per_call: float = 0.0

    def model_tasks(self) -> dict[str, dict[str, int]]:
        """The measured tasks the model answered (not routed to rules)."""
        return {
            t: c for t, c in self.tasks.items() if c.get("requests") and not self.llm.to_rules(t)
        }

    def rates(self, task: str) -> tuple[float, float, str]:
        """(calls per answer, fallbacks per answer, source) of a model task: its own rates
        leaning on those pooled over every task measured as much as PRIOR_ASKS answers
        would (a task asked once says little), the pooled ones for a task not seen, else
        none (1, 0)."""
        seen = self.model_tasks()
        if not seen:
            return 1.0, 0.0, "not measured: first asks only"
        calls, asks, fallbacks = _answers(seen.values())
        reask_rate, fallback_rate = (calls - asks) / asks, fallbacks / asks
        if task not in seen:
            return 1 + reask_rate, fallback_rate, f"pooled over {asks} answers measured"
        own_calls, own_asks, own_fallbacks = _answers([seen[task]])
        weight = own_asks + PRIOR_ASKS
        return (
            1 + (own_calls - own_asks + PRIOR_ASKS * reask_rate) / weight,
            (own_fallbacks + PRIOR_ASKS * fallback_rate) / weight,
            f"measured on {own_asks} answers (pooled {asks})",
        )

    def tokens(self, task: str, counted: Mapping[str, float] | None) -> tuple[float, float]:
        """(prompt, completion) tokens per call of a model task: measured, else the count
        run's prompt size and the median completion size measured."""
        seen = self.model_tasks()
        if task in seen:
            c = seen[task]
            return c["prompt_tokens"] / c["requests"], c["completion_tokens"] / c["requests"]
        prompt, completion = _per_call(counted)
        sizes = [c["completion_tokens"] / c["requests"] for c in seen.values()]
        return prompt, statistics.median(sizes) if sizes else completion


def _answers(tasks: Iterable[dict[str, int]]) -> tuple[int, int, int]:
    """(calls, answers asked for, fallbacks) summed over per-task figures."""
    calls = sum(c["requests"] for c in tasks)
    asks = max(1, calls - sum(c.get("reasks", 0) for c in tasks))
    return calls, asks, sum(c.get("fallbacks", 0) for c in tasks)


def _per_call(counted: Mapping[str, float] | None) -> tuple[float, float]:
    """(prompt, completion) tokens per request of a run's task figures (0 without any)."""
    if not counted or not counted.get("requests"):
        return 0.0, 0.0
    return (
        counted["prompt_tokens"] / counted["requests"],
        counted["completion_tokens"] / counted["requests"],
    )


async def estimate(
    scenario: ScenarioConfig | dict[str, Any] | str | Path,
    *,
    sample: int | None = None,
    hours: float = 1.0,
    model_sample: int = 4,
    embedder: Embedder | None = None,
    workdir: str | Path | None = None,
) -> Estimate:
    """Probe the endpoints, calibrate on samples of `scenario` and scale to its agents,
    ticks and arms."""
    sc = load_scenario(scenario)
    runs = {a.name: arm_scenario(sc, a.name) for a in sc.arms} or {"": sc}
    first = next(iter(runs.values()))
    await _probe(first.llm)
    n = sc.agents.count
    plan = plan_counts(sc, sample, len(runs))
    sampling = list(plan.notes)
    if len(runs) > 1:
        sampling.append(f"each of the {len(runs)} arms counted and summed (they run in turn)")
    started = time.perf_counter()
    m_s = min(n, max(2, model_sample))
    cal, model_ticks = Calibration(llm=first.llm, tasks={}), 0
    with tempfile.TemporaryDirectory(prefix="societas-estimate-", dir=workdir) as tmp:
        counts = await _count_runs(runs, plan, Path(tmp), embedder, sampling)
        if first.llm.provider != "rules":
            model_ticks = max(1, min(plan.ticks, round(hours * 60 / sc.tick_minutes)))
            cal = await _calibrate(first, m_s, model_ticks, Path(tmp) / "model", embedder)
            answers = _answers(cal.model_tasks().values())[1] if cal.model_tasks() else 0
            sampling.append(
                f"tokens, re-asks and fallbacks per answer measured on {answers} model answers "
                f"of {m_s} agents over {model_ticks} tick(s), the surveys moved to its last tick"
            )
    arms: dict[str, dict[str, float]] = {}
    tasks: dict[str, TaskEstimate] = {}
    for name, arm in runs.items():
        counted, engine_s, fewer = _scaled(arm, plan, counts[name])
        if fewer:
            sampling.append(
                f"{name + ': ' if name else ''}tasks {fewer} made fewer calls with the one-off "
                "interventions than without: counted as adding none"
            )
        mine = _arm_tasks(arm, counted, cal)
        arms[name or sc.name] = {
            "calls": sum(t.calls for t in mine.values()),
            "cost_usd": sum(t.cost_usd for t in mine.values()),
            "wall_s": round(_wall(arm, mine, engine_s, cal), 2),
        }
        for task, t in mine.items():
            tasks[task] = tasks[task].plus(t) if task in tasks else t
    if asked := survey_asks(first):
        each = " per arm" if len(runs) > 1 else ""
        sampling.append(f"survey answers counted exactly: {asked:,}{each} (agents x questions)")
    total = {k: sum(getattr(t, k) for t in tasks.values()) for k in _SUMMED}
    days = sc.ticks / sc.ticks_per_day
    agent_days = max(n * days * len(runs), 1e-9)
    not_counted = list(NOT_COUNTED if first.llm.provider != "rules" else NOT_COUNTED[2:])
    if first.llm.provider != "rules" and not cal.model_tasks():
        not_counted.insert(0, "re-asks and fallbacks: the calibration made no model call")
    return Estimate(
        scenario=sc.name,
        agents=n,
        ticks=sc.ticks,
        days=days,
        provider=first.llm.provider,
        tasks=dict(sorted(tasks.items())),
        calls=total["calls"],
        prompt_tokens=total["prompt_tokens"],
        completion_tokens=total["completion_tokens"],
        cost_usd=total["cost_usd"],
        reasks=total["reasks"],
        fallbacks=total["fallbacks"],
        per_agent_day={
            k: total[k] / agent_days for k in ("calls", "prompt_tokens", "completion_tokens")
        },
        wall_s=round(sum(a["wall_s"] for a in arms.values()), 2),
        arms=arms if len(runs) > 1 else {},
        sampling=sampling,
        not_counted=not_counted,
        warnings=_warnings(first.llm, tasks),
        calibration={
            "seconds_per_model_call": round(cal.seconds_per_call, 3),
            "count_sample_agents": plan.agents,
            "count_ticks": plan.ticks,
            "count_provider": RULES_MODEL,
            "token_sample_agents": m_s if model_ticks else 0,
            "token_ticks": model_ticks,
            "token_provider": first.llm.provider if model_ticks else RULES_MODEL,
            "seconds": round(time.perf_counter() - started, 2),
        },
    )


@dataclass
class Counted:
    """One arm's count runs: with every intervention and, when some fire once in the run
    and the count runs are shorter, without those (the baseline they add to)."""

    run: InProcessRun
    base: InProcessRun | None = None


async def _count_runs(
    runs: dict[str, ScenarioConfig],
    plan: Plan,
    folder: Path,
    embedder: Embedder | None,
    sampling: list[str],
) -> dict[str, Counted]:
    """Each arm's sample run on the rules policy, and its baseline without the one-off
    interventions when the sample is shorter than the run; what the samples changed goes
    to `sampling`."""
    counts = {}
    for i, (name, arm) in enumerate(runs.items()):
        rules = LLMConfig(provider="rules", seed=arm.llm.seed, batch_size=arm.llm.batch_size)
        small, notes = sampled(arm, plan.agents, plan.ticks, rules, folder / f"arm{i}")
        counted = Counted(await run_in_process(small, folder / f"counts{i}", embedder=embedder))
        once = one_off(arm) if plan.ticks < arm.ticks else []
        if once:
            calm, _ = sampled(arm, plan.agents, plan.ticks, rules, folder / f"arm{i}", without=once)
        if once and len(calm.interventions) < len(small.interventions):
            counted.base = await run_in_process(calm, folder / f"base{i}", embedder=embedder)
            agents = arm.agents.count / plan.agents
            notes.append(
                f"interventions {once} fire once in the run and are counted once: a second "
                "count run without them is scaled by agents and ticks "
                f"(x{agents * arm.ticks / plan.ticks:.3g}), what they add to it by the agents "
                f"only (x{agents:.3g})"
            )
        sampling += [f"{name}: {note}" if name else note for note in notes]
        counts[name] = counted
    return counts


def _scaled(
    sc: ScenarioConfig, plan: Plan, counted: Counted
) -> tuple[dict[str, dict[str, float]], float, list[str]]:
    """Per-task figures and engine seconds of the whole arm, and the tasks the one-off
    interventions cut: the count run scaled by agents and ticks, or with a baseline, the
    baseline so and what the one-off interventions add to it (never below none) by the
    agents only, since they fire once."""
    agents = sc.agents.count / plan.agents
    scale = agents * sc.ticks / plan.ticks
    run = counted.run.result
    if counted.base is None:
        tasks = {t: {k: v * scale for k, v in c.items()} for t, c in run.llm_tasks.items()}
        return tasks, sum(run.tick_seconds) * scale, []
    base = counted.base.result
    out, fewer = {}, []
    for task in sorted(run.llm_tasks.keys() | base.llm_tasks.keys()):
        events, calm = run.llm_tasks.get(task, {}), base.llm_tasks.get(task, {})
        keys = events.keys() | calm.keys()
        added = {k: events.get(k, 0) - calm.get(k, 0) for k in keys}
        if added.get("requests", 0) < 0:
            fewer.append(task)
        if added.get("requests", 0) <= 0:
            added = {}
        out[task] = {k: calm.get(k, 0) * scale + max(0, added.get(k, 0)) * agents for k in keys}
    engine = sum(base.tick_seconds)
    extra = max(0.0, sum(run.tick_seconds) - engine)
    return out, engine * scale + extra * agents, fewer


async def _probe(llm: LLMConfig) -> None:
    """One clear error, before any calibration, when an endpoint a task of the run goes to
    does not answer with its model (`societas check`'s probe)."""
    from societas.cluster.preflight import check_llm

    if llm.provider == "rules":
        return
    used = sorted(
        {i for task in (*llm.routes, None) if not llm.to_rules(task) for i in llm.route(task)}
    )
    if not used:
        return
    problems = await asyncio.to_thread(check_llm, llm, endpoints=used)
    if problems:
        first = problems[0].line()
        same = [p.setting for p in problems[1:] if p.message == problems[0].message]
        also = f" (likewise {', '.join(same)})" if same else ""
        rest = len(problems) - 1 - len(same)
        more = (
            f"; {rest} more endpoint problem(s): societas check CONFIG lists them" if rest else ""
        )
        raise LLMConfigError(f"{first}{also}{more}")


async def _calibrate(
    sc: ScenarioConfig, agents: int, ticks: int, folder: Path, embedder: Embedder | None
) -> Calibration:
    """Per-task figures of `agents` agents over `ticks` ticks on the model (no budget, no
    fallback stop: the calibration measures both), surveys at its last tick."""
    llm = sc.llm.model_copy(
        update={"budget": None, "fallback_stop": FallbackStopConfig(enabled=False)}
    )
    small, _ = sampled(sc, agents, ticks, llm, folder, surveys_at=ticks - 1)
    run = await run_in_process(small, folder / "run", embedder=embedder)
    cal = Calibration(llm=sc.llm, tasks=run.result.llm_tasks)
    calls = sum(c["requests"] for c in cal.model_tasks().values())
    if calls:
        in_flight = min(agents, sum(e.max_concurrency for e in sc.llm.endpoints) or 1)
        cal.seconds_per_call = sum(run.result.tick_seconds) * in_flight / calls
    return cal


def _arm_tasks(
    sc: ScenarioConfig, counted: dict[str, dict[str, float]], cal: Calibration
) -> dict[str, TaskEstimate]:
    """Per-task totals of one arm: the count runs' answers scaled (`_scaled`; survey answers
    exact), times the calibration's re-ask rate, priced."""
    asks = {t: c["requests"] for t, c in counted.items() if c.get("requests")}
    asks.pop("survey", None)
    if surveys := survey_asks(sc):
        asks["survey"] = surveys
    out = {}
    for task, n_asks in sorted(asks.items()):
        if sc.llm.to_rules(task):
            per_ask, fallback_rate, source = 1.0, 0.0, "rules policy: never re-asked"
            prompt, completion = _per_call(counted.get(task))
        else:
            per_ask, fallback_rate, source = cal.rates(task)
            prompt, completion = cal.tokens(task, counted.get(task))
        calls = n_asks * per_ask
        model = _model_for(sc.llm, task)
        price = sc.llm.prices.get(model)
        cost = 0.0
        if price is not None:
            cost = calls * (prompt * price.input_per_mtok + completion * price.output_per_mtok)
        out[task] = TaskEstimate(
            calls=calls,
            prompt_tokens=calls * prompt,
            completion_tokens=calls * completion,
            cost_usd=cost / 1e6,
            model=model,
            asks=n_asks,
            reasks=calls - n_asks,
            fallbacks=n_asks * fallback_rate,
            per_answer=source,
        )
    return out


def _wall(
    sc: ScenarioConfig, tasks: dict[str, TaskEstimate], engine_s: float, cal: Calibration
) -> float:
    """Expected wall seconds of one arm: the count runs' engine time scaled (`_scaled`), plus
    its model calls over the endpoints' concurrency (an agent's calls of a tick one after
    another)."""
    model_calls = sum(t.calls for name, t in tasks.items() if not sc.llm.to_rules(name))
    in_flight = sum(e.max_concurrency for e in sc.llm.endpoints) or 1
    chain = model_calls / max(sc.agents.count * sc.ticks, 1)
    latency = cal.seconds_per_call
    return engine_s + max(model_calls * latency / in_flight, sc.ticks * chain * latency)


def _warnings(llm: LLMConfig, tasks: dict[str, TaskEstimate]) -> list[str]:
    """A budget below the estimate; a fallback rate the run's fallback stop would end it at."""
    out = []
    tokens = sum(t.prompt_tokens + t.completion_tokens for t in tasks.values())
    if llm.budget is not None and llm.budget < tokens:
        out.append(
            f"llm.budget {llm.budget:,} tokens is below the estimate {tokens:,.0f}: the run "
            f"stops with a checkpoint after about {llm.budget / tokens:.0%} of it"
        )
    stop = llm.fallback_stop
    asks = sum(t.asks for t in tasks.values())  # the stop's window holds rules answers too
    rate = sum(t.fallbacks for t in tasks.values()) / max(asks, 1e-9)
    if stop.enabled and asks >= stop.min_calls and rate > stop.max_rate:
        out.append(
            f"llm.fallback_stop.max_rate {stop.max_rate:g}: {rate:.0%} of the run's structured "
            "answers are expected to fall back, so it will likely stop early with a checkpoint "
            "(use a stronger model, or raise max_rate)"
        )
    return out


def wall_text(seconds: float) -> str:
    """A wall time as a person reads it: under a second, seconds, minutes or hours."""
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _model_for(llm: LLMConfig, task: str) -> str:
    """The model a task's calls go to (the first endpoint of its route)."""
    if llm.to_rules(task) or not llm.endpoints:
        return RULES_MODEL
    return llm.endpoints[llm.route(task)[0]].model
