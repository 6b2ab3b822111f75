"""Opt-in tuning of a process that hosts groups, so RSS tracks the data: allocator, Arrow, gc."""

from __future__ import annotations

import gc
import os

from societas.memory.store.heap import libc_function

YOUNG_THRESHOLD = 50_000
LARGE_BLOCK = 64 * 1024
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
_tuned = False


def map_large_blocks(threshold: int = LARGE_BLOCK) -> bool:
    """Give allocations of `threshold` bytes or more their own mapping; False where impossible."""
    mallopt = libc_function("mallopt")
    return mallopt is not None and bool(mallopt(M_MMAP_THRESHOLD, threshold))


def arrow_on_system_allocator() -> None:
    """Make the C library's malloc Arrow's default pool, so freed Arrow buffers leave RSS."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # read when pyarrow loads
    import pyarrow as pa

    if pa.default_memory_pool().backend_name != "system":
        pa.set_memory_pool(pa.system_memory_pool())


def tune_collector(young: int = YOUNG_THRESHOLD) -> None:
    """Raise the young-generation threshold to `young`; collect and freeze the heap, once."""
    global _tuned
    first, second, third = gc.get_threshold()
    if 0 < first < young:
        gc.set_threshold(young, second, third)
    if not _tuned:
        _tuned = True
        gc.collect()  # garbage already there is freed, not frozen
        gc.freeze()


def tune_worker() -> None:
    """Tune this process for hosting groups (allocator, Arrow pool, gc); idempotent."""
    map_large_blocks()
    arrow_on_system_allocator()
    tune_collector()
