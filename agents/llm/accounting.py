"""Token, cost and outcome counters per model: what the run cost and what went wrong."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

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


@dataclass
class Accounting:
    """Per-model usage plus event counters (retries by kind, repairs, re-asks, fallbacks)."""

    prices: dict[str, Price] = field(default_factory=dict)
    models: dict[str, ModelUsage] = field(default_factory=dict)
    events: Counter[str] = field(default_factory=Counter)

    def record(self, model: str, usage: Usage, cached: bool) -> None:
        """Add one completed call (HTTP, rules or cache hit) for `model`."""
        m = self.models.setdefault(model, ModelUsage())
        if cached:
            m.cache_hits += 1
            return
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
            "events": dict(self.events),
            "total_cost_usd": sum(m.cost_usd for m in self.models.values()),
        }
