"""Stopping a run for its LLM: a fallback rate past the limit, or the token budget.

The gateway of each group detects its fallback rate (`LLMFallbackRateExceeded`) and
reports it in its tick stats; the budget is global, so the driver counts tokens across
groups. Either way the stop happens at a tick boundary: write a checkpoint, then raise the
`LLMRunStop`, whose message names the task, the endpoint and a sample of the bad answer (or
the tokens spent) and how to continue (`societas resume RUN --budget-tokens M`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from societas.agents.llm.accounting import merge_tasks
from societas.agents.llm.errors import LLMBudgetExhausted, LLMRunStop, run_stop_from

CheckpointFn = Callable[[int, Sequence[Any]], Awaitable[Any]]


class LLMStopWatch:
    """Called after every tick with its report; checkpoints and raises when a stop is due."""

    def __init__(
        self,
        budget_tokens: int | None,
        ticks: int,
        checkpoint: CheckpointFn,
        handles: Sequence[Any],
    ) -> None:
        self.budget = budget_tokens
        self.ticks = ticks
        self.checkpoint = checkpoint
        self.handles = handles
        self.spent = 0  # tokens of the run (a resume starts from its checkpoint's)
        self.tasks: dict[str, dict[str, int]] = {}  # per task, summed over groups and ticks
        self.models: dict[str, dict[str, float]] = {}  # per model, likewise
        self._counted: int | None = None  # the last tick counted

    def carry(self, tasks: dict[str, dict[str, int]], models: dict[str, dict[str, float]]) -> None:
        """Add what earlier invocations of the run counted (resume: the checkpoint's)."""
        self.tasks = merge_tasks(self.tasks, tasks)
        self.models = merge_tasks(self.models, models)

    def count(self, report: Any) -> None:
        """Add the tick's per-task deltas and tokens (once per tick, before a checkpoint)."""
        if self._counted == report.tick:
            return
        self._counted = report.tick
        self.spent += sum(s.llm_tokens for s in report.groups)
        self.tasks = merge_tasks(self.tasks, *(s.llm_tasks for s in report.groups))
        self.models = merge_tasks(self.models, *(s.llm_models for s in report.groups))

    def due(self, report: Any) -> LLMRunStop | None:
        """The stop this tick calls for, if any."""
        self.count(report)
        tick_tokens = sum(s.llm_tokens for s in report.groups)
        for s in report.groups:
            if getattr(s, "llm_stop", None):
                return run_stop_from(s.llm_stop)
        last_tick = report.tick + 1 >= self.ticks
        if self.budget is None or last_tick or self.spent + tick_tokens <= self.budget:
            return None
        return LLMBudgetExhausted(
            f"token budget: {self.spent:,} of {self.budget:,} LLM tokens spent after tick "
            f"{report.tick}, and the next tick would pass it (the last one took "
            f"{tick_tokens:,}). Continue with `societas resume RUN_DIR --budget-tokens M`."
        )

    async def __call__(self, report: Any) -> None:
        """Checkpoint (state before tick+1) and raise when a stop is due."""
        stop = self.due(report)
        if stop is None:
            return
        await self.checkpoint(report.tick, self.handles)
        stop.checkpoint_tick = report.tick + 1
        raise stop
