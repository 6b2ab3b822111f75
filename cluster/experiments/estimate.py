"""`societas estimate CONFIG`: LLM calls, tokens and cost of a whole run, before it starts.

Two short calibrations of a sample of the agents, never the run they predict:
1. call counts — a sample of the agents (`default_sample`) runs one simulated day (or the
   run, if shorter) on the `rules` policy, which fires the same call sites as a model would
   and costs nothing: calls per agent and tick, per task;
2. tokens per call — with an endpoint configured, a smaller sample runs `hours` simulated
   hours on it: prompt and completion tokens per call, per task (a task not seen there keeps
   the rules run's prompt size and the median completion size measured).
Totals scale by agents and ticks; cost uses `llm.prices` of the model each task routes to
(a task routed to `rules` costs nothing). Wall time: the count run's engine time scaled, plus
the model calls at the calibration's measured seconds per call, as many in flight as the
endpoints' concurrency allows but an agent's calls of a tick one after another.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from societas.agents.llm.config import LLMConfig
from societas.agents.scenario import ScenarioConfig, load_scenario
from societas.cluster.loop.in_process import run_in_process
from societas.memory.embedding import Embedder


class TaskEstimate(BaseModel):
    """Expected totals of one task over the whole run."""

    calls: float
    prompt_tokens: float
    completion_tokens: float
    cost_usd: float = 0.0
    model: str = ""


class Estimate(BaseModel):
    """The whole run's expected LLM use, and how it was calibrated."""

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
    per_agent_day: dict[str, float] = Field(description="calls, prompt/completion tokens")
    wall_s: float = Field(0.0, description="Expected wall seconds of the whole run.")
    warnings: list[str] = Field(default_factory=list)
    calibration: dict[str, Any]


def _sample_scenario(sc: ScenarioConfig, agents: int, ticks: int, llm: LLMConfig) -> ScenarioConfig:
    """The scenario shrunk to a sample (interventions kept when they fall inside)."""
    data = sc.model_dump(mode="python")
    data["agents"]["count"] = agents
    data["ticks"] = ticks
    data["groups"] = 1
    if "arms" in data:
        data["arms"] = []  # one arm is what a sample of agents stands for
    data["network"]["k"] = min(
        data["network"]["k"], max(2, agents - data["network"]["isolated"] - 1)
    )
    data["interventions"] = [i for i in data["interventions"] if i["tick"] < ticks]
    for iv in data["interventions"]:
        if iv["select"].get("count") is not None:
            iv["select"]["count"] = max(1, round(iv["select"]["count"] * agents / sc.agents.count))
        if iv["select"].get("ids") is not None:
            iv["select"]["ids"] = [i for i in iv["select"]["ids"] if i < agents] or [0]
    data["llm"] = llm.model_dump(mode="python")
    return load_scenario(data)


