"""An agent's random stream in one 64-bit word: `random.Random`'s API over a SplitMix64 state.

Every agent owns its stream, so results do not depend on how agents are split into groups.
`random.Random` carries a Mersenne Twister state of 624 words per instance (and as many
integers per agent in a checkpoint), which adds up over many agents. SplitMix64 (Steele, Lea
and Flood 2014) passes BigCrush, is one 64-bit word of state, and is plenty for agents'
choices. The integer draws (randrange, randint, choice, shuffle, sample) are written here
with `random.Random`'s algorithms, so a seed gives the draws a `random.Random` subclass on
this generator would; the continuous ones are `random.Random`'s public methods, which only
call `random()`.
"""

from __future__ import annotations

from bisect import bisect
from collections.abc import Iterable, MutableSequence, Sequence
from itertools import accumulate
from math import ceil, floor, isfinite, log
from operator import index
from random import Random as _MersenneTwister
from typing import Any, TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


class AgentRandom:
    """Deterministic per-agent randomness with the `random.Random` API agents use."""

    __slots__ = ("_state", "gauss_next")

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {seed!r}")
        self._state = seed & _MASK
        self.gauss_next: float | None = None

    def _next64(self) -> int:
        self._state = s = (self._state + _GOLDEN) & _MASK
        z = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def random(self) -> float:
        """A float in [0, 1) with 53 random bits."""
        return (self._next64() >> 11) * (1.0 / 9007199254740992.0)

    def getrandbits(self, k: int) -> int:
        """A non-negative int of `k` random bits."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        out, filled = 0, 0
        while filled < k:
            take = min(64, k - filled)
            out = (out << take) | (self._next64() >> (64 - take))
            filled += take
        return out

    def getstate(self) -> tuple[int, float | None]:
        return self._state, self.gauss_next

    def setstate(self, state: tuple[int, float | None] | list[Any]) -> None:
        value = state[0] if len(state) == 2 else None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MASK:
            raise ValueError(f"not an AgentRandom state: {state!r}")
        self._state, self.gauss_next = value, state[1]

    def _below(self, n: int) -> int:
        """A uniform int in [0, n): `n.bit_length()` random bits, drawn again while >= n."""
        k = n.bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return r

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        """A random item of `range(start, stop, step)` (or of `range(start)`)."""
        istart = index(start)
        if stop is None:
            if step != 1:
                raise TypeError("Missing a non-None stop argument")
            if istart > 0:
                return self._below(istart)
            raise ValueError("empty range for randrange()")
        width = index(stop) - istart
        istep = index(step)
        if istep == 1:
            if width > 0:
                return istart + self._below(width)
            raise ValueError(f"empty range for randrange({istart}, {stop})")
        if istep > 0:
            n = (width + istep - 1) // istep
        elif istep < 0:
            n = (width + istep + 1) // istep
        else:
            raise ValueError("zero step for randrange()")
        if n <= 0:
            raise ValueError(f"empty range for randrange({istart}, {stop}, {istep})")
        return istart + istep * self._below(n)

    def randint(self, a: int, b: int) -> int:
        """A random int in [a, b], both ends included."""
        return self.randrange(a, b + 1)

    def choice(self, seq: Sequence[T]) -> T:
        """A random element of a non-empty sequence."""
        if not len(seq):
            raise IndexError("Cannot choose from an empty sequence")
        return seq[self._below(len(seq))]

    def shuffle(self, x: MutableSequence[Any]) -> None:
        """Shuffle `x` in place."""
        for i in reversed(range(1, len(x))):
            j = self._below(i + 1)
            x[i], x[j] = x[j], x[i]

    def sample(
        self, population: Sequence[T], k: int, *, counts: Iterable[int] | None = None
    ) -> list[T]:
        """`k` unique elements of `population` in selection order (repeats by `counts`)."""
        if not isinstance(population, Sequence):
            raise TypeError("Population must be a sequence.  For dicts or sets, use sorted(d).")
        n = len(population)
        if counts is not None:
            cum_counts = list(accumulate(counts))
            if len(cum_counts) != n:
                raise ValueError("The number of counts does not match the population")
            total = cum_counts.pop()
            if not isinstance(total, int):
                raise TypeError("Counts must be integers")
            if total <= 0:
                raise ValueError("Total of counts must be greater than zero")
            return [population[bisect(cum_counts, s)] for s in self.sample(range(total), k=k)]
        if not 0 <= k <= n:
            raise ValueError("Sample larger than population or is negative")
        result: list[Any] = [None] * k
        setsize = 21  # a small set's size minus an empty list's: below it, pick from a pool
        if k > 5:
            setsize += 4 ** ceil(log(k * 3, 4))
        if n <= setsize:
            pool = list(population)
            for i in range(k):
                j = self._below(n - i)
                result[i] = pool[j]
                pool[j] = pool[n - i - 1]
        else:
            selected: set[int] = set()
            for i in range(k):
                j = self._below(n)
                while j in selected:
                    j = self._below(n)
                selected.add(j)
                result[i] = population[j]
        return result

    def choices(
        self,
        population: Sequence[T],
        weights: Sequence[float] | None = None,
        *,
        cum_weights: Sequence[float] | None = None,
        k: int = 1,
    ) -> list[T]:
        """`k` items drawn with replacement, by weight: `random.Random.choices`' algorithm."""
        n = len(population)
        if cum_weights is None:
            if weights is None:
                return [population[floor(self.random() * n)] for _ in range(k)]
            cum_weights = list(accumulate(weights))
        elif weights is not None:
            raise TypeError("Cannot specify both weights and cumulative weights")
        if len(cum_weights) != n:
            raise ValueError("The number of weights does not match the population")
        total = cum_weights[-1] + 0.0
        if total <= 0.0:
            raise ValueError("Total of weights must be greater than zero")
        if not isfinite(total):
            raise ValueError("Total of weights must be finite")
        return [population[bisect(cum_weights, self.random() * total, 0, n - 1)] for _ in range(k)]

    # random.Random's continuous draws: public methods that call `random()`.
    uniform = _MersenneTwister.uniform
    triangular = _MersenneTwister.triangular
    gauss = _MersenneTwister.gauss
    normalvariate = _MersenneTwister.normalvariate
    lognormvariate = _MersenneTwister.lognormvariate
    expovariate = _MersenneTwister.expovariate
    betavariate = _MersenneTwister.betavariate
    gammavariate = _MersenneTwister.gammavariate
    paretovariate = _MersenneTwister.paretovariate
    weibullvariate = _MersenneTwister.weibullvariate
    vonmisesvariate = _MersenneTwister.vonmisesvariate


__all__ = ["AgentRandom"]
