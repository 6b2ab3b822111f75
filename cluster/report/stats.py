"""Curves with confidence bands: over agents in one run, over seeds, and arm differences.

A `Band` is a per-tick mean with a 95% interval. Within one run the interval is over agents
(normal approximation, mean ± 1.96·sd/√n); with replicate runs it is over the runs' means
(Student's t with k-1 degrees of freedom), which is the honest interval for a stochastic
simulation; a difference of two arms has the interval of a difference of independent means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from societas.cluster.report.data import Arm, RunData

Z95 = 1.959964
# two-sided 95% Student t quantiles for 1..30 degrees of freedom (scipy not needed for these)
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t95(dof: int) -> float:
    """Two-sided 95% quantile of Student's t (normal beyond 30 degrees of freedom)."""
    return _T95[dof - 1] if 1 <= dof <= len(_T95) else Z95


@dataclass
class Band:
    """A per-tick mean and its 95% interval (lo, hi); `n` is agents or replicates per tick."""

    ticks: np.ndarray
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n: np.ndarray
    over: str  # "agents" or "seeds"

    def at(self, tick: int) -> float:
        idx = np.nonzero(self.ticks == tick)[0]
        return float(self.mean[idx[0]]) if idx.size else float("nan")

    def last(self) -> float:
        return float(self.mean[-1]) if self.mean.size else float("nan")


def dense(run: RunData, ticks: np.ndarray, values: np.ndarray, fill: float = np.nan) -> np.ndarray:
    """Values placed on 0..run.ticks-1 (missing ticks get `fill`)."""
    out = np.full(run.ticks, fill, dtype=float)
    ok = (ticks >= 0) & (ticks < run.ticks)
    out[ticks[ok].astype(int)] = values[ok]
    return out


def agent_band(run: RunData, expr: str, table: str = "agent_state", where: str = "true") -> Band:
    """Per-tick mean of a SQL expression over agents, with the normal 95% interval."""
    cols = run.columns(
        f"SELECT tick, avg(({expr})::DOUBLE) AS m, stddev_samp(({expr})::DOUBLE) AS s, "
        f"count(*) AS n FROM {table} WHERE {where} GROUP BY tick ORDER BY tick"
    )
    ticks = np.arange(run.ticks)
    if not cols:
        nan = np.full(run.ticks, np.nan)
        return Band(ticks, nan, nan, nan, np.zeros(run.ticks), "agents")
    t = cols["tick"].astype(int)
    m = dense(run, t, cols["m"].astype(float))
    s = dense(run, t, np.nan_to_num(cols["s"].astype(float)), 0.0)
    n = dense(run, t, cols["n"].astype(float), 0.0)
    half = Z95 * s / np.sqrt(np.maximum(n, 1))
    return Band(ticks, m, m - half, m + half, n, "agents")


def cumulative_share(run: RunData, sql_first_ticks: str, denominator: int) -> Band:
    """Share of `denominator` agents reached by each tick, from a query of first ticks per
    agent (`SELECT agent_id, min(tick) AS tick ...`); binomial normal interval."""
    cols = run.columns(f"SELECT tick, count(*) AS k FROM ({sql_first_ticks}) GROUP BY tick")
    ticks = np.arange(run.ticks)
    counts = np.zeros(run.ticks)
    if cols:
        t = cols["tick"].astype(int)
        ok = (t >= 0) & (t < run.ticks)
        np.add.at(counts, t[ok], cols["k"].astype(float)[ok])
    p = np.cumsum(counts) / max(1, denominator)
    half = Z95 * np.sqrt(p * (1 - p) / max(1, denominator))
    n = np.full(run.ticks, float(denominator))
    return Band(ticks, p, np.clip(p - half, 0, 1), np.clip(p + half, 0, 1), n, "agents")


def over_seeds(bands: Sequence[Band]) -> Band:
    """One band from replicate runs' bands: the mean of their means, t interval over runs."""
    if len(bands) == 1:
        return bands[0]
    length = min(b.mean.size for b in bands)
    stack = np.vstack([b.mean[:length] for b in bands])
    k = np.sum(~np.isnan(stack), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.nanmean(stack, axis=0)
        sd = np.nanstd(stack, axis=0, ddof=1)
    q = np.array([t95(int(x) - 1) if x > 1 else np.nan for x in k])
    half = q * sd / np.sqrt(np.maximum(k, 1))
    return Band(bands[0].ticks[:length], m, m - half, m + half, k.astype(float), "seeds")


def arm_band(arm: Arm, make: callable) -> Band:  # type: ignore[valid-type]
    """`make(run) -> Band` for every replicate of an arm, combined over seeds."""
    return over_seeds([make(run) for run in arm.runs])


def difference(a: Band, b: Band) -> Band:
    """b - a per tick with the interval of a difference of independent means."""
    length = min(a.mean.size, b.mean.size)
    half_a = (a.hi[:length] - a.lo[:length]) / 2
    half_b = (b.hi[:length] - b.lo[:length]) / 2
    d = b.mean[:length] - a.mean[:length]
    half = np.sqrt(half_a**2 + half_b**2)
    return Band(a.ticks[:length], d, d - half, d + half, np.minimum(a.n, b.n)[:length], a.over)
