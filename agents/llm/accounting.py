"""Token, cost and outcome counters per model: what the run cost and what went wrong."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from societas.agents.llm.config import Price
from societas.agents.llm.messages import Usage


@dataclass
class ModelUsage:
    """Totals for one model (cache hits cost nothing and are counted apart)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0


# Each json() call ends in exactly one of these outcomes (counted per task).
JSON_OUTCOMES = ("valid_first_try", "repaired", "valid_after_reask", "fallbacks", "failed")


@dataclass
class TaskUsage:
    """Calls, tokens and json() outcomes of one task (a call site such as `dialogue_turn`)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    json_calls: int = 0
    valid_first_try: int = 0  # parsed and valid as sent, no repair, no re-ask
    repaired: int = 0  # valid after json-repair (first ask or a re-ask)
    valid_after_reask: int = 0  # valid as sent, but only after a re-ask
    reasks: int = 0
    invalid: int = 0  # replies that were not JSON of the schema (each ask counted)
    fallbacks: int = 0
    failed: int = 0
    dropped_items: int = 0  # entries of valid answers dropped as filler (plans, questions...)
    sources: Counter[str] = field(default_factory=Counter)  # answer_source -> answers
    meaning: Counter[str] = field(default_factory=Counter)  # failed meaning check kind -> n

    def flat(self) -> dict[str, int]:
        """The counters as one flat mapping: `source.<answer_source>` and `meaning.<kind>`
        keys beside the plain ones, so per-task deltas and sums over groups stay simple."""
        out = {k: v for k, v in vars(self).items() if isinstance(v, int)}
        out.update({f"{SOURCE_PREFIX}{k}": n for k, n in sorted(self.sources.items())})
        out.update({f"{MEANING_PREFIX}{k}": n for k, n in sorted(self.meaning.items())})
        return out


SOURCE_PREFIX, MEANING_PREFIX = "source.", "meaning."


def split_counts(tasks: dict[str, dict[str, int]], prefix: str) -> dict[str, dict[str, int]]:
    """From flat per-task counters, the ones under `prefix` (answer sources, meaning check
    failures) per task, prefix removed; tasks without any left out."""
    out: dict[str, dict[str, int]] = {}
    for task, counters in sorted(tasks.items()):
        got = {k.removeprefix(prefix): v for k, v in counters.items() if k.startswith(prefix)}
        if got:
            out[task] = got
    return out


# Latency samples kept per (model, endpoint) until a reader drains them (the engine does each
# tick); beyond this many a gateway nobody drains stops keeping them instead of growing.
MAX_PENDING_LATENCIES = 100_000


@dataclass
class CallFigures:
    """Running totals of calls to one model at one endpoint, and latencies not yet drained."""

    requests: int = 0
    tokens: int = 0
    errors: int = 0
    pending_latency_s: list[float] = field(default_factory=list)


@dataclass
class Accounting:
    """Per-model and per-task usage plus event counters (retries, repairs, re-asks,
    fallbacks)."""

    prices: dict[str, Price] = field(default_factory=dict)
    models: dict[str, ModelUsage] = field(default_factory=dict)
    tasks: dict[str, TaskUsage] = field(default_factory=dict)
    events: Counter[str] = field(default_factory=Counter)
    calls: dict[tuple[str, str], CallFigures] = field(default_factory=dict)

    def record_call(
        self, model: str, endpoint: str, seconds: float, tokens: int = 0, ok: bool = True
    ) -> None:
        """One answered (ok) or failed attempt at `endpoint`, with its wall seconds."""
        c = self.calls.setdefault((model, endpoint), CallFigures())
        if ok:
            c.requests += 1
            c.tokens += tokens
        else:
            c.errors += 1
        if len(c.pending_latency_s) < MAX_PENDING_LATENCIES:
            c.pending_latency_s.append(seconds)

    def drain_latencies(self) -> dict[tuple[str, str], list[float]]:
        """Latencies recorded since the last drain, per (model, endpoint); clears them."""
        out = {}
        for key, c in self.calls.items():
            out[key], c.pending_latency_s = c.pending_latency_s, []
        return out

    def task(self, name: str | None) -> TaskUsage:
        """The counters of task `name` (`other` for calls that name none)."""
        key = name or "other"
        found = self.tasks.get(key)
        if found is None:
            found = self.tasks[key] = TaskUsage()
        return found

    def record(self, model: str, usage: Usage, cached: bool, task: str | None = None) -> None:
        """Add one completed call (HTTP, rules or cache hit) for `model` and `task`."""
        m = self.models.setdefault(model, ModelUsage())
        t = self.task(task)
        if cached:
            m.cache_hits += 1
            t.cache_hits += 1
            return
        t.requests += 1
        t.prompt_tokens += usage.prompt_tokens
        t.completion_tokens += usage.completion_tokens
        m.requests += 1
        m.prompt_tokens += usage.prompt_tokens
        m.completion_tokens += usage.completion_tokens
        price = self.prices.get(model)
        if price is not None:
            m.cost_usd += (
                usage.prompt_tokens * price.input_per_mtok
                + usage.completion_tokens * price.output_per_mtok
            ) / 1e6

    def count(self, event: str, n: int = 1) -> None:
        """Increment a named event counter, e.g. 'retry.429', 'json.repaired'."""
        self.events[event] += n

    def snapshot(self) -> dict[str, Any]:
        """Plain-dict view for logs, metrics and result files."""
        return {
            "models": {k: vars(v).copy() for k, v in self.models.items()},
            "tasks": {k: v.flat() for k, v in sorted(self.tasks.items())},
            "events": dict(self.events),
            "total_cost_usd": sum(m.cost_usd for m in self.models.values()),
        }


Number = TypeVar("Number", int, float)


def merge_tasks(*snapshots: Mapping[str, Mapping[str, Number]]) -> dict[str, dict[str, Number]]:
    """Sum per-task (or per-model) counters of several gateways, groups or ticks into one
    mapping."""
    out: dict[str, dict[str, Number]] = {}
    for snap in snapshots:
        for name, counters in snap.items():
            acc = out.setdefault(name, {})
            for key, value in counters.items():
                acc[key] = acc.get(key, 0) + value
    return dict(sorted(out.items()))