def default_sample(agents: int) -> int:
    """A tenth of the agents, at least 100 and at most 2,000 (never more than all).

    Per-agent social calls depend on the population's size (in a small town more of the
    people one meets are friends, and friends talk more): measured on the town at 200
    agents, samples of 40 / 67 / 100 agents over-predict the calls by 41 / 24 / 8 %."""
    return min(agents, max(100, min(2000, agents // 10)))


async def estimate(
    scenario: ScenarioConfig | dict[str, Any] | str | Path,
    *,
    sample: int | None = None,
    hours: float = 1.0,
    model_sample: int = 4,
    embedder: Embedder | None = None,
    workdir: str | Path | None = None,
) -> Estimate:
    """Calibrate on samples of `scenario` and scale to its agents and ticks."""
    sc = load_scenario(scenario)
    n = sc.agents.count
    n_s = min(n, sample or default_sample(n))
    calib_ticks = min(sc.ticks, sc.ticks_per_day)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="societas-estimate-", dir=workdir) as tmp:
        rules = LLMConfig(provider="rules", seed=sc.llm.seed, batch_size=sc.llm.batch_size)
        counted = await run_in_process(
            _sample_scenario(sc, n_s, calib_ticks, rules), Path(tmp) / "counts", embedder=embedder
        )
        measured: dict[str, dict[str, int]] = {}
        model_ticks, model_wall = 0, 0.0
        if sc.llm.provider != "rules":
            model_ticks = max(1, min(calib_ticks, round(hours * 60 / sc.tick_minutes)))
            m_s = min(n, max(2, model_sample))
            run = await run_in_process(
                _sample_scenario(sc, m_s, model_ticks, sc.llm.model_copy(update={"budget": None})),
                Path(tmp) / "tokens",
                embedder=embedder,
            )
            measured = run.result.llm_tasks
            model_wall = sum(run.result.tick_seconds)
    scale = n / n_s * sc.ticks / calib_ticks
    completion_per_call = [
        t["completion_tokens"] / t["requests"] for t in measured.values() if t.get("requests")
    ]
    median_completion = statistics.median(completion_per_call) if completion_per_call else None
    tasks: dict[str, TaskEstimate] = {}
    for task, c in counted.result.llm_tasks.items():
        if not c.get("requests"):
            continue
        calls = c["requests"] * scale
        m = measured.get(task)
        if m and m.get("requests"):
            p_call, c_call = (
                m["prompt_tokens"] / m["requests"],
                m["completion_tokens"] / m["requests"],
            )
        else:
            p_call = c["prompt_tokens"] / c["requests"]
            c_call = c["completion_tokens"] / c["requests"]
            if median_completion is not None:
                c_call = median_completion
        model = _model_for(sc.llm, task)
        price = sc.llm.prices.get(model)
        cost = 0.0
        if price is not None:
            cost = (
                calls * p_call * price.input_per_mtok + calls * c_call * price.output_per_mtok
            ) / 1e6
        tasks[task] = TaskEstimate(
            calls=calls,
            prompt_tokens=calls * p_call,
            completion_tokens=calls * c_call,
            cost_usd=cost,
            model=model,
        )
    days = sc.ticks / sc.ticks_per_day
    total = {
        k: sum(getattr(t, k) for t in tasks.values())
        for k in ("calls", "prompt_tokens", "completion_tokens", "cost_usd")
    }
    agent_days = max(n * days, 1e-9)
    engine_s = sum(counted.result.tick_seconds) * scale
    latency = _seconds_per_call(sc.llm, measured, model_wall, min(n, max(2, model_sample)))
    model_calls = sum(t.calls for name, t in tasks.items() if not sc.llm.to_rules(name))
    in_flight = sum(e.max_concurrency for e in sc.llm.endpoints) or 1
    chain = model_calls / max(n * sc.ticks, 1)  # an agent's calls in a tick, one by one
    model_s = max(model_calls * latency / in_flight, sc.ticks * chain * latency)
    tokens = total["prompt_tokens"] + total["completion_tokens"]
    warnings = []
    if sc.llm.budget is not None and sc.llm.budget < tokens:
        warnings.append(
            f"llm.budget {sc.llm.budget:,} tokens is below the estimate {tokens:,.0f}: the run "
            f"stops with a checkpoint after about {sc.llm.budget / tokens:.0%} of it"
        )
    return Estimate(
        scenario=sc.name,
        agents=n,
        ticks=sc.ticks,
        days=days,
        provider=sc.llm.provider,
        tasks=tasks,
        calls=total["calls"],
        prompt_tokens=total["prompt_tokens"],
        completion_tokens=total["completion_tokens"],
        cost_usd=total["cost_usd"],
        per_agent_day={
            k: total[k] / agent_days for k in ("calls", "prompt_tokens", "completion_tokens")
        },
        wall_s=round(engine_s + model_s, 1),
        warnings=warnings,
        calibration={
            "seconds_per_model_call": round(latency, 3),
            "count_sample_agents": n_s,
            "count_ticks": calib_ticks,
            "count_provider": "rules (not a language model)",
            "token_sample_agents": min(n, max(2, model_sample)) if model_ticks else 0,
            "token_ticks": model_ticks,
            "token_provider": sc.llm.provider if model_ticks else "rules (not a language model)",
            "seconds": round(time.perf_counter() - started, 2),
        },
    )


def _seconds_per_call(
    llm: LLMConfig, measured: dict[str, dict[str, int]], wall: float, agents: int
) -> float:
    """Seconds one model call took in the token calibration: its wall time over its model
    calls, times the calls in flight (its agents ran at once, one call each at a time)."""
    calls = sum(c.get("requests", 0) for t, c in measured.items() if not llm.to_rules(t))
    if not calls:
        return 0.0
    in_flight = min(agents, sum(e.max_concurrency for e in llm.endpoints) or 1)
    return wall * in_flight / calls


def _model_for(llm: LLMConfig, task: str) -> str:
    """The model a task's calls go to (the first endpoint of its route)."""
    if llm.to_rules(task) or not llm.endpoints:
        return "rules (not a language model)"
    return llm.endpoints[llm.route(task)[0]].model
