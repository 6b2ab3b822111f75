"""AgentRandom: a one-word deterministic stream with the random.Random methods agents use."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from societas.agents.rng import AgentRandom


def test_same_seed_same_stream_other_seed_other_stream():
    a, b, c = AgentRandom(7), AgentRandom(7), AgentRandom(8)
    draws = [a.random() for _ in range(50)]
    assert draws == [b.random() for _ in range(50)]
    assert draws != [c.random() for _ in range(50)]
    assert all(0.0 <= x < 1.0 for x in draws)


def test_state_round_trips_through_json_and_resumes_the_stream():
    rng = AgentRandom(2026)
    rng.gauss(0.0, 1.0)  # leaves a cached second normal in gauss_next
    saved = json.loads(json.dumps(rng.getstate()))
    expected = [rng.gauss(0.0, 1.0), rng.random(), rng.choice("abcdef"), rng.sample(range(50), 4)]
    other = AgentRandom(1)
    other.setstate(saved)
    got = [
        other.gauss(0.0, 1.0),
        other.random(),
        other.choice("abcdef"),
        other.sample(range(50), 4),
    ]
    assert got == expected
    assert isinstance(saved[0], int)  # one 64-bit word, not 625 Mersenne Twister integers


def test_sampling_methods_cover_their_ranges_evenly():
    rng = AgentRandom(99)
    faces = Counter(rng.randint(1, 6) for _ in range(60_000))
    assert set(faces) == {1, 2, 3, 4, 5, 6}
    assert max(faces.values()) / min(faces.values()) < 1.1
    assert sorted(rng.sample(range(20), 20)) == list(range(20))
    picks = Counter(rng.choices("ab", weights=[1, 3], k=40_000))
    assert 0.72 < picks["b"] / 40_000 < 0.78
    assert all(2.0 <= rng.uniform(2.0, 3.0) <= 3.0 for _ in range(1000))
    assert 0 <= rng.randrange(10) < 10
    assert rng.getrandbits(0) == 0 and rng.getrandbits(130) < 2**130
    items = list(range(30))
    rng.shuffle(items)
    assert sorted(items) == list(range(30)) and items != list(range(30))


def test_bad_seed_or_state_is_refused():
    with pytest.raises(TypeError, match="seed must be an int"):
        AgentRandom("7")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not an AgentRandom state"):
        AgentRandom(1).setstate([3, [1, 2, 3], None])  # a Mersenne Twister state


class _Reference(random.Random):
    """`random.Random` on the same SplitMix64 stream, through its documented subclass hooks
    (`random` and `getrandbits` overridden): what AgentRandom's draws must equal."""

    def __init__(self, seed: int) -> None:
        self.stream = AgentRandom(seed)
        super().__init__(seed)

    def seed(self, *args: object, **kwargs: object) -> None:
        self.gauss_next = None

    def random(self) -> float:
        return self.stream.random()

    def getrandbits(self, k: int) -> int:
        return self.stream.getrandbits(k)


def test_draws_equal_random_random_on_the_same_generator():
    """A seed gives exactly the integer and sequence draws `random.Random` would give."""
    for seed in (0, 1, 7, 2026, 2**63 + 5):
        mine, ref = AgentRandom(seed), _Reference(seed)
        for n in (1, 2, 3, 10, 1000, 2**70):
            assert [mine.randrange(n) for _ in range(20)] == [ref.randrange(n) for _ in range(20)]
        assert mine.randrange(5, 50, 7) == ref.randrange(5, 50, 7)
        assert mine.randrange(50, 5, -3) == ref.randrange(50, 5, -3)
        assert [mine.randint(-3, 3) for _ in range(30)] == [ref.randint(-3, 3) for _ in range(30)]
        assert [mine.choice("abcdefg") for _ in range(30)] == [
            ref.choice("abcdefg") for _ in range(30)
        ]
        a, b = list(range(40)), list(range(40))
        mine.shuffle(a)
        ref.shuffle(b)
        assert a == b
        for population, k in ((range(10), 4), (range(10_000), 60), ("abcdef", 6)):
            assert mine.sample(population, k) == ref.sample(population, k)
        assert mine.sample("ab", 5, counts=[4, 2]) == ref.sample("ab", 5, counts=[4, 2])
        assert mine.choices("abc", [1, 2, 3], k=5) == ref.choices("abc", [1, 2, 3], k=5)
        assert mine.gauss(0.0, 1.0) == ref.gauss(0.0, 1.0)
        assert mine.getstate()[0] == ref.stream.getstate()[0]


def test_bad_ranges_are_refused_like_random_random():
    rng = AgentRandom(3)
    for args in ((0,), (5, 5), (1, 10, 0), (10, 1, 1)):
        with pytest.raises(ValueError):
            rng.randrange(*args)
    with pytest.raises(IndexError):
        rng.choice([])
    with pytest.raises(ValueError):
        rng.sample(range(3), 4)
