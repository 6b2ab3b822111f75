"""A scripted OpenAI-compatible model server on loopback for cognition tests: it answers each
chat request with what the test's `reply` returns for its schema and keeps every request."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from tests.chat_server import chat_server, schema_of

Reply = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]


@asynccontextmanager
async def scripted(reply: Reply) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """(base URL, requests received) of a server answering `reply(schema, messages)`."""

    def answer(body: dict[str, Any]) -> str:
        return json.dumps(reply(schema_of(body), body["messages"]))

    async with chat_server(answer) as served:
        yield served


def gateway_config(url: str) -> dict[str, Any]:
    """A gateway config sending every task to the scripted server (schema in the request)."""
    endpoint = {"base_url": url, "model": "scripted", "structured_output": "json_object_schema"}
    return {"endpoints": [endpoint]}
