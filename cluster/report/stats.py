"""The report's statistics, in one place: curves with 95% bands, Student t quantiles, Wilson
intervals for shares, and the intervals of paired and unpaired arm effects.

A `Band` is a per-tick mean with a 95% interval. Within one run the interval is over agents
(normal approximation, mean ± 1.96·sd/√n; agents on a network are not independent draws, so
it describes the run, not a replication); with replicate runs it is over the runs' means
(Student's t with k-1 degrees of freedom), the honest interval for a stochastic simulation.
Shares use Wilson intervals, which stay in [0, 1]. Effects of an arm against a reference arm
that shares seed and population are paired: per agent within a seed, then over seeds.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from societas.cluster.report.data import Arm, RunData

Z95 = 1.959963984540054


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) (scipy is not a dependency)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(log_front + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(x: float, df: float) -> float:
    """P(T <= x) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + x * x))
    return 1.0 - tail if x > 0 else tail


@functools.lru_cache(maxsize=1024)
def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t (bisection on `t_cdf`, to 1e-12)."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2.0


def t95(dof: float) -> float:
    """Two-sided 95% quantile of Student's t with `dof` degrees of freedom."""
    return t_quantile(0.975, dof)


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a share: always inside [0, 1], honest near 0 and 1."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


@dataclass(frozen=True)
class Estimate:
    """An estimate with its 95% interval, the units it rests on and how it was computed."""

    estimate: float
    ci_low: float
    ci_high: float
    n_agents: int
    n_seeds: int
    method: str


def t_interval(values: Sequence[float] | np.ndarray) -> tuple[float, float, float, int]:
    """(mean, low, high, df) of a t interval over `values` (NaN dropped); a constant sample
    has a zero-width interval; one value has no interval (NaN)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return (math.nan, math.nan, math.nan, 0)
    m = float(x.mean())
    if x.size == 1:
        return (m, math.nan, math.nan, 0)
    sd = float(x.std(ddof=1))
    half = t95(x.size - 1) * sd / math.sqrt(x.size) if sd > 0 else 0.0
    return (m, m - half, m + half, x.size - 1)


def paired_effect(
    per_seed: Sequence[tuple[np.ndarray, np.ndarray]], share: bool = False
) -> Estimate:
    """Effect of arm over reference from (arm, reference) values of the same agents, one pair
    of arrays per seed: differences per agent, their mean per seed, then a t interval over
    seeds (df = seeds - 1); with one seed a t interval over agents within that run (for a
    `share`, 0/1 values by the outcome's kind, Newcombe's interval for a paired difference
    of proportions; a likert point of 1 is no share)."""
    means, n_agents = [], []
    for arm, ref in per_seed:
        d = np.asarray(arm, dtype=float) - np.asarray(ref, dtype=float)
        d = d[np.isfinite(d)]
        if d.size:
            means.append(float(d.mean()))
            n_agents.append(d.size)
    k = len(means)
    n = round(float(np.mean(n_agents))) if n_agents else 0
    if k == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, 0, "paired, no data")
    if k >= 2:
        m, lo, hi, df = t_interval(means)
        return Estimate(m, lo, hi, n, k, f"paired, t over seeds (df={df})")
    arm, ref = (np.asarray(v, dtype=float) for v in per_seed[0])
    ok = np.isfinite(arm) & np.isfinite(ref)
    arm, ref = arm[ok], ref[ok]
    if share:
        lo, hi = newcombe_paired(arm, ref)
        m = float(arm.mean() - ref.mean())
        return Estimate(m, lo, hi, n, 1, "paired, Newcombe share difference within one run")
    m, lo, hi, df = t_interval(arm - ref)
    return Estimate(m, lo, hi, n, 1, f"paired, t over agents within one run (df={df})")


def newcombe_paired(arm: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """Newcombe's (1998, method 10) 95% interval of a paired difference of two shares:
    built from Wilson intervals of each, inside [-1, 1]."""
    n = arm.size
    if n == 0:
        return (math.nan, math.nan)
    both = float(np.sum((arm == 1) & (ref == 1)))
    only_arm = float(np.sum((arm == 1) & (ref == 0)))
    only_ref = float(np.sum((arm == 0) & (ref == 1)))
    neither = float(n - both - only_arm - only_ref)
    p1, p2 = (both + only_arm) / n, (both + only_ref) / n
    l1, u1 = wilson(both + only_arm, n)
    l2, u2 = wilson(both + only_ref, n)
    margins = (both + only_arm) * (neither + only_ref) * (both + only_ref) * (neither + only_arm)
    phi = 0.0
    if margins > 0:
        phi = (both * neither - only_arm * only_ref) / math.sqrt(margins)
    delta = p1 - p2
    low = delta - math.sqrt(
        max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    high = delta + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return (max(-1.0, low), min(1.0, high))


def unpaired_effect(arm: Sequence[np.ndarray], ref: Sequence[np.ndarray]) -> Estimate:
    """Effect of arm over reference when they do not share seed and population: with
    replicates a Welch interval over the runs' means, else Welch over the agents of one run
    each (df by Welch-Satterthwaite)."""
    arm_means = [float(np.nanmean(a)) for a in arm if np.isfinite(a).any()]
    ref_means = [float(np.nanmean(r)) for r in ref if np.isfinite(r).any()]
    k = min(len(arm_means), len(ref_means))
    n = round(float(np.mean([np.isfinite(a).sum() for a in arm]))) if arm else 0
    if k == 0:
        return Estimate(math.nan, math.nan, math.nan, n, 0, "unpaired, no data")
    if len(arm_means) >= 2 and len(ref_means) >= 2:
        m, lo, hi, df = welch(np.asarray(arm_means), np.asarray(ref_means))
        return Estimate(m, lo, hi, n, k, f"unpaired, Welch t over seeds (df={df:.1f})")
    a = np.concatenate([np.asarray(x, float) for x in arm])
    b = np.concatenate([np.asarray(x, float) for x in ref])
    m, lo, hi, df = welch(a[np.isfinite(a)], b[np.isfinite(b)])
    return Estimate(m, lo, hi, n, k, f"unpaired, Welch t over agents within one run (df={df:.1f})")


def welch(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float]:
    """(mean(a) - mean(b), low, high, df) by Welch's t."""
    if a.size < 2 or b.size < 2:
        m = float(a.mean() - b.mean()) if a.size and b.size else math.nan
        return (m, math.nan, math.nan, math.nan)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    m = float(a.mean() - b.mean())
    se = math.sqrt(va + vb)
    if se == 0:
        return (m, m, m, float(a.size + b.size - 2))
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = t95(df) * se
    return (m, m - half, m + half, float(df))


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
    agent (`SELECT agent_id, min(tick) AS tick ...`); Wilson interval."""
    cols = run.columns(f"SELECT tick, count(*) AS k FROM ({sql_first_ticks}) GROUP BY tick")
    ticks = np.arange(run.ticks)
    counts = np.zeros(run.ticks)
    if cols:
        t = cols["tick"].astype(int)
        ok = (t >= 0) & (t < run.ticks)
        np.add.at(counts, t[ok], cols["k"].astype(float)[ok])
    total = max(1, denominator)
    reached = np.cumsum(counts)
    p = reached / total
    bounds = np.array([wilson(k, total) for k in reached]).reshape(-1, 2)
    n = np.full(run.ticks, float(denominator))
    return Band(ticks, p, bounds[:, 0], bounds[:, 1], n, "agents")


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


def within_unit(band: Band) -> Band:
    """A share's band with its interval cut to [0, 1] (a t interval over a few seeds' shares
    can reach past the ends; the share itself cannot)."""
    return Band(band.ticks, band.mean, np.clip(band.lo, 0.0, 1.0), np.clip(band.hi, 0.0, 1.0),
                band.n, band.over)  # fmt: skip


def arm_band(arm: Arm, make: Callable[[Any], Band]) -> Band:
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


def _per_agent(run: RunData, sql: str, ticks: int) -> np.ndarray:
    """A (ticks x agents) matrix of the query's `v` by `tick` and `agent_id` (NaN elsewhere)."""
    cols = run.columns(sql)
    out = np.full((ticks, max(1, run.agents)), np.nan)
    if cols:
        t, a = cols["tick"].astype(int), cols["agent_id"].astype(int)
        ok = (t >= 0) & (t < ticks) & (a >= 0) & (a < out.shape[1])
        out[t[ok], a[ok]] = cols["v"].astype(float)[ok]
    return out


