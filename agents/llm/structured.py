"""Structured outputs: a call site's pydantic schema in the dialect each endpoint understands.

- `json_schema`: `response_format={"type": "json_schema", "json_schema": {name, schema}}`
  (vLLM, SGLang, OpenAI);
- `json_object_schema`: `{"type": "json_object", "schema": ...}` (llama-cpp-python's server,
  which constrains decoding by a grammar made from the schema and rejects `json_schema`);
- `json_object`: JSON mode only, the schema goes into the prompt;
- `prompt`: no `response_format`, the schema goes into the prompt.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from societas.agents.llm.config import StructuredOutput

_NAME = re.compile(r"[^A-Za-z0-9_-]")


@lru_cache(maxsize=512)
def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of `model` (cached per class; treat as read-only)."""
    return model.model_json_schema()


def response_format(dialect: StructuredOutput, name: str, schema: dict[str, Any] | None) -> Any:
    """The `response_format` body field for `dialect`, or None when none is sent."""
    if schema is None or dialect == "prompt":
        return None
    if dialect == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": _NAME.sub("_", name)[:64] or "reply", "schema": schema},
        }
    if dialect == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


def schema_instruction(schema: dict[str, Any]) -> str:
    """The text appended to the last user message when the schema travels in the prompt."""
    shape = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
    return f"\n\nReply with ONLY one JSON object matching this JSON schema: {shape}"


def wire_messages(
    messages: list[dict[str, str]], dialect: StructuredOutput, schema: dict[str, Any] | None
) -> list[dict[str, str]]:
    """Messages as sent: the schema appended to the last user turn unless the server
    enforces it (json_schema, json_object_schema)."""
    if schema is None or dialect in ("json_schema", "json_object_schema"):
        return messages
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        if out[i]["role"] == "user":
            out[i] = {**out[i], "content": out[i]["content"] + schema_instruction(schema)}
            break
    return out
