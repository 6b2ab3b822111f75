"""The compiled ranking kernel (memory/_rank.c) when the install built it, else None.

`memory.ram_ranking` ranks each search with one call into it (relevance, score and top k
over the agent's postings) instead of a few dozen numpy calls; the results are the same bit
for bit. Without a C compiler at install time the extension is skipped and numpy ranks.
`SOCIETAS_RANK_KERNEL=0` turns the kernel off (benchmarks and tests compare both paths).
"""

from __future__ import annotations

import os
from types import ModuleType


def load_kernel() -> ModuleType | None:
    """The `_rank` extension, or None when it is missing or switched off."""
    if os.environ.get("SOCIETAS_RANK_KERNEL", "1") == "0":
        return None
    try:
        from societas.memory import _rank
    except ImportError:
        return None
    return _rank


KERNEL = load_kernel()
