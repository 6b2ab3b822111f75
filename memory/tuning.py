"""Opt-in tuning of a worker process that hosts groups: allocator, Arrow pool and collector.

glibc gives every large block its own mapping (returned to the OS when freed), Arrow
allocates from the C library rather than its own arena, and the cyclic collector runs young
collections rarely and never traverses the startup heap again, so RSS tracks the data and
the collector stays off the hot path. Nothing here happens on import or construction.
"""

from __future__ import annotations

import gc
import os

from societas.memory.store.heap import libc_function

YOUNG_THRESHOLD = 50_000
LARGE_BLOCK = 64 * 1024
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
_tuned = False


def map_large_blocks(threshold: int = LARGE_BLOCK) -> bool:
    """Give every allocation of `threshold` bytes or more its own mapping, returned to the OS
    when freed; False where the C library cannot."""
    mallopt = libc_function("mallopt")
    return mallopt is not None and bool(mallopt(M_MMAP_THRESHOLD, threshold))


def arrow_on_system_allocator() -> None:
    """Make the C library's malloc Arrow's default pool, so freed Arrow buffers leave RSS."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # read when pyarrow loads
    import pyarrow as pa

    if pa.default_memory_pool().backend_name != "system":
        pa.set_memory_pool(pa.system_memory_pool())


def tune_collector(young: int = YOUNG_THRESHOLD) -> None:
    """Raise the young-generation threshold to `young` (kept if higher, left alone if 0) and
    collect then freeze the heap that exists now, once per process."""
    global _tuned
    first, second, third = gc.get_threshold()
    if 0 < first < young:
        gc.set_threshold(young, second, third)
    if not _tuned:
        _tuned = True
        gc.collect()  # garbage already there is freed, not frozen
        gc.freeze()


def tune_worker() -> None:
    """Change this process for hosting groups (allocator, Arrow pool, gc); the Ray actor, the
    CLI and the benchmarks call it, idempotent."""
    map_large_blocks()
    arrow_on_system_allocator()
    tune_collector()
