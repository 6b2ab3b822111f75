"""Seal a Qdrant Edge shard in a child process (run as a script) and the shard config."""

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
    """The shard's config from `spec` (dense, sparse, mmap); `sealing`: the child's thresholds."""
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
        wal_enabled=False,  # a crashed group is rebuilt from its checkpoint, never its shard
    )


def seal_in_child(path: Path, spec: dict[str, Any]) -> None:
    """Optimize the closed shard at `path` in a child process; RuntimeError if it fails."""
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
