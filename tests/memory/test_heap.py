"""Freed heap pages go back to the OS at tick end (glibc), so RSS tracks the data held."""

from __future__ import annotations

import platform

import pytest

from societas.memory.store.heap import release_free_memory


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