def paired_band(pairs: Sequence[tuple[RunData, RunData]], sql: str) -> Band:
    """Arm minus reference per tick for runs sharing seed and population: the per-agent
    difference (`sql` selects tick, agent_id, v), averaged over agents; a t interval over
    seeds with replicates, else over the agents of the one run."""
    ticks = min(min(a.ticks, r.ticks) for a, r in pairs)
    means, sds, ns = [], [], []
    for arm, ref in pairs:
        d = _per_agent(arm, sql, ticks) - _per_agent(ref, sql, ticks)
        ns.append(np.sum(np.isfinite(d), axis=1))
        with warnings.catch_warnings():  # a tick without agents is NaN, not a warning
            warnings.simplefilter("ignore", RuntimeWarning)
            means.append(np.nanmean(d, axis=1))
            sds.append(np.nanstd(d, axis=1, ddof=1))
    axis = np.arange(ticks)
    if len(pairs) == 1:
        m, sd, n = means[0], np.nan_to_num(sds[0]), ns[0]
        q = np.array([t95(int(k) - 1) if k > 1 else np.nan for k in n])
        half = q * sd / np.sqrt(np.maximum(n, 1))
        return Band(axis, m, m - half, m + half, n.astype(float), "agents (paired)")
    stack = np.vstack(means)
    k = np.sum(np.isfinite(stack), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = np.nanmean(stack, axis=0)
        sd = np.nan_to_num(np.nanstd(stack, axis=0, ddof=1))
    q = np.array([t95(int(x) - 1) if x > 1 else np.nan for x in k])
    half = q * sd / np.sqrt(np.maximum(k, 1))
    return Band(axis, m, m - half, m + half, k.astype(float), "seeds (paired)")
