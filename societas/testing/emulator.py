"""An OpenAI-protocol server for loopback that emulates an inference server (not a model).

Endpoints: POST /v1/chat/completions (incl. response_format json_object), POST /v1/embeddings
(deterministic hashed vectors), GET /v1/models, GET /stats, POST /stats/reset.
Behaviour: `capacity` requests run at once, the rest queue (asyncio.Semaphore); each takes
base latency + completion tokens / tokens_per_s (asyncio.sleep); faults are injected at
configured rates from an RNG seeded by (seed, prompt, how often that prompt was seen): 429
with Retry-After, 500, a hang past the client's timeout, repairable malformed JSON, or prose
garbage. Content is deterministic per prompt: the `rules` policy when the request carries a
`societas` hint (see EndpointConfig.send_task_hints), else an echo.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import os
import random
import re
import struct
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from societas.agents.llm import rules
from societas.agents.llm.errors import LLMConfigError

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_TOKEN = re.compile(r"\w+")


class EmulatorConfig(BaseModel):
    """Capacity, latency and fault rates of the emulated server."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field(default="127.0.0.1", description="Bind address (loopback unless allowed).")
    port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port.")
    allow_remote: bool = Field(default=False, description="Allow binding a non-loopback host.")
    models: list[str] = Field(default_factory=lambda: ["emulated"], min_length=1)
    capacity: int = Field(default=64, ge=1, description="Requests processed concurrently.")
    base_latency_s: float = Field(default=0.02, ge=0, description="Fixed time per request.")
    tokens_per_s: float = Field(
        default=0.0, ge=0, description="Decode speed per request; 0 adds no per-token time."
    )
    rate_429: float = Field(default=0.0, ge=0, le=1)
    rate_500: float = Field(default=0.0, ge=0, le=1)
    rate_timeout: float = Field(default=0.0, ge=0, le=1, description="Hang for hang_s.")
    rate_malformed: float = Field(default=0.0, ge=0, le=1, description="Repairable bad JSON.")
    rate_garbage: float = Field(default=0.0, ge=0, le=1, description="Prose, no JSON at all.")
    retry_after_s: float = Field(default=1.0, ge=0, description="Sent with each 429.")
    hang_s: float = Field(default=30.0, ge=0, description="How long a 'timeout' hangs.")
    seed: int = 0
    embedding_dim: int = Field(default=64, ge=2, le=8192)
    api_key_env: str | None = Field(
        default=None,
        description="When set, require `Authorization: Bearer <value of this env var>`. A "
        "wrong key gets a 401 that echoes it, like a careless server, to test redaction.",
    )

    @model_validator(mode="after")
    def _check(self) -> EmulatorConfig:
        total = (
            self.rate_429
            + self.rate_500
            + self.rate_timeout
            + self.rate_malformed
            + self.rate_garbage
        )
        if total > 1:
            raise ValueError(f"fault rates must sum to at most 1, got {total:.3f}")
        if self.host not in _LOOPBACK and not self.allow_remote:
            raise ValueError(f"host {self.host!r} is not loopback; set allow_remote to bind it")
        return self

    @classmethod
    def checked(cls, **fields: Any) -> EmulatorConfig:
        """Validate, raising `LLMConfigError` listing each bad field."""
        try:
            return cls(**fields)
        except ValidationError as err:
            raise LLMConfigError.from_validation(err, prefix="emulator") from None


