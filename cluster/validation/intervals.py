"""Means and 95 % intervals over seeds, from the report's statistics (one implementation)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from societas.cluster.report.stats import t_interval

METHOD = "t over seeds (df = seeds - 1), cluster/report/stats.t_interval"


def over_seeds(
    values: Sequence[float | None], share: bool
) -> tuple[float | None, list[float | None]]:
    """(mean, [low, high]) of the per-seed values; shares are clipped to [0, 1], ratios to
    >= 0; None when no seed measured it, and a None interval with a single seed or seeds
    that all agree (no spread to estimate one from)."""
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return None, [None, None]
    mean, low, high, _ = t_interval(finite)
    if not math.isfinite(low):
        return mean, [None, None]
    low = max(0.0, low)
    if share:
        high = min(1.0, high)
    return mean, [min(low, mean), max(high, mean)]
