"""A validation suite at its default size: our figures beside the published ones, timed.

Runs `societas validate SUITE` in this process (the rules policy is a deterministic offline
policy, not a language model; it is not tuned to the published figures) and writes the suite's
metrics, the wall time and the machine to --json.

    python benchmarks/validation.py --suite smallville --provider rules --seeds 3 --json F
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from _common import emit, machine, peak_rss_mb

from societas.cluster.validation import SUITES, ValidationInputError, validate
from societas.cluster.validation.inputs import parse_seeds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True, help=" | ".join(SUITES))
    ap.add_argument("--provider", default="rules", help="rules or a YAML file with llm:")
    ap.add_argument("--seeds", default="3", help="N (0..N-1) or a list like 0,1,2")
    ap.add_argument("--agents", type=int, default=None)
    ap.add_argument("--hours", type=float, default=None)
    ap.add_argument("--out", default=None, help="Folder for the runs (default: a temporary one)")
    ap.add_argument("--json", default=None, help="Write the result here")
    args = ap.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="societas-validation-"))
    began = time.perf_counter()
    try:
        report = validate(
            args.suite,
            out,
            provider=args.provider,
            seeds=parse_seeds(args.seeds),
            agents=args.agents,
            hours=args.hours,
        )
    except ValidationInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    result = {
        "benchmark": "validation",
        "suite": report.suite,
        "provider": report.provider,
        "model": report.model,
        "rules_policy": report.rules_policy,
        "seeds": report.seeds,
        "agents": report.agents,
        "hours": report.hours,
        "wall_s": round(time.perf_counter() - began, 2),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "out": str(out),
        "metrics": [m.model_dump() for m in report.metrics],
        "unpublished": [u.model_dump() for u in report.unpublished],
        "caveat": report.caveat,
        "machine": machine(),
    }
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
