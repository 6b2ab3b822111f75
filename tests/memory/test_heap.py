"""Freed heap pages go back to the OS at tick end (glibc), so RSS tracks the data held."""

from __future__ import annotations

import platform

import pytest

from societas.memory.heap import release_free_memory

# glibc's heap counters, for the scripts the tests below run in a fresh interpreter.
MALLINFO = """
import ctypes, pathlib, tempfile
class MI(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keep".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MI
"""


def _python(code: str, **env: str) -> str:
    """What `code` prints in a fresh interpreter with `env` added to this one's environment
    and no ARROW_DEFAULT_MEMORY_POOL inherited (importing societas here set it)."""
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean | env, check=True
    )
    return run.stdout


def _rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_small_objects_are_returned():
    keep = []
    junk = [bytes(200) for _ in range(400_000)]  # ~100 MB of small blocks
    keep.extend(junk[::1000])  # a few survivors pin nothing big
    del junk
    before = _rss_kb()
    assert release_free_memory() is True
    assert _rss_kb() < before  # the trim really released pages
    assert keep


def test_importing_the_memory_package_starts_no_process():
    """Looking up libc must not fork `ldconfig` (a copy of every group actor at import)."""
    code = (
        "import resource, societas.memory.heap, societas.memory;"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = _python(code)
    assert out.strip() == "0", out


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt/mallinfo2 are glibc's")
def test_a_group_gives_large_blocks_their_own_mapping():
    """glibc raises its mmap threshold to the size of a freed mapped block, so after a 4 MB
    block a 3 MB one comes from the heap; once a GroupMemory exists the threshold stays at
    64 KB and both are mapped apart (and unmapped when freed)."""
    code = (
        MALLINFO
        + """
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def mapped_by(size):
    before = libc.mallinfo2().hblks
    block = libc.malloc(size)
    mapped = libc.mallinfo2().hblks - before
    libc.free(block)
    return mapped
print(mapped_by(4 << 20), mapped_by(3 << 20))
from societas.memory import GroupMemory
with tempfile.TemporaryDirectory() as tmp:
    GroupMemory(root=pathlib.Path(tmp))
    print(mapped_by(8 << 20), mapped_by(3 << 20), mapped_by(1 << 20))
"""
    )
    out = _python(code)
    assert out.split() == ["1", "0", "1", "1", "1"], out


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallinfo2 is glibc's")
def test_a_group_takes_arrow_buffers_from_the_c_library_and_returns_them():
    """Arrow's default pool (mimalloc) keeps a Parquet read's pages after they are freed;
    once a GroupMemory exists, a large Arrow buffer is a mapping of its own, gone when freed
    (here pyarrow loads before societas, so the group switches pyarrow's pool itself)."""
    code = (
        MALLINFO
        + """
import pyarrow as pa
def mapped_while_held():
    before = libc.mallinfo2().hblkhd
    buffer = pa.allocate_buffer(32 << 20)
    held = libc.mallinfo2().hblkhd - before
    del buffer
    return held >= 32 << 20, libc.mallinfo2().hblkhd - before < 1 << 20
print(pa.default_memory_pool().backend_name, *mapped_while_held())
from societas.memory import GroupMemory
with tempfile.TemporaryDirectory() as tmp:
    GroupMemory(root=pathlib.Path(tmp))
    print(pa.default_memory_pool().backend_name, *mapped_while_held())
"""
    )
    out = _python(code)
    first, after = out.splitlines()
    assert first.split()[1] == "False"  # before: not the C library's (mimalloc or jemalloc)
    assert after.split() == ["system", "True", "True"], out


@pytest.mark.parametrize("package", ["societas.memory", "societas.agents", "societas.cluster"])
def test_importing_societas_first_gives_arrow_the_c_library_allocator(package):
    """Arrow's C++ code allocates from a default pool chosen when pyarrow loads: importing any
    societas package first makes it the C library's, unless the user chose one."""
    code = f"import {package}, pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    assert _python(code).strip() == "system"
    chosen = "jemalloc" if "jemalloc" in _pools() else "mimalloc"
    assert _python(code, ARROW_DEFAULT_MEMORY_POOL=chosen).strip() == chosen


def _pools() -> list[str]:
    import pyarrow as pa

    return pa.supported_memory_backends()
