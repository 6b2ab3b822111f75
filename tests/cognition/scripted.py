"""A scripted OpenAI-compatible model server on loopback for cognition tests: it answers each
chat request with what the test's `reply` returns for its schema and keeps every request."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

Reply = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]


def user_text(body: dict[str, Any]) -> str:
    """The first user message of a request."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


@asynccontextmanager
async def scripted(reply: Reply) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """(base URL, requests received) of a server answering `reply(schema, messages)`."""
    seen: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        schema = (body.get("response_format") or {}).get("schema") or {}
        text = json.dumps(reply(schema, body["messages"]))
        choice = {"index": 0, "message": {"role": "assistant", "content": text}}
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        return web.json_response(
            {
                "id": f"s{len(seen)}",
                "object": "chat.completion",
                "model": "scripted",
                "choices": [{**choice, "finish_reason": "stop"}],
                "usage": usage,
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        await runner.cleanup()


def gateway_config(url: str) -> dict[str, Any]:
    """A gateway config sending every task to the scripted server (schema in the request)."""
    endpoint = {"base_url": url, "model": "scripted", "structured_output": "json_object_schema"}
    return {"endpoints": [endpoint]}
