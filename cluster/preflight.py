"""Preflight: everything a run will use, checked before the first tick, each within a stated
timeout, with one short line per problem naming the setting, its value and what to do.

Checks: the config (scenario + `cluster:`), every LLM endpoint (its /models listing the
model, or where it lists none one chat request with the model's name, the key and
max_tokens=1; a model it does not serve is named with what it serves), the
Qdrant server (list collections, read the collection if it exists), the embedder (one
text), the output folder, and the Ray address. `societas check CONFIG` runs them alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

HTTP_TIMEOUT_S = 5.0
EMBEDDER_TIMEOUT_S = 60.0
RAY_PROBE_TIMEOUT_S = 10.0


class Problem(BaseModel):
    """One thing that would make the run fail."""

    setting: str
    value: str
    message: str
    hint: str = ""

    def line(self) -> str:
        """`setting = value: message; hint` (the message alone when it names both)."""
        text = f"{self.setting} = {self.value}: {self.message}"
        if self.message.startswith(self.setting) or self.message.startswith(self.value):
            text = self.message
        return f"{text}; {self.hint}" if self.hint else text


class PreflightError(Exception):
    """Preflight found problems; str() is one line per problem."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(p.line() for p in problems))


def _with_timeout(fn: Callable[[], Any], timeout_s: float) -> tuple[bool, Any]:
    """Run `fn` in a daemon thread; (finished, result or exception)."""
    box: dict[str, Any] = {}

    def go() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # reported as a problem by the caller
            box["value"] = err

    t = threading.Thread(target=go, daemon=True, name="societas-preflight")
    t.start()
    t.join(timeout_s)
    return (not t.is_alive(), box.get("value"))


def _reason(err: BaseException) -> str:
    """A short reason for a connection error (no traceback, no secrets)."""
    import httpx

    if isinstance(err, httpx.TimeoutException):
        return "no answer in time"
    if isinstance(err, httpx.ConnectError):
        cause = str(err) or "connection failed"
        if "refused" in cause.lower():
            return "connection refused"
        return cause.splitlines()[0][:120]
    return (str(err) or type(err).__name__).splitlines()[0][:160]


def check_llm(
    llm: Any, timeout_s: float = HTTP_TIMEOUT_S, endpoints: Sequence[int] | None = None
) -> list[Problem]:
    """Each endpoint (or each of `endpoints`, indexes into `llm.endpoints`) serves its model:
    listed by its /models, or, where it lists none, answering a 1-token chat with its name."""
    if getattr(llm, "provider", "rules") != "openai":
        return []
    problems: list[Problem] = []
    results: dict[int, Problem | None] = {}
    wanted = range(len(llm.endpoints)) if endpoints is None else endpoints

    def probe(i: int, ep: Any) -> None:
        results[i] = _probe_endpoint(i, ep, timeout_s)

    threads = [
        threading.Thread(target=probe, args=(i, llm.endpoints[i]), daemon=True) for i in wanted
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout_s * 2 + 1)
    for i in wanted:
        ep = llm.endpoints[i]
        if i not in results:
            problems.append(
                Problem(
                    setting=f"llm.endpoints.{i}.base_url",
                    value=ep.base_url,
                    message=f"no answer within {timeout_s:g} s",
                    hint="start the server or fix the URL",
                )
            )
        elif (problem := results[i]) is not None:
            problems.append(problem)
    return problems


def _probe_endpoint(i: int, ep: Any, timeout_s: float) -> Problem | None:
    """The problem with endpoint `i`, or None when it answers with its model."""
    import httpx

    setting = f"llm.endpoints.{i}"
    headers = {}
    if ep.api_key_env:
        key = os.environ.get(ep.api_key_env)
        if not key:
            return Problem(
                setting=f"{setting}.api_key_env",
                value=ep.api_key_env,
                message="this environment variable is not set",
                hint=f"export {ep.api_key_env}=<key> before the run",
            )
        headers["Authorization"] = f"Bearer {key}"
    base = ep.base_url.rstrip("/")

    def refused(status: int) -> Problem:
        return Problem(
            setting=f"{setting}.api_key_env",
            value=ep.api_key_env or "(none)",
            message=f"{ep.base_url} refused the key (HTTP {status})",
            hint="set api_key_env to the variable holding a valid key",
        )

    def not_served(served: list[str]) -> Problem:
        return Problem(
            setting=f"{setting}.model",
            value=ep.model,
            message=f"not served by {ep.base_url}"
            + (f" (it serves {served[:5]})" if served else ""),
            hint="use a model name the server lists",
        )

    try:
        with httpx.Client(timeout=timeout_s, headers=headers) as client:
            listed = client.get(f"{base}/models")  # free: no tokens billed
            if listed.status_code in (401, 403):
                return refused(listed.status_code)
            served = _model_ids(listed) if listed.status_code == 200 else []
            if served:  # the server says what it serves: no request to the model needed
                return None if ep.model in served else not_served(served)
            res = client.post(  # the cheapest real request: 1 token, with the model's name
                f"{base}/chat/completions",
                json={
                    "model": ep.model,
                    "messages": [{"role": "user", "content": "ping"}],
                    "max_tokens": 1,
                },
            )
            if res.status_code in (401, 403):
                return refused(res.status_code)
            if res.status_code in (400, 404) and "model" in res.text.lower():
                return not_served(served)
            if res.status_code >= 400:
                return Problem(
                    setting=f"{setting}.base_url",
                    value=ep.base_url,
                    message=f"HTTP {res.status_code} from {res.request.url.path}",
                    hint="check that the URL ends in /v1 and the server is OpenAI-compatible",
                )
    except (httpx.HTTPError, ValueError) as err:
        return Problem(
            setting=f"{setting}.base_url",
            value=ep.base_url,
            message=f"{_reason(err)} (timeout {timeout_s:g} s)",
            hint="start the server or fix the URL",
        )
    return None


