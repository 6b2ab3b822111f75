"""Errors raised by the LLM gateway, and the redaction every error message passes through.

Every message that leaves this package goes through `redact` first, so an API key a server
echoes back (or a user pastes into the wrong field) never reaches a log, a traceback or a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from pydantic import ValidationError

# Shapes of common provider keys (OpenAI `sk-...`, bearer tokens); masked wherever they appear.
_KEY_SHAPES = re.compile(r"(sk-[A-Za-z0-9_\-*]{6,}|Bearer\s+[A-Za-z0-9_\-.=*]{6,})")
_SECRET_FIELD = re.compile(r"(key|secret|password|passwd|token)$", re.IGNORECASE)
_known_secrets: set[str] = set()


def register_secret(value: str) -> None:
    """Remember a secret value (read from the environment) so `redact` masks it everywhere."""
    if value and len(value) >= 4:
        _known_secrets.add(value)


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """Mask every known secret and key-shaped token in `text`."""
    for secret in (*_known_secrets, *extra):
        if secret:
            text = text.replace(secret, "***")
    return _KEY_SHAPES.sub("***", text)


def looks_like_secret(value: str) -> bool:
    """True when `value` looks like a key itself rather than the name of an env variable."""
    return bool(_KEY_SHAPES.fullmatch(value)) or (
        len(value) >= 32 and " " not in value and not value.isupper()
    )


class LLMError(Exception):
    """Base class of every gateway error; its message is always redacted."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class LLMConfigError(LLMError, ValueError):
    """Invalid gateway or emulator configuration; lists every bad field with its path."""

    @classmethod
    def from_validation(cls, err: ValidationError, prefix: str = "") -> LLMConfigError:
        """Build one error listing each bad field as `path: problem (got value)`."""
        lines = []
        for e in err.errors():
            loc = ".".join(str(p) for p in (prefix, *e["loc"]) if p != "")
            last = str(e["loc"][-1]) if e["loc"] else ""
            if not e["loc"] or (e["type"] == "value_error" and isinstance(e.get("input"), dict)):
                lines.append(f"  {loc or '<root>'}: {e['msg']}")  # a whole-model check
                continue
            value = "***" if _SECRET_FIELD.search(last) else repr(e.get("input"))
            if len(value) > 80:
                value = value[:77] + "..."
            lines.append(f"  {loc}: {e['msg']} (got {value})")
        return cls(f"invalid {prefix or 'LLM'} configuration:\n" + "\n".join(lines))


class LLMInputError(LLMError, ValueError):
    """Bad arguments from a call site (messages, task, params); names the field and value."""


class UnknownTaskError(LLMInputError):
    """The `rules` provider was asked for a task it has no rule for."""


class ReplayMissError(LLMError):
    """Replay mode found no cached response for a request; replay never calls HTTP."""


class LLMRequestError(LLMError):
    """A request failed with an error that retrying cannot fix (400, 401, 404, ...)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class BadResponseError(LLMError):
    """A 200 response whose body is not a chat completion; retried like a 5xx."""


class LLMRetryExhaustedError(LLMError):
    """Every attempt failed with a retryable error (429/5xx/timeout/connection)."""

    def __init__(self, message: str, attempts: int, last_kind: str) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_kind = last_kind


class LLMSchemaError(LLMError):
    """The model's output never validated against the schema and no fallback was declared."""


def env_secret(name: str) -> str:
    """Read a secret from the environment variable `name` and register it for redaction."""
    value = os.environ.get(name)
    if not value:
        raise LLMConfigError(f"environment variable {name!r} (api_key_env) is not set or empty")
    register_secret(value)
    return value


class LLMRunStop(LLMError):
    """A condition that stops a run at the next tick boundary, after a checkpoint."""

    kind = "stop"
    checkpoint_tick: int | None = None  # set by the run loop once its checkpoint is written

    def __init__(
        self, message: str, task: str | None = None, endpoint: str | None = None, sample: str = ""
    ) -> None:
        super().__init__(message)
        self.task = task
        self.endpoint = endpoint
        self.sample = redact(sample)

    def info(self) -> dict[str, str]:
        """Plain strings for stats, run.json and the CLI (crosses process boundaries)."""
        return {
            "kind": self.kind,
            "message": str(self),
            "task": self.task or "",
            "endpoint": self.endpoint or "",
            "sample": self.sample,
        }


class LLMFallbackRateExceeded(LLMRunStop):
    """Too many json() calls ended in their fallback answer: the model's output is unusable."""

    kind = "fallback_rate"


class LLMBudgetExhausted(LLMRunStop):
    """The run's token budget would be passed by the next tick."""

    kind = "budget"


def run_stop_from(info: dict[str, str]) -> LLMRunStop:
    """Rebuild the exception from `LLMRunStop.info()` (e.g. sent by a Ray actor)."""
    cls = {"fallback_rate": LLMFallbackRateExceeded, "budget": LLMBudgetExhausted}.get(
        info.get("kind", ""), LLMRunStop
    )
    return cls(
        info.get("message", "run stopped"),
        info.get("task") or None,
        info.get("endpoint") or None,
        info.get("sample", ""),
    )
