"""Pydantic configuration of the LLM gateway: endpoints, limits, retries, cache, prices.

Secrets never live here: an endpoint names the environment variable that holds its key.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from societas.agents.llm.errors import LLMConfigError, looks_like_secret

_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
StructuredOutput = Literal["json_schema", "json_object_schema", "json_object", "prompt"]
DEFAULT_ROUTE = "default"
RULES_TARGET = "rules"  # a route target: the rules policy answers that task, no endpoint
# The call sites' task names (the contract with cognition, experiments and memory); a route
# may also name a task a researcher registered with the rules policy.
KNOWN_TASKS = frozenset(
    {
        "attention",
        "attitude_update",
        "consolidation",
        "contradiction",
        "conversation_summary",
        "daily_plan",
        "dialogue_turn",
        "facts",
        "hourly_plan",
        "importance",
        "interview",
        "reaction",
        "reflection_insights",
        "reflection_questions",
        "replan",
        "survey",
        "talk_decision",
        "thought_update",
    }
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EndpointConfig(_Strict):
    """One OpenAI-compatible server (vLLM, SGLang, Ollama, OpenAI, the bundled emulator)."""

    base_url: str = Field(description="Server root including /v1, e.g. http://127.0.0.1:8000/v1.")
    model: str = Field(min_length=1, description="Model name sent in each request.")
    api_key_env: str | None = Field(
        default=None,
        pattern=_ENV_NAME,
        description="NAME of the environment variable holding the API key (never the key). "
        "None sends a placeholder key, fine for local servers without auth.",
    )
    weight: float = Field(default=1.0, gt=0, description="Share of load relative to others.")
    max_concurrency: int = Field(default=64, ge=1, description="Requests in flight at most.")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute, or None.")
    tpm: float | None = Field(default=None, gt=0, description="Tokens per minute, or None.")
    name: str | None = Field(
        default=None,
        min_length=1,
        description="Name that `routes` refer to (default: the model name).",
    )
    structured_output: StructuredOutput = Field(
        default="json_object",
        description="How json() sends its pydantic schema: json_schema (vLLM, SGLang, "
        "OpenAI: response_format type json_schema), json_object_schema (llama-cpp-python's "
        "server: type json_object with a `schema`; it rejects json_schema), json_object "
        "(JSON mode, schema in the prompt), prompt (no response_format, schema in the prompt).",
    )
    send_task_hints: bool = Field(
        default=False,
        description="Send the call-site task name and its structured inputs as an extra body "
        "field `societas`, so the bundled emulator can answer with the rules policy. Only "
        "for the emulator; real servers would ignore or reject it.",
    )

    @property
    def label(self) -> str:
        """The name routes use: `name`, else the model."""
        return self.name or self.model

    @model_validator(mode="before")
    @classmethod
    def _no_inline_secrets(cls, data: Any) -> Any:
        """Refuse an inline key without ever echoing it back in the error."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "json_mode" in data:
            raise ValueError(
                "json_mode was replaced by structured_output (json_schema | "
                "json_object_schema | json_object | prompt)"
            )
        for k in list(data):
            if re.search(r"(key|secret|password|token)$", str(k), re.IGNORECASE):
                data[k] = "<redacted: secrets come from environment variables, see api_key_env>"
        env = data.get("api_key_env")
        if isinstance(env, str) and looks_like_secret(env):
            data["api_key_env"] = "<redacted: this looks like a key; give the variable NAME>"
        return data

    @model_validator(mode="after")
    def _check_url(self) -> EndpointConfig:
        if not re.match(r"^https?://[^\s/]+", self.base_url):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        return self


class RetryConfig(_Strict):
    """Bounded exponential backoff with jitter on 429, 5xx, timeouts and connection errors."""

    max_attempts: int = Field(default=6, ge=1, le=50, description="Attempts per request.")
    base_delay_s: float = Field(default=0.25, ge=0, description="First backoff step.")
    max_delay_s: float = Field(default=20.0, ge=0, description="Cap of one backoff step.")
    max_retry_after_s: float = Field(
        default=60.0, ge=0, description="Cap on a server's Retry-After that we honour."
    )


class CacheConfig(_Strict):
    """On-disk response cache keyed by (model, messages, params, seed)."""

    mode: Literal["off", "read-write", "replay"] = Field(
        default="off",
        description="off: no cache; read-write: use hits, store misses; "
        "replay: hits only, a miss is an error and no HTTP request is ever made.",
    )
    dir: Path | None = Field(default=None, description="Cache directory (required unless off).")

    @model_validator(mode="after")
    def _dir_needed(self) -> CacheConfig:
        if self.mode != "off" and self.dir is None:
            raise ValueError(f"cache.dir is required when cache.mode is {self.mode!r}")
        return self


class Price(_Strict):
    """USD per million tokens for one model."""

    input_per_mtok: float = Field(default=0.0, ge=0)
    output_per_mtok: float = Field(default=0.0, ge=0)


class FallbackStopConfig(_Strict):
    """Stop the run when too many json() calls end in their fallback answer."""

    enabled: bool = Field(default=True, description="False: count fallbacks, never stop.")
    max_rate: float = Field(default=0.05, ge=0, le=1, description="Largest tolerated rate.")
    window: int = Field(default=200, ge=1, description="Rate over the last N json() calls.")
    min_calls: int = Field(
        default=20, ge=1, description="Calls needed before the rate is judged at all."
    )


