"""A scripted model server on loopback that never answers: it copies the prompt's example,
echoes the schema's descriptions as every text field, or counts instead of rating."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from tests.chat_server import chat_server

Mode = Literal["example", "schema"]


def first_example(text: str) -> Any:
    """The first JSON object written in `text`, or None."""
    decoder = json.JSONDecoder()
    i = text.find('{"')
    while i != -1:
        try:
            return decoder.raw_decode(text, i)[0]
        except ValueError:
            i = text.find('{"', i + 1)
    return None


def _description(schema: dict[str, Any]) -> str:
    """The schema's own description (a pydantic class docstring)."""
    for node in (schema, *schema.get("$defs", {}).values()):
        if isinstance(node.get("description"), str):
            return str(node["description"])
    return "no description"


def _fill(schema: dict[str, Any], defs: dict[str, Any], text: str, n: int) -> Any:
    """A value of `schema` with every string set to `text`, lists of `n` counting numbers."""
    if "$ref" in schema:
        return _fill(defs[schema["$ref"].split("/")[-1]], defs, text, n)
    kind = schema.get("type")
    if "anyOf" in schema:
        return _fill(schema["anyOf"][0], defs, text, n)
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _fill(v, defs, text, n) for k, v in props.items()}
    if kind == "array":
        return [_fill(schema.get("items", {}), defs, text, n) for _ in range(n)]
    if kind == "string":
        return text
    if kind == "boolean":
        return False
    return schema.get("minimum", 1)


def _counting(items: int) -> dict[str, Any]:
    """Importance 'ratings' that count: 10, 1, 2, 3, ..."""
    return {"results": [{"score": s} for s in [10, *range(1, items)]]}


def answer(body: dict[str, Any], mode: Mode) -> str:
    """What the parrot says to one chat request."""
    messages = body["messages"]
    first = next(m["content"] for m in messages if m["role"] == "user")
    schema = (body.get("response_format") or {}).get("schema") or {}
    if "Items:\n" in first:  # a batched rating: count instead of rate
        items = first.split("Items:\n", 1)[1].split("\n\n", 1)[0].count("\n") + 1
        return json.dumps(_counting(items))
    if mode == "example":
        example = first_example(first)
        if example is not None:
            return json.dumps(example)
    words = _description(schema)
    return json.dumps(_fill(schema, schema.get("$defs", {}), words, 4))


@asynccontextmanager
async def parrot(mode: Mode = "example") -> AsyncIterator[tuple[str, list[str]]]:
    """(base URL, answers served) of a parrot server on 127.0.0.1; endpoints pointing at it
    use structured_output json_object_schema, so the schema travels in the request."""
    served: list[str] = []

    def say(body: dict[str, Any]) -> str:
        served.append(answer(body, mode))
        return served[-1]

    async with chat_server(say, model="parrot") as (url, _):
        yield url, served


def endpoint(url: str) -> dict[str, Any]:
    """The endpoint config of a parrot server."""
    return {"base_url": url, "model": "parrot", "structured_output": "json_object_schema"}
