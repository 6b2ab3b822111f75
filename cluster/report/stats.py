"""The report's statistics, in one place: curves with 95% bands, Student t quantiles, Wilson
intervals for shares, and the intervals of paired and unpaired arm effects.

A `Band` is a per-tick mean with a 95% interval. Within one run the interval is over agents
(Student's t with n-1 degrees of freedom; agents on a network are not independent draws, so
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
    """(mean, low, high, df) of a t interval over `values` (NaN dropped); one value, or values
    all equal, have no interval (NaN): there is no spread to estimate one from."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return (math.nan, math.nan, math.nan, 0)
    m = float(x.mean())
    if x.size == 1:
        return (m, math.nan, math.nan, 0)
    sd = float(x.std(ddof=1))
    if not sd > 0:
        return (m, math.nan, math.nan, x.size - 1)
    half = t95(x.size - 1) * sd / math.sqrt(x.size)
    return (m, m - half, m + half, x.size - 1)


def _how(method: str, estimate: float, low: float) -> str:
    """The method, saying why a finite estimate has no interval."""
    if math.isfinite(estimate) and math.isnan(low):
        return f"{method}; no interval: every value equal or too few"
    return method


def paired_effect(
    per_seed: Sequence[tuple[np.ndarray, np.ndarray]], share: bool = False
) -> Estimate:
    """Effect of arm over reference from (arm, reference) values of the same agents, one pair
    of arrays per seed: differences per agent, their mean per seed, then a t interval over
    seeds (df = seeds - 1); with one seed a t interval over agents within that run (for a
    `share`, 0/1 values by the outcome's kind, Newcombe's interval for a paired difference
    of proportions; a likert point of 1 is no share)."""
    pairs, means = [], []
    for arm_values, ref_values in per_seed:
        arm, ref = np.asarray(arm_values, dtype=float), np.asarray(ref_values, dtype=float)
        ok = np.isfinite(arm) & np.isfinite(ref)
        if ok.any():
            pairs.append((arm[ok], ref[ok]))
            means.append(float((arm[ok] - ref[ok]).mean()))
    k = len(pairs)
    if k == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, 0, "paired, no data")
    n = round(float(np.mean([arm.size for arm, _ in pairs])))
    if k >= 2:
        m, lo, hi, df = t_interval(means)
        return Estimate(m, lo, hi, n, k, _how(f"paired, t over seeds (df={df})", m, lo))
    arm, ref = pairs[0]
    if share:
        lo, hi = newcombe_paired(arm, ref)
        m = float(arm.mean() - ref.mean())
        return Estimate(m, lo, hi, n, 1, "paired, Newcombe share difference within one run")
    m, lo, hi, df = t_interval(arm - ref)
    return Estimate(m, lo, hi, n, 1, _how(f"paired, t over agents within one run (df={df})", m, lo))


