"""One OpenAI-compatible chat server on loopback for tests: each request is answered with the
text a test's function returns for its JSON body, and every body is kept."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

# The answer's text, or (text, finish_reason) to say why it ended ("length": at max_tokens).
Answer = Callable[[dict[str, Any]], str | tuple[str, str]]


def completion(text: str, model: str, n: int, finish_reason: str = "stop") -> dict[str, Any]:
    """A chat completion holding `text` (fixed token counts)."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}}
    return {
        "id": f"c{n}",
        "object": "chat.completion",
        "model": model,
        "choices": [{**choice, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a request asks its answer to follow ({} when none)."""
    return (body.get("response_format") or {}).get("schema") or {}


def user_text(body: dict[str, Any]) -> str:
    """The first user message of a request."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


@asynccontextmanager
async def chat_server(
    answer: Answer, model: str = "scripted"
) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """(base URL, request bodies received) of a server on 127.0.0.1 answering `answer(body)`."""
    seen: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        out = answer(body)
        text, finish = out if isinstance(out, tuple) else (out, "stop")
        return web.json_response(completion(text, model, len(seen), finish))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        await runner.cleanup()
