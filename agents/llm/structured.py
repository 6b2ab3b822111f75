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


# llama.cpp's schema-to-grammar conversion ignores `minimum`/`maximum` (a 1..10 score came
# back as 1093756287453639) but honours `enum` and `maxLength`: small integer ranges become
# enums, bounded floats a grid of values, and unbounded strings get a length cap so a tiny
# model cannot ramble to max_tokens.
ENUM_MAX_RANGE = 100
NUMBER_STEPS = 20  # a bounded float (an attitude 0..10) becomes 21 evenly spaced values
STRING_CAP = 120
_grammar_cache: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}


def grammar_friendly(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` that a grammar-constrained server enforces fully (cached)."""
    hit = _grammar_cache.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    out = _rewrite(schema)
    _grammar_cache[id(schema)] = (schema, out)
    return out


def _rewrite(node: Any) -> Any:
    if isinstance(node, list):
        return [_rewrite(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _rewrite(v) for k, v in node.items()}
    lo, hi = out.get("minimum"), out.get("maximum")
    small_range = isinstance(lo, int) and isinstance(hi, int) and 0 <= hi - lo <= ENUM_MAX_RANGE
    if out.get("type") == "integer" and small_range:
        assert isinstance(lo, int) and isinstance(hi, int)
        out.pop("minimum")
        out.pop("maximum")
        out["enum"] = list(range(lo, hi + 1))
    numeric = isinstance(lo, int | float) and isinstance(hi, int | float) and hi > lo
    if out.get("type") == "number" and numeric:  # a bounded float: NUMBER_STEPS + 1 values
        assert isinstance(lo, int | float) and isinstance(hi, int | float)
        out.pop("minimum")
        out.pop("maximum")
        out["enum"] = sorted(
            {round(lo + (hi - lo) * i / NUMBER_STEPS, 4) for i in range(NUMBER_STEPS + 1)}
        )
    if out.get("type") == "string" and "maxLength" not in out and "enum" not in out:
        out["maxLength"] = STRING_CAP
    return out


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
        return {"type": "json_object", "schema": grammar_friendly(schema)}
    return {"type": "json_object"}


def bare(node: Any) -> Any:
    """A schema without its descriptions and titles: the shape alone, no prose to echo."""
    if isinstance(node, list):
        return [bare(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        k: bare(v)
        for k, v in node.items()
        if not (k in ("description", "title") and isinstance(v, str))
    }


def schema_instruction(schema: dict[str, Any]) -> str:
    """The text appended to the task's prompt when the schema travels in the prompt (its
    shape only: a description in the prompt comes back as an answer)."""
    shape = json.dumps(bare(schema), separators=(",", ":"), ensure_ascii=False)
    return f"\n\nReply with ONLY one JSON object matching this JSON schema: {shape}"


def wire_messages(
    messages: list[dict[str, str]], dialect: StructuredOutput, schema: dict[str, Any] | None
) -> list[dict[str, str]]:
    """Messages as sent: the schema appended to the first user turn (the task, not a
    re-ask's correction) unless the server enforces it (json_schema, json_object_schema)."""
    if schema is None or dialect in ("json_schema", "json_object_schema"):
        return messages
    out = list(messages)
    for i in range(len(out)):
        if out[i]["role"] == "user":
            out[i] = {**out[i], "content": out[i]["content"] + schema_instruction(schema)}
            break
    return out
