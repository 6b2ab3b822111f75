"""Give freed heap pages back to the OS (glibc `malloc_trim`) so a group's RSS tracks its data."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable


def libc_function(name: str) -> Callable[..., int] | None:
    """A function of the C library by name, or None where it has none (not Linux, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:  # the symbols already loaded, without forking `ldconfig -p`
        return ctypes.CDLL(None)[name]
    except (OSError, AttributeError):
        return None


_trim = libc_function("malloc_trim")


def release_free_memory() -> bool:
    """Return free heap pages to the OS; False where the C library cannot."""
    if _trim is None:
        return False
    _trim(0)
    return True
