"""The fallback-rate guard: json() outcomes over a sliding window, and the stop it raises.

A model that answers with unusable JSON makes every call site fall back to its default;
without this guard such a run "succeeds" with canned answers. Past `max_rate` over the last
`window` calls (once `min_calls` were seen) the gateway holds an `LLMFallbackRateExceeded`
naming the task, the endpoint and a sample of the bad answer; the run loop checkpoints and
stops on it at the tick boundary.
"""

from __future__ import annotations

from collections import deque

from societas.agents.llm.config import FallbackStopConfig
from societas.agents.llm.errors import LLMFallbackRateExceeded

SAMPLE_CHARS = 300


class FallbackGuard:
    """Sliding window of json() outcomes (True = fell back)."""

    def __init__(self, cfg: FallbackStopConfig) -> None:
        self.cfg = cfg
        self.window: deque[bool] = deque(maxlen=cfg.window)
        self.fallbacks = 0  # inside the window
        self.last: tuple[str | None, str | None, str] | None = None

    def record(
        self, fell_back: bool, task: str | None, endpoint: str | None, answer: str
    ) -> LLMFallbackRateExceeded | None:
        """Note one outcome; returns the stop when the rate passes the limit."""
        if len(self.window) == self.window.maxlen and self.window[0]:
            self.fallbacks -= 1
        self.window.append(fell_back)
        if fell_back:
            self.fallbacks += 1
            self.last = (task, endpoint, answer[:SAMPLE_CHARS])
        if not self.cfg.enabled or self.last is None or len(self.window) < self.cfg.min_calls:
            return None
        rate = self.fallbacks / len(self.window)
        if rate <= self.cfg.max_rate:
            return None
        task_, endpoint_, sample = self.last
        return LLMFallbackRateExceeded(
            f"{rate:.0%} of the last {len(self.window)} structured LLM calls fell back to "
            f"default answers (limit {self.cfg.max_rate:.0%}); last: task {task_!r} on "
            f"endpoint {endpoint_ or '?'}, answer {sample!r}. Check the endpoint's "
            "structured_output setting and the model, or raise llm.fallback_stop.max_rate.",
            task_,
            endpoint_,
            sample,
        )
