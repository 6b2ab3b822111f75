"""Give freed heap pages back to the OS (glibc `malloc_trim`) so a group's RSS tracks its data.

A tick allocates and frees many short-lived objects between long-lived ones, and glibc keeps
the freed pages; a trim at tick end returns them. It changes no setting of the process.
Elsewhere (not glibc) it does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

_trim: Callable[[int], int] | None = None
if sys.platform.startswith("linux"):
    try:
        # The symbols already loaded (glibc's among them), without forking `ldconfig -p`.
        _trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        _trim = None


def release_free_memory() -> bool:
    """Return free heap pages to the OS; False where the C library cannot."""
    if _trim is None:
        return False
    _trim(0)
    return True
