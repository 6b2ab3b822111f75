"""Seal a Qdrant Edge shard in a child process: optimize it there, then reopen it mmapped.

Opt-in (`vector_store.compact_in_child`): the binding holds the GIL for the whole optimize,
so a child does it and the group's loop is never stalled; the shard is flushed, closed,
optimized by `python edge_seal.py PATH SPEC` and loaded again. Run as a script, this file is
the child; imported, it gives the shard config both sides use.
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
    cold = qe.Memory.Cold if spec.get("mmap") else None
    dense, sparse = spec.get("dense"), spec.get("sparse")
    vectors = (
        {dense[0]: qe.EdgeVectorParams(size=dense[1], distance=qe.Distance.Cosine, memory=cold)}
        if dense
        else None
    )
    sparse_vectors = (
        {sparse: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=cold)}
        if sparse
        else None
    )
    return qe.EdgeConfig(
        vectors=vectors,
        sparse_vectors=sparse_vectors,
        # Vacuum every segment with deleted points: until then Qdrant's IDF still counts them.
        optimizers=qe.EdgeOptimizersConfig(
            deleted_threshold=0.0,
            vacuum_min_vector_number=1,
            indexing_threshold=1 if sealing else None,
            default_segment_number=SEGMENTS if sealing else None,
        ),
        payload_memory=cold,
        id_tracker_memory=cold,
        # No write-ahead log: a shard is never reopened after a crash (a lost group is
        # rebuilt from its last checkpoint, taken after `flush`), and the WAL's mmapped
        # segments cost RAM for every point.
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
