"""Worker tuning is one opt-in call; importing or constructing anything changes no process."""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import sys

import pytest

from societas.memory.tuning import tune_collector

# glibc's heap counters, for the scripts the tests below run in a fresh interpreter.
MALLINFO = """
import ctypes, pathlib, tempfile
class MI(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keep".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MI
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
"""

UNCHANGED = """
import gc, importlib, os, pathlib, pkgutil, tempfile
import pyarrow as pa
env, frozen, pool = dict(os.environ), gc.get_freeze_count(), pa.default_memory_pool().backend_name
threshold = gc.get_threshold()
import societas
for root in ("societas", "societas.memory", "societas.agents", "societas.cluster"):
    package = importlib.import_module(root)
    for info in pkgutil.walk_packages(package.__path__, root + "."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
from societas.memory import GroupMemory
with tempfile.TemporaryDirectory() as tmp:
    GroupMemory(root=pathlib.Path(tmp))
assert dict(os.environ) == env, set(os.environ.items()) ^ set(env.items())
assert gc.get_freeze_count() == frozen, gc.get_freeze_count()
assert gc.get_threshold() == threshold, gc.get_threshold()
assert pa.default_memory_pool().backend_name == pool, pa.default_memory_pool().backend_name
print("unchanged")
"""


def _python(code: str) -> str:
    """What `code` prints in a fresh interpreter without ARROW_DEFAULT_MEMORY_POOL."""
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean, check=False
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return run.stdout


def test_importing_every_module_and_building_a_group_changes_nothing():
    assert _python(UNCHANGED).strip() == "unchanged"


def test_importing_the_memory_package_starts_no_process():
    """Looking up libc must not fork `ldconfig` (a copy of every group actor at import)."""
    code = (
        "import resource, societas.memory.store.heap, societas.memory.tuning, societas.memory;"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    assert _python(code).strip() == "0"


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt/mallinfo2 are glibc's")
def test_tune_worker_maps_large_blocks_and_puts_arrow_on_the_c_library():
    """After `tune_worker()` a 3 MB block is mapped apart even after a 4 MB one was freed,
    and a large Arrow buffer is a mapping of its own, gone when freed."""
    code = (
        MALLINFO
        + """
import pyarrow as pa
def mapped_by(size):
    before = libc.mallinfo2().hblks
    block = libc.malloc(size)
    mapped = libc.mallinfo2().hblks - before
    libc.free(block)
    return mapped
def arrow_mapped():
    before = libc.mallinfo2().hblkhd
    buffer = pa.allocate_buffer(32 << 20)
    held = libc.mallinfo2().hblkhd - before
    del buffer
    return held >= 32 << 20, libc.mallinfo2().hblkhd - before < 1 << 20
print(mapped_by(4 << 20), mapped_by(3 << 20), pa.default_memory_pool().backend_name)
from societas.memory.tuning import tune_worker
tune_worker()
tune_worker()
print(mapped_by(8 << 20), mapped_by(3 << 20), pa.default_memory_pool().backend_name,
      *arrow_mapped())
"""
    )
    before, after = _python(code).splitlines()
    assert before.split()[:2] == ["1", "0"]
    assert before.split()[2] != "system"
    assert after.split() == ["1", "1", "system", "True", "True"]


@pytest.fixture
def thresholds():
    """The process's collector thresholds, put back after the test."""
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


FROZEN_ONCE = """
import gc, weakref
gc.set_threshold(700, 10, 10)  # CPython's default
from societas.memory.tuning import YOUNG_THRESHOLD, tune_worker
class Node:
    link = None
cycle = Node()
cycle.link = cycle
garbage = weakref.ref(cycle)
del cycle
tune_worker()
frozen = gc.get_freeze_count()
tune_worker()  # a second call freezes nothing more
print(gc.get_threshold()[0] == YOUNG_THRESHOLD, garbage() is None, frozen > 0,
      gc.get_freeze_count() == frozen)
"""


def test_the_heap_is_collected_then_frozen_once():
    """In a fresh interpreter (a freeze would otherwise hold the test process's heap): cycles
    are collected before the one freeze, and a second call freezes nothing more."""
    assert _python(FROZEN_ONCE).split() == ["True", "True", "True", "True"]


def test_a_higher_or_disabled_threshold_is_left_alone(thresholds):
    gc.set_threshold(10**6, 5, 5)
    tune_collector()
    assert gc.get_threshold() == (10**6, 5, 5)
    gc.set_threshold(0, 10, 10)  # automatic collection off: the user's choice
    tune_collector()
    assert gc.get_threshold() == (0, 10, 10)
