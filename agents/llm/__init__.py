"""LLM gateway: OpenAI-compatible endpoints with least-loaded dispatch, RPM/TPM limits,
counted retries, validated JSON (repair, re-ask, fallback), an on-disk response cache with
replay, token/cost accounting and batch prompting; plus `provider: rules` (a deterministic
offline policy, NOT a language model)."""

from __future__ import annotations

from societas.agents.llm.batching import batch_json
from societas.agents.llm.config import (
    CacheConfig,
    EndpointConfig,
    LLMConfig,
    Price,
    RetryConfig,
    load_config,
)
from societas.agents.llm.errors import (
    LLMConfigError,
    LLMError,
    LLMInputError,
    LLMRequestError,
    LLMRetryExhaustedError,
    LLMSchemaError,
    ReplayMissError,
    UnknownTaskError,
)
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.rules import known_tasks, register_rule

__all__ = [
    "CacheConfig",
    "EndpointConfig",
    "LLMConfig",
    "LLMConfigError",
    "LLMError",
    "LLMGateway",
    "LLMInputError",
    "LLMRequestError",
    "LLMRetryExhaustedError",
    "LLMSchemaError",
    "Price",
    "ReplayMissError",
    "RetryConfig",
    "UnknownTaskError",
    "batch_json",
    "known_tasks",
    "load_config",
    "register_rule",
]
