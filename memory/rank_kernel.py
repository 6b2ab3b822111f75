"""The compiled ranking kernel (memory/_rank.c) when the install built it, else None.

`memory.ram_ranking` ranks each search with one call into it (relevance, score and top k
over the agent's postings) instead of a few dozen numpy calls; the results are the same bit
for bit. Without a C compiler at install time the extension is skipped and numpy ranks.
`SOCIETAS_RANK_KERNEL=0` turns the kernel off (benchmarks and tests compare both paths).
"""

from __future__ import annotations

import os
import warnings
from types import ModuleType

_OFF = ("0", "false", "no", "off")
_ON = ("", "1", "true", "yes", "on")


def load_kernel() -> ModuleType | None:
    """The `_rank` extension, or None when it is missing or switched off. A value of
    `SOCIETAS_RANK_KERNEL` that is neither on nor off is named in a warning (read at import:
    an exception here would reach the user as a traceback) and the kernel stays on."""
    setting = os.environ.get("SOCIETAS_RANK_KERNEL", "1").strip().lower()
    if setting in _OFF:
        return None
    if setting not in _ON:
        warnings.warn(
            f"SOCIETAS_RANK_KERNEL must be 0 (numpy ranks) or 1 (the compiled kernel), got "
            f"{os.environ['SOCIETAS_RANK_KERNEL']!r}: the kernel stays on",
            stacklevel=2,
        )
    try:
        from societas.memory import _rank
    except ImportError:
        return None
    return _rank


KERNEL = load_kernel()
