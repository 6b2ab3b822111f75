"""On-disk response cache keyed by (model, messages, params, seed).

Layout: JSON-lines segment files under one directory, one segment per writing process
(`segment-<pid>-<random>.jsonl`), so many Ray groups can share a directory without locks or
torn writes. Every segment is read once at start-up; each new entry is appended and flushed
at once, so a crash loses nothing already answered. Entries hold the request (messages,
params, seed), the response text and usage; never a key or a header.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import IO, Any

from societas.agents.llm.messages import ChatRequest, ChatResult, Usage


def cache_key(model: str, request: ChatRequest) -> str:
    """Stable hex digest of (model, messages, params, seed)."""
    payload = {
        "model": model,
        "messages": [[m.role, m.content] for m in request.messages],
        "params": request.params(),
        "seed": request.seed,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """Append-only, multi-writer-safe response store; `get` is a dict lookup."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._entries: dict[str, dict[str, Any]] = {}
        self._loaded = False
        self._out: IO[str] | None = None

    def load(self) -> int:
        """Read every segment (blocking; call via asyncio.to_thread). Returns entries loaded."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for seg in sorted(self.directory.glob("segment-*.jsonl")):
            with seg.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        entry = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a torn last line after a crash; the rest is good
                    self._entries[entry["key"]] = entry
        self._loaded = True
        return len(self._entries)

    @property
    def loaded(self) -> bool:
        """Whether `load` has run."""
        return self._loaded

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> ChatResult | None:
        """The cached result for `key`, marked cached, or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        return ChatResult(
            text=entry["text"],
            model=entry["model"],
            usage=Usage(**entry["usage"]),
            cached=True,
            cut_off=bool(entry.get("cut_off", False)),
        )

    def put(self, key: str, request: ChatRequest, result: ChatResult) -> None:
        """Store and append one entry (a small buffered write plus flush)."""
        entry = {
            "key": key,
            "model": result.model,
            "text": result.text,
            "usage": result.usage.model_dump(),
            **({"cut_off": True} if result.cut_off else {}),
            "request": {
                "messages": [m.model_dump() for m in request.messages],
                "params": request.params(),
                "seed": request.seed,
            },
        }
        self._entries[key] = entry
        if self._out is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            name = f"segment-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
            self._out = (self.directory / name).open("a", encoding="utf-8")
        self._out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._out.flush()

    def close(self) -> None:
        """Close this process's segment."""
        if self._out is not None:
            self._out.close()
            self._out = None
