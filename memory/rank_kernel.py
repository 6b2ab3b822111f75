"""The compiled search kernels when the install built them, else None.

`KERNEL` (memory/_rank.c): `memory.ram_ranking` ranks each search with one call into it
(relevance, score and top k over the agent's postings) instead of a few dozen numpy calls;
the results are the same bit for bit. `HITS` (memory/_hits.c): `memory.hits` builds a
batch's hits of hot memories from the columns in one call, equal field for field to the
Python path. `POSTINGS` (memory/_postings.c): `SparseIndex.add` appends a write's memories
to the agents' postings and term counts in one call, the same arrays as its Python loop.
`COLUMNS` (memory/_columns.c): the hot tier's few-valued and text columns take a write's
(or a tick's leavers') rows in one call each, as their loops do. `ROWS` (memory/_rows.c):
its agents' row queues get new rows, and give the rows leaving hot, in one call each.
`VECTORS` (memory/_vectors.c): BM25's answers become the embedder's vectors in one call.
Without a C compiler at install time the extensions are skipped and numpy and Python do the
work. `SOCIETAS_RANK_KERNEL=0` turns all six off (benchmarks and tests compare the paths).
"""

from __future__ import annotations

import importlib
import os
import warnings
from types import ModuleType

_OFF = ("0", "false", "no", "off")
_ON = ("", "1", "true", "yes", "on")


def load_kernel(name: str = "_rank", warn: bool = True) -> ModuleType | None:
    """The extension `name`, or None when it is missing or switched off. A value of
    `SOCIETAS_RANK_KERNEL` that is neither on nor off is named in a warning (read at import:
    an exception here would reach the user as a traceback; `warn=False`: said once already)
    and the kernels stay on."""
    setting = os.environ.get("SOCIETAS_RANK_KERNEL", "1").strip().lower()
    if setting in _OFF:
        return None
    if setting not in _ON and warn:
        warnings.warn(
            f"SOCIETAS_RANK_KERNEL must be 0 (numpy and Python) or 1 (the compiled kernels), "
            f"got {os.environ['SOCIETAS_RANK_KERNEL']!r}: the kernels stay on",
            stacklevel=2,
        )
    try:
        return importlib.import_module(f"societas.memory.{name}")
    except ImportError:
        return None


KERNEL = load_kernel()
HITS = load_kernel("_hits", warn=False)
POSTINGS = load_kernel("_postings", warn=False)
COLUMNS = load_kernel("_columns", warn=False)
ROWS = load_kernel("_rows", warn=False)
VECTORS = load_kernel("_vectors", warn=False)