def newcombe_paired(arm: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """Newcombe's (1998, method 10) 95% interval of a paired difference of two shares: built
    from Wilson intervals of each and their corrected correlation, inside [-1, 1]."""
    n = arm.size
    if n == 0:
        return (math.nan, math.nan)
    both = float(np.sum((arm == 1) & (ref == 1)))
    only_arm = float(np.sum((arm == 1) & (ref == 0)))
    only_ref = float(np.sum((arm == 0) & (ref == 1)))
    neither = float(n - both - only_arm - only_ref)
    margins = (both + only_arm) * (neither + only_ref) * (both + only_ref) * (neither + only_arm)
    cross = both * neither - only_arm * only_ref
    if cross > 0:  # Newcombe's correction of the estimated correlation
        cross = max(cross - n / 2, 0.0)
    phi = cross / math.sqrt(margins) if margins > 0 else 0.0
    return _square_and_add(both + only_arm, n, both + only_ref, n, phi)


def newcombe_unpaired(k1: float, n1: float, k2: float, n2: float) -> tuple[float, float]:
    """Newcombe's (1998, method 10) 95% interval of k1/n1 - k2/n2, two independent shares,
    built from their Wilson intervals, inside [-1, 1]."""
    if n1 <= 0 or n2 <= 0:
        return (math.nan, math.nan)
    return _square_and_add(k1, n1, k2, n2, 0.0)


def _square_and_add(k1: float, n1: float, k2: float, n2: float, phi: float) -> tuple[float, float]:
    """k1/n1 - k2/n2 with its interval from the two Wilson intervals, squared and added
    (`phi`: the two shares' correlation, 0 when independent), inside [-1, 1]."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1)
    l2, u2 = wilson(k2, n2)
    delta = p1 - p2
    low = delta - math.sqrt(
        max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    high = delta + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return (max(-1.0, low), min(1.0, high))


def unpaired_effect(
    arm: Sequence[np.ndarray], ref: Sequence[np.ndarray], share: bool = False
) -> Estimate:
    """Effect of arm over reference when they do not share seed and population: with
    replicates of both a Welch interval over the runs' means; with replicates of one only a
    pooled t over the runs' means (the arm with one run assumed to vary as the other); with
    one run each Welch over their agents (df by Welch-Satterthwaite), or for a `share`
    Newcombe's interval of a difference of independent proportions."""
    arm_means = [float(np.nanmean(a)) for a in arm if np.isfinite(a).any()]
    ref_means = [float(np.nanmean(r)) for r in ref if np.isfinite(r).any()]
    k = min(len(arm_means), len(ref_means))
    n = round(float(np.mean([np.isfinite(a).sum() for a in arm]))) if arm else 0
    if k == 0:
        return Estimate(math.nan, math.nan, math.nan, n, 0, "unpaired, no data")
    if k >= 2:
        m, lo, hi, df = welch(np.asarray(arm_means), np.asarray(ref_means))
        return Estimate(m, lo, hi, n, k, _how(f"unpaired, Welch t over seeds (df={df:.1f})", m, lo))
    if max(len(arm_means), len(ref_means)) >= 2:
        m, lo, hi, dof = pooled_t(np.asarray(arm_means), np.asarray(ref_means))
        how = f"unpaired, pooled t over seeds (df={dof}): one arm has 1 seed"
        return Estimate(m, lo, hi, n, 1, _how(how, m, lo))
    a = np.concatenate([np.asarray(x, float) for x in arm])
    b = np.concatenate([np.asarray(x, float) for x in ref])
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if share:
        lo, hi = newcombe_unpaired(float(np.sum(a == 1)), a.size, float(np.sum(b == 1)), b.size)
        m = float(a.mean() - b.mean())
        return Estimate(m, lo, hi, n, 1, "unpaired, Newcombe share difference within one run")
    m, lo, hi, df = welch(a, b)
    how = f"unpaired, Welch t over agents within one run (df={df:.1f})"
    return Estimate(m, lo, hi, n, 1, _how(how, m, lo))


def welch(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float]:
    """(mean(a) - mean(b), low, high, df) by Welch's t; no interval (NaN) without spread."""
    if a.size < 2 or b.size < 2:
        m = float(a.mean() - b.mean()) if a.size and b.size else math.nan
        return (m, math.nan, math.nan, math.nan)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    m = float(a.mean() - b.mean())
    if not va + vb > 0:
        return (m, math.nan, math.nan, float(a.size + b.size - 2))
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = t95(df) * se
    return (m, m - half, m + half, float(df))


def pooled_t(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, int]:
    """(mean(a) - mean(b), low, high, df) by Student's t with a pooled variance, which
    needs two values on one side only; no interval (NaN) without spread."""
    m = float(a.mean() - b.mean())
    df = a.size + b.size - 2
    if df < 1:
        return (m, math.nan, math.nan, df)
    spread = float(np.sum((a - a.mean()) ** 2) + np.sum((b - b.mean()) ** 2)) / df
    if not spread > 0:
        return (m, math.nan, math.nan, df)
    half = t95(df) * math.sqrt(spread * (1 / a.size + 1 / b.size))
    return (m, m - half, m + half, df)


@dataclass
class Band:
    """A per-tick mean and its 95% interval (lo, hi); `n` is agents or replicates per tick."""

    ticks: np.ndarray
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n: np.ndarray
    over: str  # "agents" or "seeds"
    share: bool = False  # a share of `n` agents with Wilson intervals

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


def _per_tick(
    run: RunData, aggregates: str, table: str, where: str
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The run's tick axis and, per tick of `table`'s rows matching `where`, `aggregates`
    placed on it (NaN at ticks without rows; {} when the table is missing)."""
    cols = run.columns(
        f"SELECT tick, {aggregates}, count(*) AS n FROM {table} WHERE {where} "
        "GROUP BY tick ORDER BY tick"
    )
    ticks = np.arange(run.ticks)
    if not cols:
        return ticks, {}
    t = cols.pop("tick").astype(int)
    n = dense(run, t, cols.pop("n").astype(float), 0.0)
    return ticks, {"n": n} | {k: dense(run, t, v.astype(float)) for k, v in cols.items()}


def _no_band(ticks: np.ndarray, share: bool = False) -> Band:
    nan = np.full(ticks.size, np.nan)
    return Band(ticks, nan, nan, nan, np.zeros(ticks.size), "agents", share)


def agent_band(run: RunData, expr: str, table: str = "agent_state", where: str = "true") -> Band:
    """Per-tick mean of a SQL expression over agents, with its t interval (none for one)."""
    value = f"({expr})::DOUBLE"
    ticks, c = _per_tick(run, f"avg({value}) AS m, stddev_samp({value}) AS s", table, where)
    if not c:
        return _no_band(ticks)
    m, n = c["m"], c["n"]
    half = _t95s(n) * c["s"] / np.sqrt(np.maximum(n, 1))
    return Band(ticks, m, m - half, m + half, n, "agents")


def _t95s(counts: np.ndarray) -> np.ndarray:
    """t95 with count - 1 degrees of freedom per entry; NaN below 2 (no interval)."""
    return np.array([t95(int(c) - 1) if c > 1 else np.nan for c in counts])


def share_band(run: RunData, expr: str, table: str = "agent_state", where: str = "true") -> Band:
    """Per-tick share of agents for whom a SQL condition holds, with its Wilson interval."""
    ticks, c = _per_tick(run, f"count(*) FILTER (WHERE ({expr})) AS k", table, where)
    if not c:
        return _no_band(ticks, share=True)
    k, n = c["k"], c["n"]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
    bounds = np.array([wilson(a, b) for a, b in zip(k, n, strict=True)]).reshape(-1, 2)
    return Band(ticks, p, bounds[:, 0], bounds[:, 1], n, "agents", share=True)


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
    return Band(ticks, p, bounds[:, 0], bounds[:, 1], n, "agents", share=True)


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
    half = _t95s(k) * sd / np.sqrt(np.maximum(k, 1))
    return Band(bands[0].ticks[:length], m, m - half, m + half, k.astype(float), "seeds")


def within_unit(band: Band) -> Band:
    """A share's band with its interval cut to [0, 1] (a t interval over a few seeds' shares
    can reach past the ends; the share itself cannot)."""
    return Band(band.ticks, band.mean, np.clip(band.lo, 0.0, 1.0), np.clip(band.hi, 0.0, 1.0),
                band.n, band.over, band.share)  # fmt: skip


def arm_band(arm: Arm, make: Callable[[Any], Band]) -> Band:
    """`make(run) -> Band` for every replicate of an arm, combined over seeds."""
    return over_seeds([make(run) for run in arm.runs])


def difference(a: Band, b: Band) -> Band:
    """b - a per tick with the interval of a difference of independent means, or of two
    shares within one run each, Newcombe's interval of a difference of proportions."""
    length = min(a.mean.size, b.mean.size)
    if a.share and b.share:
        return _share_difference(a, b, length)
    half_a = (a.hi[:length] - a.lo[:length]) / 2
    half_b = (b.hi[:length] - b.lo[:length]) / 2
    d = b.mean[:length] - a.mean[:length]
    half = np.sqrt(half_a**2 + half_b**2)
    return Band(
        a.ticks[:length], d, d - half, d + half, np.minimum(a.n[:length], b.n[:length]), a.over
    )


def _share_difference(a: Band, b: Band, length: int) -> Band:
    """b - a per tick for two shares of agents, Newcombe's (1998, method 10) interval."""
    d = b.mean[:length] - a.mean[:length]
    lo, hi = np.full(length, np.nan), np.full(length, np.nan)
    for i in range(length):
        na, nb = int(a.n[i]), int(b.n[i])
        if na and nb and np.isfinite(d[i]):
            ka, kb = round(a.mean[i] * na), round(b.mean[i] * nb)
            lo[i], hi[i] = newcombe_unpaired(kb, nb, ka, na)
    return Band(a.ticks[:length], d, lo, hi, np.minimum(a.n[:length], b.n[:length]), a.over)


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
        half = _t95s(n) * sd / np.sqrt(np.maximum(n, 1))
        return Band(axis, m, m - half, m + half, n.astype(float), "agents (paired)")
    stack = np.vstack(means)
    k = np.sum(np.isfinite(stack), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = np.nanmean(stack, axis=0)
        sd = np.nan_to_num(np.nanstd(stack, axis=0, ddof=1))
    half = _t95s(k) * sd / np.sqrt(np.maximum(k, 1))
    return Band(axis, m, m - half, m + half, k.astype(float), "seeds (paired)")
