"""One chat completion over HTTP to one endpoint, the structured output in its dialect."""

from __future__ import annotations

import json
from typing import Any

from societas.agents.llm.errors import BadResponseError
from societas.agents.llm.messages import ChatRequest, ChatResult, Usage
from societas.agents.llm.pool import Endpoint
from societas.agents.llm.structured import response_format, wire_messages


def request_body(ep: Endpoint, req: ChatRequest) -> dict[str, Any]:
    """The JSON body of `/chat/completions` for `req` on endpoint `ep`."""
    dialect = ep.cfg.structured_output
    schema = req.json_schema if req.json_mode else None
    messages = [{"role": m.role, "content": m.content} for m in req.messages]
    body: dict[str, Any] = {
        "model": ep.cfg.model,
        "messages": wire_messages(messages, dialect, schema),
        "temperature": req.temperature,
        "max_tokens": req.max_tokens,
        "seed": req.seed,
    }
    if req.json_mode:
        fmt = response_format(dialect, req.schema_name or "reply", schema)
        if fmt is None and schema is None and dialect != "prompt":
            fmt = {"type": "json_object"}  # JSON wanted, no schema given: JSON mode
        if fmt is not None:
            body["response_format"] = fmt
    if ep.cfg.send_task_hints and req.task is not None:
        body["societas"] = {"task": req.task, "context": req.context, "seed": req.seed}
    return body


async def send_chat(ep: Endpoint, req: ChatRequest) -> ChatResult:
    """POST the request; a 200 whose body is not a chat completion is a `BadResponseError`."""
    # client.post with a ready JSON body is the SDK's documented path for raw requests; it
    # skips `chat.completions.create`'s TypedDict transform and model construction, the
    # larger part of the client's CPU per call. Auth, timeouts and errors are unchanged.
    raw = await ep.client.post(
        "/chat/completions",
        cast_to=str,
        body=request_body(ep, req),
        options={"timeout": ep.timeout_s, "security": {"bearer_auth": True}},
    )
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        cut_off = choice.get("finish_reason") == "length"
        u = data.get("usage") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        msg = f"unparseable completion from {ep.cfg.base_url}: {exc}"
        raise BadResponseError(msg) from None
    usage = Usage(
        prompt_tokens=int(u.get("prompt_tokens") or req.approx_prompt_tokens()),
        completion_tokens=int(u.get("completion_tokens") or len(text) // 4),
    )
    # Accounted under the configured name, which is what `prices` is keyed by.
    return ChatResult(
        text=text, model=ep.cfg.model, usage=usage, endpoint=ep.cfg.label, cut_off=cut_off
    )
