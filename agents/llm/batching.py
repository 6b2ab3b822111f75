"""Batch prompting: many small list tasks (rate 20 memories) in one call, results in order.

The reply must be `{"results": [one object per item]}` with exactly as many entries as items;
a wrong count is a validation error, so the gateway's repair / re-ask / fallback applies.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field, create_model

from societas.agents.llm.errors import LLMInputError
from societas.agents.llm.gateway import MISSING, LLMGateway
from societas.agents.llm.provenance import mark, source_of
from societas.agents.llm.structured import bare, schema_of
from societas.agents.llm.tasks import Reply

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def with_checks(
    chunk: Sequence[T], seed: int | None, pools: Sequence[Sequence[T]]
) -> tuple[list[T], list[int]]:
    """`chunk` with one attention check drawn from each pool inserted at places drawn from the
    chunk and seed (a model cannot learn them), and those places, in pool order."""
    blob = json.dumps([seed, list(chunk)], ensure_ascii=False).encode()
    rng = random.Random(int.from_bytes(hashlib.sha256(blob).digest()[:8], "big"))
    n = len(chunk) + len(pools)
    places = rng.sample(range(n), len(pools))
    picks = dict(zip(places, [rng.choice(pool) for pool in pools], strict=True))
    rest = iter(chunk)
    return [picks[i] if i in picks else next(rest) for i in range(n)], places


@lru_cache(maxsize=256)
def batch_schema(item_schema: type[BaseModel], n: int) -> type[BaseModel]:
    """`{"results": list[item_schema]}` with exactly `n` results (a `Reply`: the gateway
    notes the batch's answer_source, which `batch_json` copies onto each item)."""
    results_type = Annotated[list[item_schema], Field(min_length=n, max_length=n)]  # type: ignore[valid-type]
    return create_model(
        f"{item_schema.__name__}Batch{n}", __base__=Reply, results=(results_type, ...)
    )


def batch_messages(
    items: Sequence[str], item_schema: type[BaseModel], instruction: str, system: str | None
) -> list[dict[str, str]]:
    """One prompt listing the items, numbered, and the exact reply shape."""
    listing = "\n".join(f"{i}. {' '.join(str(t).split())}" for i, t in enumerate(items, 1))
    shape = json.dumps(bare(schema_of(item_schema)), separators=(",", ":"))
    user = (
        f"{instruction.strip()}\n\nItems:\n{listing}\n\n"
        f'Reply with ONLY a JSON object {{"results": [...]}} holding exactly {len(items)} '
        f"objects, one per item in the same order, each matching this JSON schema: {shape}"
    )
    msgs = [{"role": "system", "content": system}] if system else []
    return [*msgs, {"role": "user", "content": user}]


async def batch_json(
    gateway: LLMGateway,
    items: Sequence[str],
    item_schema: type[M],
    *,
    task: str,
    instruction: str,
    system: str | None = None,
    context: dict[str, Any] | None = None,
    batch_size: int | None = None,
    fallback_item: Callable[[str], M] = MISSING,
    checks: Callable[[list[str]], tuple[list[str], list[int]]] | None = None,
    **params: Any,
) -> list[M]:
    """Answer `item_schema` for every item, `batch_size` items per call, calls concurrent.

    The rules provider receives `context={"items": chunk, **context}`. A chunk whose reply
    never validates returns `fallback_item(item)` per item (counted) or raises. Each item
    carries its chunk's answer_source (`provenance.source_of`). `checks(chunk)` gives the
    items asked with attention checks inserted and their places: the places go to the meaning
    checks as `context["anchors"]`, and the checks' answers are left out of the result.
    """
    if isinstance(items, str) or not isinstance(items, Sequence):
        raise LLMInputError(f"items: expected a list of strings, got {type(items).__name__}")
    size = batch_size or gateway.config.batch_size
    if size < 1:
        raise LLMInputError(f"batch_size: must be >= 1, got {size!r}")
    if not items:
        return []

    async def one(chunk: list[str]) -> list[M]:
        asked, anchors = checks(chunk) if checks is not None else (chunk, [])
        schema = batch_schema(item_schema, len(asked))
        fb: Any = MISSING
        if fallback_item is not MISSING:

            def fb() -> BaseModel:
                return schema(results=[fallback_item(x) for x in asked])

        out = await gateway.json(
            batch_messages(asked, item_schema, instruction, system),
            schema,
            task=task,
            context={
                **(context or {}),
                "items": asked,
                **({"anchors": anchors} if anchors else {}),
            },
            fallback=fb,
            **params,
        )
        source = source_of(out)
        results = out.results  # type: ignore[attr-defined]
        return [mark(item, source) for i, item in enumerate(results) if i not in anchors]

    chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
    parts = await asyncio.gather(*(one(c) for c in chunks))
    return [r for part in parts for r in part]
