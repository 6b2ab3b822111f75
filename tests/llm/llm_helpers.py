"""Helpers shared by the gateway tests (kept apart from conftest so they can be imported)."""

from __future__ import annotations

from typing import Any

import aiohttp


def gateway_config(url: str, **over: Any) -> dict[str, Any]:
    """A gateway config for one emulator endpoint with fast retries."""
    endpoint = {"base_url": url, "model": "emulated", "send_task_hints": True}
    endpoint.update(over.pop("endpoint", {}))
    cfg: dict[str, Any] = {
        "endpoints": [endpoint],
        "timeout_s": 5,
        "retry": {"max_attempts": 6, "base_delay_s": 0.01, "max_delay_s": 0.1},
    }
    cfg.update(over)
    return cfg


async def http_stats(url: str) -> dict[str, Any]:
    """The emulator's /stats, fetched over HTTP like an external observer would."""
    async with aiohttp.ClientSession() as s, s.get(url.removesuffix("/v1") + "/stats") as r:
        return dict(await r.json())


def user(text: str) -> list[dict[str, str]]:
    """One user message."""
    return [{"role": "user", "content": text}]
