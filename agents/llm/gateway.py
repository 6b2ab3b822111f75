"""The LLM gateway: one object every cognition call goes through.

`complete` returns text; `json` returns a validated pydantic model (repair, re-ask, then the
call site's fallback, all counted). Behind them: the response cache, then either the `rules`
policy (not a language model) or the endpoint pool with rate limits and retries.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar, cast

import json_repair
from pydantic import BaseModel, ValidationError

from societas.agents.llm import inflight, rules
from societas.agents.llm.accounting import Accounting, TaskUsage
from societas.agents.llm.cache import ResponseCache, cache_key
from societas.agents.llm.config import LLMConfig, load_config
from societas.agents.llm.errors import (
    LLMInputError,
    LLMRunStop,
    LLMSchemaError,
    ReplayMissError,
)
from societas.agents.llm.guard import FallbackGuard
from societas.agents.llm.meaning import INVALID_FORM, Failure, Prompt
from societas.agents.llm.meaning import check as meaning_check
from societas.agents.llm.messages import (
    ChatMessage,
    ChatRequest,
    ChatResult,
    MessagesIn,
    Usage,
    parse_messages,
)
from societas.agents.llm.pool import EndpointPool
from societas.agents.llm.provenance import mark
from societas.agents.llm.retry import call_with_retries
from societas.agents.llm.structured import schema_of
from societas.agents.llm.transport import send_chat

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)


class _Missing:
    def __repr__(self) -> str:
        return "<no fallback>"


MISSING: Any = _Missing()
RULES_MODEL = "rules (not a language model)"


def parse_json_text(text: str) -> tuple[Any, bool]:
    """Parse model output as JSON, else repair it with json-repair; returns (obj, repaired)."""
    stripped = text.strip()
    try:
        return json.loads(stripped), False
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        return json_repair.loads(stripped), True
    except Exception:  # json-repair gives up on some garbage; treat as unparseable
        return None, True


def _invalid_text(err: ValidationError) -> str:
    """The re-ask after a schema error: where it failed, no schema text a model could echo."""
    where = ", ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'the reply'} {e['type'].replace('_', ' ')}"
        for e in err.errors()[:3]
    )
    return INVALID_FORM.format(where=where)


def answer_source(result: ChatResult, ask: int, repaired: bool) -> str:
    """Where an accepted answer came from (see provenance). A cache hit keeps the source its
    asks give: the same answers pass the same checks, so a resumed run or a branch replaying
    its parent's past writes the parent's rows (the cache hits are counted apart)."""
    if result.endpoint == "rules":
        return "rules"
    if ask > 0:
        return "re_asked"
    return "repaired" if repaired else "first_try"


class LLMGateway:
    """Cache → (rules | endpoint pool with rate limits and retries) → accounting."""

    def __init__(self, config: LLMConfig | dict[str, Any]) -> None:
        self.config = load_config(config)
        self.accounting = Accounting(prices=dict(self.config.prices))
        self._rng = random.Random(self.config.seed)
        self.pool = (
            EndpointPool(self.config.endpoints, self.config.timeout_s)
            if self.config.provider == "openai"
            else None
        )
        cc = self.config.cache
        self.cache = ResponseCache(cc.dir) if cc.mode != "off" and cc.dir is not None else None
        self._cache_lock: asyncio.Lock | None = None
        self.guard = FallbackGuard(self.config.fallback_stop)
        self.stop: LLMRunStop | None = None  # set once; the run loop stops on it
        # Called as observer(task, value) with every json() answer that came from the model
        # (not a fallback); benchmarks use it to trace memories written from model text.
        self.observers: list[Callable[[str | None, BaseModel], None]] = []
        self._routes: dict[str | None, list[int] | None] = {}
        self._by_rules: dict[str | None, bool] = {}

    def __repr__(self) -> str:
        return f"LLMGateway(provider={self.config.provider!r}, cache={self.config.cache.mode!r})"

    @property
    def is_rules(self) -> bool:
        """True when answers come from the rules policy (not a language model)."""
        return self.config.provider == "rules"

    async def __aenter__(self) -> LLMGateway:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close HTTP clients and the cache segment."""
        if self.pool is not None:
            await self.pool.aclose()
        if self.cache is not None:
            self.cache.close()

    def stats(self) -> dict[str, Any]:
        """Accounting snapshot plus endpoint load."""
        snap = self.accounting.snapshot()
        snap["endpoints"] = self.pool.load() if self.pool is not None else []
        return snap

    # ---- public calls ------------------------------------------------------------------

    def request(
        self,
        messages: MessagesIn,
        *,
        task: str | None = None,
        context: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        json_mode: bool = False,
        schema: type[BaseModel] | None = None,
    ) -> ChatRequest:
        """Validate call-site arguments into a `ChatRequest` (clear errors naming the field)."""
        msgs = parse_messages(messages)
        if task is not None and (not isinstance(task, str) or not task):
            raise LLMInputError(f"task: must be a non-empty string or None, got {task!r}")
        if context is not None and not isinstance(context, dict):
            raise LLMInputError(f"context: must be a dict or None, got {type(context).__name__}")
        t = self.config.temperature if temperature is None else temperature
        if not 0 <= t <= 2:
            raise LLMInputError(f"temperature: must be within 0..2, got {t!r}")
        mt = self.config.max_tokens if max_tokens is None else max_tokens
        if not isinstance(mt, int) or mt < 1:
            raise LLMInputError(f"max_tokens: must be a positive integer, got {mt!r}")
        return ChatRequest(
            messages=msgs,
            temperature=t,
            max_tokens=mt,
            seed=self.config.seed if seed is None else seed,
            json_mode=json_mode,
            schema_name=schema.__name__ if schema is not None else None,
            json_schema=schema_of(schema) if schema is not None else None,
            task=task,
            context=context or {},
        )

    async def complete(self, messages: MessagesIn, **kwargs: Any) -> str:
        """The reply's text (kwargs: task, context, temperature, max_tokens, seed); `chat`
        returns it with its usage and `cut_off`, for a text that may have stopped mid-way."""
        return (await self.chat(self.request(messages, **kwargs))).text

    async def json(
        self,
        messages: MessagesIn,
        schema: type[M],
        *,
        fallback: M | Callable[[], M] = MISSING,
        **kwargs: Any,
    ) -> M:
        """A `schema` instance from the model's JSON reply.

        Parse → json-repair → validate; on a validation error re-ask (config.json_reasks times)
        quoting the error; then return `fallback` (a value or a zero-argument factory) or raise
        `LLMSchemaError`. Each step is counted (json.repaired, json.invalid, json.reask,
        json.fallback, json.failed).
        """
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise LLMInputError(f"schema: must be a pydantic model class, got {schema!r}")
        req = self.request(messages, json_mode=True, schema=schema, **kwargs)
        usage = self.accounting.task(req.task)
        usage.json_calls += 1
        last, answer, endpoint = "no reply", "", None
        asked, task_prompt = req.messages, None  # the task's own messages, before any re-ask
        for ask in range(self.config.json_reasks + 1):
            result = await self.chat(req)
            answer, endpoint = result.text, result.endpoint
            obj, repaired = parse_json_text(result.text)
            failure: Failure | None = None
            if result.cut_off and repaired:  # closed by json-repair, not by the model
                failure = Failure("cut_off", f"stopped at max_tokens: {answer[-60:]!r}")
            else:
                try:
                    value = schema.model_validate(obj)
                except ValidationError as err:
                    self.accounting.count("json.invalid")
                    usage.invalid += 1
                    why = str(err.errors()[0]["msg"]) if err.errors() else str(err)
                    last = f"not the asked JSON ({why})"
                    correction = _invalid_text(err)
                else:
                    if result.endpoint != "rules":  # a model's: rules copy nothing
                        task_prompt = task_prompt or Prompt.of(
                            asked, req.json_schema, req.context, req.task
                        )
                        prompt = task_prompt.after(req.messages)  # and a re-ask's corrections
                        failure = meaning_check(req.task, value, prompt, req.context)
                    if failure is None:
                        return self._accept(req, value, result, ask, repaired, usage)
            if failure is not None:
                self.accounting.count(f"meaning.{failure.kind}")
                usage.meaning[failure.kind] += 1
                last = f"meaning check {failure.kind}: {failure.detail[:120]!r}"
                correction = failure.correction
            if ask < self.config.json_reasks:
                self.accounting.count("json.reask")
                usage.reasks += 1
                req = req.model_copy(
                    update={
                        "messages": (
                            *req.messages,
                            ChatMessage(role="assistant", content=result.text or "(empty)"),
                            ChatMessage(role="user", content=correction),
                        )
                    }
                )
        self._outcome(True, req.task, endpoint, answer)
        if fallback is not MISSING:
            self.accounting.count("json.fallback")
            usage.fallbacks += 1
            usage.sources["fallback"] += 1
            log.info("json fallback for task=%s schema=%s: %s", req.task, schema.__name__, last)
            out = fallback() if callable(fallback) else fallback
            if isinstance(out, BaseModel) and out is fallback:
                out = out.model_copy()  # the caller's value stays unmarked
            return cast(M, mark(out, "fallback", last))
        self.accounting.count("json.failed")
        usage.failed += 1
        raise LLMSchemaError(
            f"task {req.task!r}: reply never matched {schema.__name__} after "
            f"{self.config.json_reasks + 1} asks; last problem: {last}"
        )

    def _accept(
        self,
        req: ChatRequest,
        value: M,
        result: ChatResult,
        ask: int,
        repaired: bool,
        usage: TaskUsage,
    ) -> M:
        """Count an accepted answer, mark its source, tell the observers; returns it."""
        if repaired:
            self.accounting.count("json.repaired")
            usage.repaired += 1
        elif ask == 0:
            usage.valid_first_try += 1
        else:
            usage.valid_after_reask += 1
        source = answer_source(result, ask, repaired)
        usage.sources[source] += 1
        mark(value, source)
        # Entries of a list answer the schema dropped as filler (plan items, questions...).
        usage.dropped_items += int(getattr(value, "dropped", 0) or 0)
        self._outcome(False, req.task, result.endpoint, result.text)
        for observer in self.observers:
            observer(req.task, value)
        return value

    def _outcome(self, fell_back: bool, task: str | None, endpoint: str | None, text: str) -> None:
        """Feed the fallback-rate guard; the first stop it raises is kept in `self.stop`."""
        stop = self.guard.record(fell_back, task, endpoint, text)
        if stop is not None and self.stop is None:
            self.stop = stop
            log.error("%s", stop)

    def raise_if_stopped(self) -> None:
        """Raise the pending run stop, if any (for callers outside a run loop)."""
        if self.stop is not None:
            raise self.stop

    def route(self, task: str | None) -> list[int] | None:
        """Endpoint indices serving `task` (None: every endpoint), cached per task."""
        if task not in self._routes:
            idx = self.config.route(task)
            self._routes[task] = None if len(idx) == len(self.config.endpoints) else idx
        return self._routes[task]

    def answers_by_rules(self, task: str | None) -> bool:
        """Whether the rules policy answers `task` (provider rules, or a route to `rules`)."""
        found = self._by_rules.get(task)
        if found is None:
            found = self._by_rules[task] = self.config.to_rules(task)
        return found

    async def chat(self, req: ChatRequest) -> ChatResult:
        """One completion through cache → rules or HTTP; recorded in accounting."""
        if self.is_rules or self.answers_by_rules(req.task):
            return self._rules(req)
        assert self.pool is not None
        key = None
        if self.cache is not None:
            await self._ensure_cache()
            key = cache_key(self.pool.model_key_of(self.route(req.task)), req)
            hit = self.cache.get(key)
            if hit is not None:
                self.accounting.record(hit.model, hit.usage, cached=True, task=req.task)
                self.accounting.count("cache.hit")
                return hit.model_copy(update={"endpoint": "cache"})
            self.accounting.count("cache.miss")
            if self.config.cache.mode == "replay":
                raise ReplayMissError(
                    f"replay: no cached response for task {req.task!r} (key {key[:16]}); "
                    "replay never calls HTTP. Run once with cache.mode='read-write' first."
                )
        result = await self._http(req)
        if self.cache is not None and key is not None:
            self.cache.put(key, req, result)
        return result

    # ---- internals ---------------------------------------------------------------------

    async def _ensure_cache(self) -> None:
        assert self.cache is not None
        if self.cache.loaded:
            return
        if self._cache_lock is None:
            self._cache_lock = asyncio.Lock()
        async with self._cache_lock:
            if not self.cache.loaded:
                n = await asyncio.to_thread(self.cache.load)
                log.info("llm cache: %d entries from %s", n, self.cache.directory)

    def _rules(self, req: ChatRequest) -> ChatResult:
        started = time.perf_counter()
        out = rules.answer(req.task, req.context, req.seed)
        text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
        usage = Usage(prompt_tokens=req.approx_prompt_tokens(), completion_tokens=len(text) // 4)
        self.accounting.record(RULES_MODEL, usage, cached=False, task=req.task)
        tokens = usage.prompt_tokens + usage.completion_tokens
        seconds = time.perf_counter() - started
        self.accounting.record_call(RULES_MODEL, "rules", seconds, tokens)
        return ChatResult(text=text, model=RULES_MODEL, usage=usage, endpoint="rules")

    async def _http(self, req: ChatRequest) -> ChatResult:
        assert self.pool is not None
        pool = self.pool
        estimate = req.approx_prompt_tokens() + req.max_tokens
        allowed = self.route(req.task)

        async def attempt() -> ChatResult:
            async with pool.slot(allowed) as ep:
                await ep.limiter.acquire(estimate)
                self.accounting.count("http.requests")
                sent = time.perf_counter()
                handle = inflight.begin()
                try:
                    result = await send_chat(ep, req)
                except Exception:
                    ep.mark(ok=False)
                    seconds = time.perf_counter() - sent
                    self.accounting.record_call(ep.cfg.model, ep.cfg.base_url, seconds, ok=False)
                    raise
                finally:
                    inflight.end(handle)
                ep.mark(ok=True)
                ep.served += 1
                used = result.usage.prompt_tokens + result.usage.completion_tokens
                seconds = time.perf_counter() - sent
                self.accounting.record_call(ep.cfg.model, ep.cfg.base_url, seconds, used)
                await ep.limiter.settle(estimate, used)
                return result

        def on_retry(kind: str, delay: float) -> None:
            self.accounting.count(f"retry.{kind}")
            log.debug("llm retry after %s in %.2fs (task=%s)", kind, delay, req.task)

        try:
            result, attempts = await call_with_retries(
                attempt, self.config.retry, self._rng, on_retry, where="llm request: "
            )
        except Exception:
            self.accounting.count("http.failed")
            raise
        self.accounting.record(result.model, result.usage, cached=False, task=req.task)
        return result.model_copy(update={"attempts": attempts}) if attempts > 1 else result
