"""Freed heap pages go back to the OS at tick end (glibc), so RSS tracks the data held."""

from __future__ import annotations

import platform

import pytest

from societas.memory.heap import release_free_memory


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
    import subprocess
    import sys

    code = (
        "import resource, societas.memory.heap, societas.memory;"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0", out.stdout


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt/mallinfo2 are glibc's")
def test_a_group_gives_large_blocks_their_own_mapping():
    """glibc raises its mmap threshold to the size of a freed mapped block, so after a 4 MB
    block a 3 MB one comes from the heap; once a GroupMemory exists the threshold stays at
    64 KB and both are mapped apart (and unmapped when freed)."""
    import subprocess
    import sys

    code = """
import ctypes, pathlib, tempfile
class MI(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keep".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MI
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
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "0", "1", "1", "1"], out.stdout
