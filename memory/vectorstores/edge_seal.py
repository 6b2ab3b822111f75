"""Seal a Qdrant Edge shard in a child process: optimize it there, then reopen it mmapped.

Opt-in (`vector_store.compact_in_child`); the trade-off, measured on 2 cores at 1,000 agents
(benchmarks/RESULTS.md): the loop is never stalled by a compaction and the group holds less
RAM all along (30 days: 426 instead of 522 MB on day 29), but each compaction's child holds
up to ~1.3 GB for a moment, so the machine's peak is higher.

The binding holds the GIL for the whole of `EdgeShard.optimize` (measured: a thread of the
same process got one turn in 1.2 s while 60,000 points were optimized), so an in-process
optimize stalls every agent of the group for seconds a simulated day. And an appendable
segment keeps each point in RAM (~1.9 KB a point with the stream's payload indexes, whatever
the placement asked for); optimized segments are mmapped files (placement `Cold`), ~0.4 KB a
point of RSS once reopened. So the shard is flushed and closed, optimized by a child process
(`python edge_seal.py PATH SPEC`: only `qdrant_edge` imported there), and loaded again.

Run as a script, this file is the child; imported, it gives the shard config both sides use.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import qdrant_edge as qe

SEGMENTS = 8  # optimized segments kept apart: a seal rewrites about one day's points, not all
SEAL_TIMEOUT_S = 3600.0


def shard_config(spec: dict[str, Any], sealing: bool = False) -> Any:
    """The shard's config from `spec` (`dense`: (name, size) or None, `sparse`: name or None,
    `mmap`: vectors, payload and ids placed `Cold`, i.e. mmapped once optimized); `sealing`
    (the child) turns every appendable segment into an optimized one."""
    placed = {"memory": qe.Memory.Cold} if spec.get("mmap") else {}
    dense, sparse = spec.get("dense"), spec.get("sparse")
    vectors = (
        {dense[0]: qe.EdgeVectorParams(size=dense[1], distance=qe.Distance.Cosine, **placed)}
        if dense
        else None
    )
    sparse_vectors = (
        {sparse: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, **placed)} if sparse else None
    )
    # Vacuum every segment with deleted points: until then Qdrant's IDF still counts them.
    thresholds: dict[str, Any] = {"deleted_threshold": 0.0, "vacuum_min_vector_number": 1}
    if sealing:
        thresholds.update(indexing_threshold=1, default_segment_number=SEGMENTS)
    placement = {"payload_memory": qe.Memory.Cold, "id_tracker_memory": qe.Memory.Cold}
    return qe.EdgeConfig(
        vectors=vectors,
        sparse_vectors=sparse_vectors,
        optimizers=qe.EdgeOptimizersConfig(**thresholds),
        **(placement if spec.get("mmap") else {}),
        # No write-ahead log: a shard is never reopened after a crash (a lost group is
        # rebuilt from its last checkpoint, taken after `flush`), and the WAL's mmapped
        # segments cost ~0.3 KB of RAM a point.
        wal_enabled=False,
    )


def seal_in_child(path: Path, spec: dict[str, Any]) -> None:
    """Optimize the closed shard at `path` (config `spec`) in a child process; RuntimeError
    with its stderr if it fails."""
    try:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), str(path), json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=SEAL_TIMEOUT_S,
            check=False,
        )
    except subprocess.SubprocessError as err:  # the timeout
        raise RuntimeError(f"sealing the shard {path} failed: {err}") from err
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-2000:]
        raise RuntimeError(f"sealing the shard {path} failed (exit {done.returncode}): {tail}")


def _main(argv: list[str]) -> None:
    """The child: load the shard with the sealing thresholds, optimize, flush, close."""
    shard = qe.EdgeShard.load(argv[1], shard_config(json.loads(argv[2]), sealing=True))
    shard.optimize()
    shard.flush()
    shard.close()


if __name__ == "__main__":
    _main(sys.argv)