class LLMConfig(_Strict):
    """Everything the gateway needs; `provider="rules"` needs no endpoint at all."""

    provider: Literal["openai", "rules"] = Field(
        default="openai",
        description="openai: any OpenAI-compatible endpoint list. rules: a deterministic "
        "offline policy answering each cognition call site from its inputs (keywords, "
        "needs, profile, seeded RNG). rules is NOT a language model; it is for smoke "
        "runs, CI and engine benchmarks.",
    )
    endpoints: list[EndpointConfig] = Field(default_factory=list)
    timeout_s: float = Field(default=60.0, gt=0, description="Per-attempt request timeout.")
    retry: RetryConfig = Field(default_factory=RetryConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    temperature: float = Field(default=0.7, ge=0, le=2)
    max_tokens: int = Field(default=512, ge=1, description="Completion budget per call.")
    seed: int = Field(default=0, description="Default request seed; part of the cache key.")
    json_reasks: int = Field(default=1, ge=0, le=5, description="Re-asks after invalid JSON.")
    prices: dict[str, Price] = Field(default_factory=dict, description="Model -> price.")
    batch_size: int = Field(default=20, ge=1, le=200, description="Items per batched prompt.")
    attention_checks: bool = Field(
        default=True,
        description="A model's importance batches carry a mundane and a poignant moment (two "
        "items more), its contradiction batches two plain contradictions and two unrelated "
        "pairs (four more); a batch that misses any is re-asked, then falls back. The rules "
        "policy is never asked them.",
    )
    routes: dict[str, str | list[str]] = Field(
        default_factory=dict,
        description="Task name -> endpoint name(s) or `rules`, e.g. {survey: large, "
        "interview: large, default: rules}: the key `default` serves unlisted tasks (else "
        "every endpoint does); `rules` answers a task with the rules policy (not a language "
        "model), so a model serves only where it matters.",
    )
    fallback_stop: FallbackStopConfig = Field(default_factory=FallbackStopConfig)
    budget: int | None = Field(
        default=None,
        ge=1,
        description="Prompt + completion tokens one invocation (run or resume) may spend; "
        "the run stops with a checkpoint at the tick boundary where the next tick would "
        "pass it. None: no budget.",
    )

    @model_validator(mode="after")
    def _endpoints_needed(self) -> LLMConfig:
        if self.provider == "openai" and not self.endpoints:
            raise ValueError("provider 'openai' needs at least one entry in endpoints")
        names = [e.label for e in self.endpoints]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes and self.routes:
            raise ValueError(f"endpoint names used by routes must be unique, repeated: {dupes}")
        if RULES_TARGET in names and self.routes:
            raise ValueError(f"endpoint name {RULES_TARGET!r} is reserved for the rules policy")
        known = _known_tasks()
        for task, target in self.routes.items():
            if task != DEFAULT_ROUTE and task not in known:
                raise ValueError(
                    f"routes.{task}: no such task (tasks: {', '.join(sorted(known))}, "
                    f"or {DEFAULT_ROUTE})"
                )
            targets = [target] if isinstance(target, str) else target
            if RULES_TARGET in targets and len(targets) > 1:
                raise ValueError(f"routes.{task}: {RULES_TARGET!r} cannot share a route")
            for name in targets:
                if name not in names and name != RULES_TARGET:
                    raise ValueError(
                        f"routes.{task}: no endpoint named {name!r} (endpoints: {names}, "
                        f"or {RULES_TARGET!r} for the rules policy)"
                    )
        return self

    def to_rules(self, task: str | None) -> bool:
        """Whether `task` is answered by the rules policy (provider rules, or routed so)."""
        if self.provider == "rules":
            return True
        target = self.routes.get(task or "", self.routes.get(DEFAULT_ROUTE))
        return target in (RULES_TARGET, [RULES_TARGET])

    def route(self, task: str | None) -> list[int]:
        """Indices of the endpoints serving `task` (its route, else `default`, else all)."""
        target = self.routes.get(task or "", self.routes.get(DEFAULT_ROUTE))
        if target is None:
            return list(range(len(self.endpoints)))
        wanted = {target} if isinstance(target, str) else set(target)
        return [i for i, e in enumerate(self.endpoints) if e.label in wanted]

    def split(self, parts: int) -> LLMConfig:
        """This config with each endpoint's RPM/TPM/concurrency divided across `parts` groups."""
        if parts < 1:
            raise LLMConfigError(f"split(parts): parts must be >= 1, got {parts!r}")
        eps = [
            e.model_copy(
                update={
                    "rpm": e.rpm / parts if e.rpm else None,
                    "tpm": e.tpm / parts if e.tpm else None,
                    "max_concurrency": max(1, math.ceil(e.max_concurrency / parts)),
                }
            )
            for e in self.endpoints
        ]
        return self.model_copy(update={"endpoints": eps})


def calls_label(provider: str) -> str:
    """What a run's calls are: 'rules decisions' without a language model, else 'LLM calls'."""
    return "rules decisions" if provider == "rules" else "LLM calls"


def _known_tasks() -> frozenset[str]:
    """Built-in task names and those registered with the rules policy so far."""
    from societas.agents.llm import rules  # imported late: rules registers at import

    return KNOWN_TASKS | set(rules.known_tasks())


def load_config(data: dict[str, Any] | LLMConfig) -> LLMConfig:
    """Validate a mapping (e.g. the `llm:` section of a YAML config) into an `LLMConfig`.

    Raises `LLMConfigError` listing every bad field with its path and (redacted) value.
    """
    if isinstance(data, LLMConfig):
        return data
    try:
        return LLMConfig.model_validate(data)
    except ValidationError as err:
        raise LLMConfigError.from_validation(err, prefix="llm") from None
