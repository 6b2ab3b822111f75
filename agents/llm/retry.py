"""Which errors are retried, how long to wait (backoff with jitter, Retry-After), and the loop.

Waiting is `asyncio.sleep`, so other coroutines run during a backoff. The openai client's own
retries are disabled (max_retries=0): every retry happens here and is counted.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from societas.agents.llm.config import RetryConfig
from societas.agents.llm.errors import BadResponseError, LLMRequestError, LLMRetryExhaustedError

T = TypeVar("T")


def _openai_errors() -> Any:
    """The openai module if a client was ever made (only then can its errors be raised):
    a process on the rules policy never imports it (it is large)."""
    return sys.modules.get("openai")


def classify(exc: BaseException) -> str | None:
    """A short kind for a retryable error ('429', '5xx', 'timeout', 'connection'), else None."""
    if isinstance(exc, BadResponseError):
        return "bad_response"
    openai = _openai_errors()
    timeouts = (
        (asyncio.TimeoutError,)
        if openai is None
        else (openai.APITimeoutError, asyncio.TimeoutError)
    )
    if isinstance(exc, timeouts):
        # The SDK's aiohttp transport reports a refused connection as ConnectTimeout.
        return "connection" if "Cannot connect" in str(exc.__cause__) else "timeout"
    if openai is None:
        return None
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.RateLimitError):
        return "429"
    if isinstance(exc, openai.APIStatusError) and (
        exc.status_code >= 500 or exc.status_code in (408, 409)
    ):
        return "5xx" if exc.status_code >= 500 else str(exc.status_code)
    return None


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, or Retry-After seconds/date)."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def backoff_s(attempt: int, cfg: RetryConfig, rng: random.Random) -> float:
    """Equal-jitter exponential backoff for the given 1-based failed attempt."""
    step = min(cfg.max_delay_s, cfg.base_delay_s * (2 ** (attempt - 1)))
    return step / 2 + rng.uniform(0, step / 2)


def describe(exc: BaseException) -> str:
    """One line about an HTTP failure, with status code where there is one (redacted later)."""
    status = getattr(exc, "status_code", None)
    msg = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return f"{type(exc).__name__}{f' {status}' if status else ''}: {msg}"


async def call_with_retries(
    attempt_fn: Callable[[], Awaitable[T]],
    cfg: RetryConfig,
    rng: random.Random,
    on_retry: Callable[[str, float], None] | None = None,
    where: str = "",
) -> tuple[T, int]:
    """Run `attempt_fn` until it succeeds; return (result, attempts used).

    Retryable failures sleep max(backoff, Retry-After) without blocking the loop; a
    non-retryable error raises `LLMRequestError` at once; running out raises
    `LLMRetryExhaustedError`. The original exception is never chained (its request holds
    the Authorization header).
    """
    last = ""
    last_kind = ""
    for attempt in range(1, cfg.max_attempts + 1):
        try:
            return await attempt_fn(), attempt
        except Exception as exc:  # classified below; unknown errors propagate
            kind = classify(exc)
            if kind is None:
                openai = _openai_errors()
                if openai is not None and isinstance(exc, openai.APIStatusError):
                    raise LLMRequestError(f"{where}{describe(exc)}", exc.status_code) from None
                raise
            last, last_kind = describe(exc), kind
            if attempt == cfg.max_attempts:
                break
            delay = backoff_s(attempt, cfg, rng)
            hinted = retry_after_s(exc)
            if hinted is not None:
                delay = max(delay, min(hinted, cfg.max_retry_after_s))
            if on_retry is not None:
                on_retry(kind, delay)
            await asyncio.sleep(delay)
    raise LLMRetryExhaustedError(
        f"{where}gave up after {cfg.max_attempts} attempts; last error: {last}",
        attempts=cfg.max_attempts,
        last_kind=last_kind,
    ) from None