def _model_ids(res: Any) -> list[str]:
    """The model names of an OpenAI `/models` answer; [] when it is not one."""
    try:
        data = res.json()
    except ValueError:
        return []
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return []
    return [str(m.get("id")) for m in data["data"] if isinstance(m, dict)]


def check_qdrant(store: Any, timeout_s: float = HTTP_TIMEOUT_S) -> list[Problem]:
    """List collections and read ours (when it exists) on a Qdrant server."""
    import httpx

    if store.backend != "qdrant" or not store.url:
        return []
    headers = {}
    if store.api_key_env:
        key = os.environ.get(store.api_key_env)
        if not key:
            return [
                Problem(
                    setting="memory.vector_store.api_key_env",
                    value=store.api_key_env,
                    message="this environment variable is not set",
                    hint=f"export {store.api_key_env}=<key>",
                )
            ]
        headers["api-key"] = key
    url = store.url.rstrip("/")
    try:
        with httpx.Client(timeout=timeout_s, headers=headers) as client:
            for path in ("/collections", f"/collections/{store.collection}"):
                res = client.get(url + path)
                if res.status_code in (401, 403):
                    return [
                        Problem(
                            setting="memory.vector_store.api_key_env",
                            value=store.api_key_env or "(none)",
                            message=f"{store.url} refused access to {path} "
                            f"(HTTP {res.status_code})",
                            hint="use a key with read/write rights on the collection",
                        )
                    ]
                if res.status_code >= 400 and res.status_code != 404:
                    return [
                        Problem(
                            setting="memory.vector_store.url",
                            value=store.url,
                            message=f"HTTP {res.status_code} from {path}",
                            hint="is this a Qdrant server (REST port, default 6333)?",
                        )
                    ]
    except httpx.HTTPError as err:
        return [
            Problem(
                setting="memory.vector_store.url",
                value=store.url,
                message=f"{_reason(err)} (timeout {timeout_s:g} s)",
                hint="start Qdrant or fix the URL",
            )
        ]
    return []


def check_embedder(embedding: Any, timeout_s: float = EMBEDDER_TIMEOUT_S) -> list[Problem]:
    """Build the embedder and embed one text, within `timeout_s`."""
    import asyncio

    from societas.memory.embedding import build_embedder

    async def one() -> None:
        embedder = build_embedder(embedding)
        try:
            await embedder.embed_documents(["preflight"])
        finally:
            close = getattr(embedder, "aclose", None) or getattr(embedder, "close", None)
            if close is not None:
                out = close()
                if asyncio.iscoroutine(out):
                    await out

    done, value = _with_timeout(lambda: asyncio.run(one()), timeout_s)
    if not done:
        message = f"did not embed one text within {timeout_s:g} s"
    elif isinstance(value, BaseException):
        message = _reason(value)
    else:
        return []
    return [
        Problem(
            setting="memory.embedding.kind",
            value=embedding.kind,
            message=message,
            hint="check the model folder or the embedding endpoint",
        )
    ]


def check_out(run_dir: Path | str, overwrite: bool, resume: bool) -> list[Problem]:
    """The output folder: a path or an object-store URL (checked by the run folder rules)."""
    from societas.cluster.observe.run_folder import OutDirError, check_out_dir

    if "://" in str(run_dir):
        from societas.cluster.remote_out import RemoteOutError, check_remote_out

        try:
            check_remote_out(str(run_dir), overwrite=overwrite, resume=resume)
        except RemoteOutError as err:
            return [Problem(setting="--out", value=str(run_dir), message=str(err))]
        return []
    try:
        check_out_dir(Path(run_dir), overwrite=overwrite, resume=resume)
    except OutDirError as err:
        return [Problem(setting="--out", value=str(run_dir), message=str(err))]
    return []


def check_ray(address: str | None, timeout_s: float = RAY_PROBE_TIMEOUT_S) -> list[Problem]:
    """The Ray head answers at `address` (a local Ray needs no check)."""
    from societas.cluster.ray.attach import RayAttachError, probe_address

    if not address:
        return []
    try:
        probe_address(address, timeout_s)
    except RayAttachError as err:
        return [Problem(setting="--address", value=address, message=str(err))]
    return []


def preflight(
    scenario: Any,
    *,
    run_dir: Path | str | None = None,
    overwrite: bool = False,
    resume: bool = False,
    address: str | None = None,
    services: bool = True,
    ray_timeout_s: float = RAY_PROBE_TIMEOUT_S,
) -> list[Problem]:
    """Every check for a validated scenario (config problems are raised before this)."""
    problems: list[Problem] = []
    if run_dir is not None:
        problems += check_out(run_dir, overwrite, resume)
    problems += check_ray(address, ray_timeout_s)
    if services:
        problems += check_llm(scenario.llm)
        problems += check_qdrant(scenario.memory.vector_store)
        if not problems:  # the embedder can take seconds to load: only when all else is fine
            problems += check_embedder(scenario.memory.embedding)
    return problems
