"""Give freed heap pages back to the OS (glibc `malloc_trim`) so a group's RSS tracks its data.

A tick allocates and frees many short-lived objects (requests, hits, numpy temporaries)
between long-lived ones (memory texts, ids); glibc keeps the freed pages, so RSS drifts up
to ~40 % above what is in use (measured: 122 → 86 MB after a trim, 300 agents × 200
memories). Trimming at tick end costs about a millisecond. And glibc's threshold for giving
a large block its own mapping grows (up to 32 MB) each time such a block is freed, after
which growing arrays and numpy temporaries are carved out of the heap and leave holes a trim
cannot return; a group fixes it at 64 KB (`map_large_blocks`: a 2,000-agent group day 95.8 →
88.0 MB of RSS). Elsewhere (not glibc) both do nothing. Arrow's own allocator (mimalloc) keeps
the pages of a Parquet read or write until asked: a cold merge slice of ~20 MB of data held
~60 MB of RSS. A group's Arrow buffers therefore come from the C library as well
(`arrow_on_system_allocator`): each large buffer is then its own mapping, gone when freed
(a 670,000-row day window's merge: peak +69 → +39 MB, +21 → +8 MB kept after a trim).
Arrow's C++ code also allocates from its own default pool, chosen once, when pyarrow loads,
from `ARROW_DEFAULT_MEMORY_POOL`: importing this module (every societas package does, first)
sets it to `system` unless the user set it (tiering benchmark, 1,000 agents: day 6 ends at
263 MB instead of 302, the mimalloc arena having kept ~40 MB of Parquet work).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable

os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # before pyarrow loads (doc)
_trim: Callable[[int], int] | None = None
_mallopt: Callable[[int, int], int] | None = None
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_BLOCK = 64 * 1024
if sys.platform.startswith("linux"):
    try:
        # The symbols already loaded (glibc's among them). `ctypes.util.find_library` forks
        # `ldconfig -p`: a copy of the whole process at import, in every group actor.
        _libc = ctypes.CDLL(None)
        _trim = _libc.malloc_trim
        _mallopt = _libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        _trim = _mallopt = None


def release_free_memory() -> bool:
    """Return free heap pages to the OS; False where the C library cannot."""
    if _trim is None:
        return False
    _trim(0)
    return True


def arrow_on_system_allocator() -> None:
    """Make the C library's malloc Arrow's default pool in this process (see the module doc);
    buffers allocated before stay in the pool that made them."""
    import pyarrow as pa

    if pa.default_memory_pool().backend_name != "system":
        pa.set_memory_pool(pa.system_memory_pool())


def map_large_blocks(threshold: int = LARGE_BLOCK) -> bool:
    """Give every allocation of `threshold` bytes or more its own mapping, returned to the OS
    when freed (a fixed glibc mmap threshold; see the module doc); False where it cannot."""
    if _mallopt is None:
        return False
    return bool(_mallopt(M_MMAP_THRESHOLD, threshold))
