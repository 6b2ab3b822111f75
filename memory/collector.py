"""The cyclic garbage collector tuned for a group's process: young collections rare, the
startup heap never traversed again.

A group's event loop gathers a tick's agents: hundreds to thousands of coroutines in flight,
each with its frames, futures and requests. They are freed by reference counting when the
tick ends, but CPython's young generation is collected every 700 net container allocations,
so mid-tick every in-flight object is traversed, promoted as a survivor, and counted towards
full collections that traverse the whole heap (~87,000 objects after the imports, ~50 ms a
pass). Measured with `gc.callbacks` (benchmarks/memory_ops.py, 300 agents × 200 memories
gathered): 0.85 s of a 4.3 s run in the collector, 14 full passes, the longest pause 52 ms;
3,000 agents × 20: 1.74 s of 4.8 s, a 94 ms pause. The plain-list baseline spends 3 ms.

`tune_collector` (called by every `GroupMemory`) raises the young threshold to
`YOUNG_THRESHOLD` net allocations (a tick's in-flight objects mostly die before a collection
sees them; cyclic garbage waits longer: at most that many objects, a few MB) and, once per
process, collects and then freezes what exists then (modules, classes, the runtime: never
garbage) so that full collections traverse only what was made after. Measured the same way:
0.00 s in the collector at 300 × 200, 0.36 s at 3,000 × 20 with a 37 ms longest pause.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000
_frozen = False


def tune_collector(young: int = YOUNG_THRESHOLD) -> None:
    """Raise the young-generation threshold to `young` (kept if already higher, left alone if
    0: automatic collection turned off by the user) and freeze the heap once per process."""
    global _frozen
    first, second, third = gc.get_threshold()
    if 0 < first < young:
        gc.set_threshold(young, second, third)
    if not _frozen:
        _frozen = True
        gc.collect()  # garbage already there is freed, not frozen
        gc.freeze()
