"""Typed chat messages, requests and results passed between the gateway's parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from societas.agents.llm.errors import LLMInputError

Role = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel):
    """One chat turn; content must be non-empty text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    content: str = Field(min_length=1)


class ChatRequest(BaseModel):
    """What one completion call needs; `task`/`context` are call-site hints, not sent as text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: tuple[ChatMessage, ...]
    temperature: float
    max_tokens: int
    seed: int
    json_mode: bool = False
    schema_name: str | None = None
    json_schema: dict[str, Any] | None = Field(
        default=None, description="The call site's schema, sent per the endpoint's dialect."
    )
    task: str | None = None
    context: dict[str, Any] = Field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        """The sampling parameters that, with model and messages, make the cache key."""
        out: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
        }
        if self.json_schema is not None:
            out["schema"] = self.json_schema
        return out

    def approx_prompt_tokens(self) -> int:
        """Cheap token estimate (4 characters per token) for TPM budgeting."""
        return sum(len(m.content) for m in self.messages) // 4 + 4 * len(self.messages)


class Usage(BaseModel):
    """Token usage of one completion."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatResult(BaseModel):
    """The text a backend returned, with its model, usage and provenance."""

    model_config = ConfigDict(frozen=True)

    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    cached: bool = False
    attempts: int = 1
    endpoint: str | None = Field(default=None, description="Which endpoint answered.")
    cut_off: bool = Field(
        default=False, description="The endpoint stopped at max_tokens (finish_reason length)."
    )


MessagesIn = Sequence[ChatMessage | dict[str, Any]]


def parse_messages(messages: MessagesIn) -> tuple[ChatMessage, ...]:
    """Validate call-site messages; a bad one raises naming its index, field and value."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise LLMInputError(
            f"messages: expected a list of {{role, content}} dicts, got {type(messages).__name__}"
        )
    if not messages:
        raise LLMInputError("messages: must contain at least one message, got []")
    out: list[ChatMessage] = []
    for i, m in enumerate(messages):
        if isinstance(m, ChatMessage):
            out.append(m)
            continue
        try:
            out.append(ChatMessage.model_validate(m))
        except ValidationError as err:
            e = err.errors()[0]
            field = ".".join(str(p) for p in e["loc"])
            value = repr(e.get("input"))
            value = value if len(value) <= 80 else value[:77] + "..."
            where = f"messages[{i}]" + (f".{field}" if field else "")
            raise LLMInputError(f"{where}: {e['msg']} (got {value})") from None
    return tuple(out)
