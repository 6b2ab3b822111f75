"""The driver's loop tunes the garbage collector as a group's process does (memory.collector):
its groups may live in other processes, so it cannot count on a GroupMemory to do it."""

from __future__ import annotations

import asyncio
import gc

from synthetic_groups import SyntheticConfig, SyntheticFactory

from societas.cluster.ray.runtime import ClusterConfig, InProcessGroup, RunSpec, run_groups
from societas.memory.collector import YOUNG_THRESHOLD


def test_run_groups_raises_the_young_threshold(tmp_path):
    factory = SyntheticFactory(SyntheticConfig(agents=20, groups=2, seed=5))
    handles = [InProcessGroup(factory(g)) for g in range(2)]  # no GroupMemory anywhere
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's default
    try:
        spec = RunSpec(run_dir=tmp_path, ticks=2, seed=5, agents=20)
        result, _ = asyncio.run(run_groups(handles, spec, ClusterConfig(checkpoint_every=0)))
        assert result.ticks == 2 and len(result.digests) == 2
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    finally:
        gc.set_threshold(*saved)