def hashed_embedding(text: str, dim: int) -> list[float]:
    """Deterministic unit vector from hashed word tokens (signed feature hashing)."""
    vec = [0.0] * dim
    for tok in _TOKEN.findall(text.lower()) or [""]:
        h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "big")
        vec[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class Emulator:
    """The aiohttp application plus its counters; start with `start_emulator`."""

    def __init__(self, config: EmulatorConfig) -> None:
        self.config = config
        self._sem = asyncio.Semaphore(config.capacity)
        self._seen: Counter[str] = Counter()
        self._key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
        self.stats: dict[str, Any] = {}
        self.reset()
        self.app = web.Application(client_max_size=32 * 1024 * 1024)
        self.app.add_routes(
            [
                web.post("/v1/chat/completions", self.chat),
                web.post("/v1/embeddings", self.embeddings),
                web.get("/v1/models", self.models),
                web.get("/stats", self.get_stats),
                web.post("/stats/reset", self.reset_stats),
            ]
        )

    def reset(self) -> None:
        """Zero every counter (and the per-prompt fault sequence)."""
        self._seen.clear()
        self.stats = {
            "requests": 0,
            "chat_requests": 0,
            "embedding_requests": 0,
            "served": 0,
            "injected": {"429": 0, "500": 0, "timeout": 0, "malformed": 0, "garbage": 0},
            "auth_failures": 0,
            "bad_requests": 0,
            "in_flight": 0,
            "max_in_flight": 0,
            "queued": 0,
            "max_queued": 0,
            "completion_tokens": 0,
            "prompt_tokens": 0,
            "tasks": {},  # task hint -> chat requests (what routing sent here)
            "response_formats": {},  # response_format type (or "none") -> chat requests
            "last_request": None,  # the last chat body without its messages
        }

    # ---- helpers -----------------------------------------------------------------------

    def _authorized(self, request: web.Request) -> web.Response | None:
        if not self.config.api_key_env:
            return None
        offered = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if offered == self._key and self._key:
            return None
        self.stats["auth_failures"] += 1
        return self._error(401, f"Incorrect API key provided: {offered}", "invalid_api_key")

    @staticmethod
    def _error(
        status: int, message: str, kind: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        body = {"error": {"message": message, "type": kind, "code": kind, "param": None}}
        return web.json_response(body, status=status, headers=headers)

    def _fault(self, fingerprint: str) -> str | None:
        n = self._seen[fingerprint]
        self._seen[fingerprint] += 1
        draw = random.Random(f"{self.config.seed}:{fingerprint}:{n}").random()
        c = self.config
        for kind, rate in (
            ("429", c.rate_429),
            ("500", c.rate_500),
            ("timeout", c.rate_timeout),
            ("malformed", c.rate_malformed),
            ("garbage", c.rate_garbage),
        ):
            if draw < rate:
                return kind
            draw -= rate
        return None

    def _note(self, body: dict[str, Any]) -> None:
        """Count the request by task hint and response_format type; keep its parameters."""
        hint = body.get("societas")
        task = str(hint.get("task")) if isinstance(hint, dict) else "none"
        self.stats["tasks"][task] = self.stats["tasks"].get(task, 0) + 1
        fmt = body.get("response_format")
        kind = str(fmt.get("type")) if isinstance(fmt, dict) else "none"
        self.stats["response_formats"][kind] = self.stats["response_formats"].get(kind, 0) + 1
        self.stats["last_request"] = {k: v for k, v in body.items() if k != "messages"} | {
            "last_user": next(
                (m.get("content") for m in reversed(body["messages"]) if m.get("role") == "user"),
                None,
            )
        }

    @staticmethod
    def _content(body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        json_mode = (body.get("response_format") or {}).get("type") in (
            "json_object",
            "json_schema",
        )
        hint = body.get("societas")
        if isinstance(hint, dict) and hint.get("task") in rules.known_tasks():
            out = rules.answer(hint["task"], hint.get("context") or {}, int(hint.get("seed", 0)))
            return out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
        last = next(
            (
                str(m.get("content", ""))
                for m in reversed(messages)
                if isinstance(m, dict) and m.get("role") == "user"
            ),
            "",
        )
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:12]
        if json_mode:
            return json.dumps({"echo": last[:200], "id": digest})
        return f"echo {digest}: {last[:200]}"

    @staticmethod
    def _corrupt(content: str, kind: str) -> str:
        if kind == "garbage":
            return "I'm sorry, but I can't help with that right now."
        # repairable: code fence, trailing comma, missing closing brace
        fixed = content.rstrip()
        if fixed.endswith("}"):
            fixed = fixed[:-1].rstrip() + ","
        return f"Sure! Here it is:\n```json\n{fixed}\n```"

    # ---- handlers ----------------------------------------------------------------------

    async def chat(self, request: web.Request) -> web.StreamResponse:
        """OpenAI chat completions, with queueing, latency and injected faults."""
        self.stats["requests"] += 1
        self.stats["chat_requests"] += 1
        if (denied := self._authorized(request)) is not None:
            return denied
        try:
            body = await request.json()
            messages = body["messages"]
            if not isinstance(messages, list) or not messages:
                raise ValueError("messages must be a non-empty list")
        except (ValueError, KeyError, TypeError) as exc:
            self.stats["bad_requests"] += 1
            return self._error(400, f"invalid request: {exc}", "invalid_request_error")
        self._note(body)
        model = str(body.get("model", self.config.models[0]))
        fingerprint = hashlib.sha256(
            json.dumps([model, messages], sort_keys=True).encode()
        ).hexdigest()
        fault = self._fault(fingerprint)
        if fault == "429":
            self.stats["injected"]["429"] += 1
            ra = self.config.retry_after_s
            return self._error(
                429,
                "Rate limit reached (emulated)",
                "rate_limit_exceeded",
                {"Retry-After": str(math.ceil(ra)), "retry-after-ms": str(int(ra * 1000))},
            )
        if fault == "500":
            self.stats["injected"]["500"] += 1
            return self._error(500, "Internal server error (emulated)", "server_error")
        if fault == "timeout":
            self.stats["injected"]["timeout"] += 1
            await asyncio.sleep(self.config.hang_s)  # client gives up first
        content = self._content(body)
        prompt_tokens = sum(
            _approx_tokens(str(m.get("content", ""))) for m in messages if isinstance(m, dict)
        )
        completion_tokens = _approx_tokens(content)
        self.stats["queued"] += 1
        self.stats["max_queued"] = max(self.stats["max_queued"], self.stats["queued"])
        async with self._sem:
            self.stats["queued"] -= 1
            self.stats["in_flight"] += 1
            self.stats["max_in_flight"] = max(self.stats["max_in_flight"], self.stats["in_flight"])
            try:
                delay = self.config.base_latency_s
                if self.config.tokens_per_s > 0:
                    delay += completion_tokens / self.config.tokens_per_s
                await asyncio.sleep(delay)
            finally:
                self.stats["in_flight"] -= 1
        if fault in ("malformed", "garbage"):
            self.stats["injected"][fault] += 1
            content = self._corrupt(content, fault)
        self.stats["served"] += 1
        self.stats["prompt_tokens"] += prompt_tokens
        self.stats["completion_tokens"] += completion_tokens
        return web.json_response(
            {
                "id": f"chatcmpl-{fingerprint[:24]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "logprobs": None,
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    async def embeddings(self, request: web.Request) -> web.Response:
        """Deterministic hashed vectors; float lists or base64 float32 like OpenAI."""
        self.stats["requests"] += 1
        self.stats["embedding_requests"] += 1
        if (denied := self._authorized(request)) is not None:
            return denied
        try:
            body = await request.json()
            inputs = body["input"]
            texts = [inputs] if isinstance(inputs, str) else [str(t) for t in inputs]
        except (ValueError, KeyError, TypeError) as exc:
            self.stats["bad_requests"] += 1
            return self._error(400, f"invalid request: {exc}", "invalid_request_error")
        dim = int(body.get("dimensions") or self.config.embedding_dim)
        b64 = body.get("encoding_format") == "base64"
        data = []
        for i, t in enumerate(texts):
            vec = hashed_embedding(t, dim)
            emb: Any = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode() if b64 else vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        n = sum(_approx_tokens(t) for t in texts)
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": str(body.get("model", self.config.models[0])),
                "usage": {"prompt_tokens": n, "total_tokens": n},
            }
        )

    async def models(self, request: web.Request) -> web.Response:
        """The configured model names (behind the key, as OpenAI's own list is)."""
        self.stats["requests"] += 1
        if (denied := self._authorized(request)) is not None:
            return denied
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "created": 0, "owned_by": "societas-emulator"}
                    for m in self.config.models
                ],
            }
        )

    async def get_stats(self, request: web.Request) -> web.Response:
        """Counters as JSON (not counted as a request)."""
        return web.json_response(self.stats)

    async def reset_stats(self, request: web.Request) -> web.Response:
        """Zero the counters."""
        self.reset()
        return web.json_response(self.stats)


@asynccontextmanager
async def serve(config: EmulatorConfig) -> AsyncIterator[tuple[Emulator, str]]:
    """Run an `Emulator` on loopback; yields (emulator, base_url ending in /v1)."""
    emu = Emulator(config)
    runner = web.AppRunner(
        emu.app, handler_cancellation=True, access_log=None, shutdown_timeout=0.5
    )
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port, backlog=1024)
    await site.start()
    host, port = runner.addresses[0][:2]
    host = f"[{host}]" if ":" in str(host) else host
    try:
        yield emu, f"http://{host}:{port}/v1"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def start_emulator(config: EmulatorConfig | None = None, **fields: Any) -> AsyncIterator[str]:
    """`async with start_emulator(cfg) as url:` — the base URL (with /v1) of a live emulator."""
    cfg = config or EmulatorConfig.checked(**fields)
    async with serve(cfg) as (_, url):
        yield url


async def run_forever(config: EmulatorConfig) -> None:
    """Serve until cancelled (the CLI entry point), printing the URL once ready."""
    async with serve(config) as (_, url):
        print(f"societas llm-emulator listening on {url} (an emulator, not a model)", flush=True)
        await asyncio.Event().wait()
