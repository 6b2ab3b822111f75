"""Shared fixtures: one offline BM25 embedder per session (loading it costs ~0.5 s)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Every Ray the tests start (ray.init, `ray start`, cluster_utils) picks 127.0.0.1 as its node
# IP instead of the host's outbound address: no traffic leaves loopback.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="session")
def bm25_embedder():
    """The real fastembed BM25 from the bundled stop-word folder, behind the cache."""
    from societas.memory.embedding import EmbeddingConfig, build_embedder

    return build_embedder(EmbeddingConfig())


@pytest.fixture(scope="module")
def own_local_ray():
    """A Ray of the module's own (address="local"), even if another runs on the machine."""
    import ray

    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
    )
    yield
    ray.shutdown()


_FINISHED: list[int] = []  # the session's exit status, once pytest has reported it


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _FINISHED.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """End a pytest command's process with the session's status once pytest is done, so a
    native library's teardown at interpreter exit (Ray, Qdrant Edge, llama.cpp threads)
    cannot turn a passing run into a crash; `pytest.main()` called from a program returns."""
    import sys

    command = sys.argv[0].replace("\\", "/")
    if _FINISHED and (command.endswith("pytest/__main__.py") or command.endswith("pytest")):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_FINISHED[-1])
