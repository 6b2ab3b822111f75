"""An agent's random stream in ~100 bytes: `random.Random`'s methods over a SplitMix64 state.

Every agent owns its stream, so results do not depend on how agents are split into groups.
`random.Random` carries 2.5 KB of Mersenne Twister state (and a checkpoint 625 integers per
agent); at 100,000 agents that is 250 MB of RAM for random numbers. SplitMix64 (Steele, Lea
and Flood 2014) passes BigCrush, is one 64-bit word of state, and is plenty for agents'
choices. The sampling methods are `random.Random`'s own Python code, run on this generator.
"""

from __future__ import annotations

from random import Random as _MersenneTwister
from typing import Any

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

    # random.Random's sampling code, driven by `random()` and `getrandbits()` above.
    _randbelow = _MersenneTwister._randbelow_with_getrandbits
    randrange = _MersenneTwister.randrange
    randint = _MersenneTwister.randint
    choice = _MersenneTwister.choice
    choices = _MersenneTwister.choices
    sample = _MersenneTwister.sample
    shuffle = _MersenneTwister.shuffle
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
