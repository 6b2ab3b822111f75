"""IdMap and RowQueue behave like the dict and deque they replace, on random workloads."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

from societas.memory.store.id_map import IdMap, RowQueue

GROUP = 3 << 40  # ids carry their group in the high bits


def _check(m: IdMap, d: dict[int, int]) -> None:
    assert len(m) == len(d)
    assert list(m) == sorted(d)
    assert m.items() == sorted(d.items())
    assert m.values() == [d[k] for k in sorted(d)]
    assert m.value_array().dtype == np.int64 and m.value_array().tolist() == m.values()
    probe = np.array(sorted(set(d) | {k + 1 for k in d} | {-5, 0, 10**9}), np.int64)
    assert m.contains_array(probe).tolist() == [int(k) in d for k in probe]
    for k, value in d.items():
        assert k in m and m[k] == value and m.get(k) == value


@pytest.mark.parametrize("seed", range(6))
def test_idmap_matches_a_dict_under_random_use(seed: int) -> None:
    """Ids mostly ascending (as a group allocates them), deleted oldest-first per 'agent' and
    at random, some set out of order (a restore), and stragglers that outlive the rest."""
    rng = random.Random(seed)
    m, d = IdMap(), {}
    next_seq = rng.randrange(1000)
    for _ in range(40):
        fresh = [GROUP | (next_seq + i) for i in range(rng.randrange(1, 400))]
        next_seq += len(fresh) + rng.randrange(50)  # gaps: ids of other kinds
        if rng.random() < 0.2:
            rng.shuffle(fresh)
        for k in fresh:
            v = rng.randrange(10**6)
            m[k], d[k] = v, v
        for k in sorted(d)[: rng.randrange(len(d) + 1)]:
            if rng.random() < 0.97:  # 3 % stay behind as stragglers
                del m[k], d[k]
        for k in rng.sample(sorted(d), min(len(d), rng.randrange(20))):
            assert m.pop(k) == d.pop(k)
        _check(m, d)
    assert m.pop(GROUP | 10**9, None) is None
    with pytest.raises(KeyError):
        m[GROUP | 10**9]
    with pytest.raises(KeyError):
        del m[GROUP | 10**9]
    assert (GROUP | 10**9) not in m and "x" not in m


def test_idmap_spans_only_the_ids_in_use() -> None:
    """A day's ids leaving in order keep the array near the live span, stragglers included."""
    m = IdMap()
    for day in range(30):
        for seq in range(day * 10_000, (day + 1) * 10_000):
            m[GROUP | seq] = seq & 0xFFFF
        for seq in range((day - 1) * 10_000, day * 10_000) if day else ():
            if day > 1 or seq % 1000:  # ten of day 0 stay for good
                del m[GROUP | seq]
    assert len(m) == 10_000 + 10
    assert m.nbytes() <= 8 * 3 * 10_000
    for seq in range(0, 10_000, 1000):
        assert m[GROUP | seq] == seq & 0xFFFF


def test_idmap_remap_values_and_negative_values() -> None:
    m = IdMap((GROUP | i, 2 * i) for i in range(10))
    m.remap_values(np.arange(20)[::-1].copy())
    assert m[GROUP | 3] == 19 - 6
    with pytest.raises(ValueError, match="values must be >= 0"):
        m[GROUP] = -1


def test_idmap_is_smaller_than_a_dict() -> None:
    """What it is for: 8 bytes a slot instead of ~100+ a dict entry with its int objects."""
    ids = [GROUP | i for i in range(50_000)]
    m = IdMap(zip(ids, range(50_000), strict=True))
    d = dict(zip(ids, range(1000, 51_000), strict=True))
    dict_bytes = sys.getsizeof(d) + sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in d.items())
    assert m.nbytes() * 5 < dict_bytes


def test_rowqueue_is_a_deque_for_the_calls_used() -> None:
    q = RowQueue([5, 6, 7])
    q.append(8)
    assert q.popleft() == 5 and list(q) == [6, 7, 8] and len(q) == 3
    q.remove(7)
    assert list(reversed(q)) == [8, 6] and q[-1] == 8
    assert np.frombuffer(q, np.int64).tolist() == [6, 8]


@pytest.mark.parametrize("seed", range(8))
def test_growing_below_the_base_takes_in_the_outliers_it_now_covers(seed: int) -> None:
    """Stragglers moved out of the array must be found again once the array grows down over
    them (a restore setting lower ids after the front was trimmed)."""
    rng = random.Random(seed)
    m, d = IdMap(), {}
    n = rng.randrange(2000, 6000)
    for seq in range(n):
        m[GROUP | seq] = d[GROUP | seq] = seq
    stay = set(rng.sample(range(n // 2), 3))
    for seq in range(n - 500):
        if seq not in stay:
            del m[GROUP | seq], d[GROUP | seq]
    for seq in rng.sample(range(n - 500), 300):
        m[GROUP | seq] = d[GROUP | seq] = seq + 1
    _check(m, d)


def test_set_many_sets_each_pair_and_rejects_uneven_lengths():
    """`set_many(keys, values)` is `self[k] = v` per pair (ids out of order, below the span,
    overwritten); keys and values of different lengths raise instead of dropping some."""
    many, one = IdMap(), IdMap()
    pairs = [(500, 1), (502, 2), (10, 3), (501, 4), (500, 5)]
    many.set_many([k for k, _ in pairs], [v for _, v in pairs])
    for key, value in pairs:
        one[key] = value
    assert dict(many.items()) == dict(one.items()) == {500: 5, 502: 2, 10: 3, 501: 4}
    with pytest.raises(ValueError):
        many.set_many([1, 2], [3])


@pytest.mark.parametrize("seed", range(6))
def test_batch_calls_match_a_dict(seed: int) -> None:
    """set_many / get_many / delete_many / among on batches past BATCH_AT (numpy passes) and
    below it equal the dict calls they stand for: ascending ids above and inside the span,
    overwrites, shuffled and below-the-span batches, stragglers, and the errors of absent ids
    and negative values."""
    rng = random.Random(seed)
    m, d = IdMap(), {}
    next_seq = rng.randrange(1000)
    for _ in range(40):
        fresh = [GROUP | (next_seq + i) for i in range(rng.randrange(1, 400))]
        next_seq += len(fresh) + rng.randrange(50)
        if d and rng.random() < 0.3:  # overwrite some live ids too, still ascending
            fresh = sorted(set(fresh) | set(rng.sample(sorted(d), min(len(d), 30))))
        if rng.random() < 0.15:
            rng.shuffle(fresh)
        values = range(rng.randrange(10**6), 10**7) if rng.random() < 0.5 else None
        values = list(values[: len(fresh)]) if values else [rng.randrange(10**6) for _ in fresh]
        m.set_many(fresh, values)
        d.update(zip(fresh, values, strict=True))
        keys = sorted(d)
        asked = rng.sample(keys, min(len(keys), rng.randrange(1, 60)))
        assert m.get_many(asked) == [d[k] for k in asked]
        probe = [*asked, GROUP | (next_seq + 5), GROUP | 1]
        rng.shuffle(probe)
        assert m.among(probe) == [k for k in probe if k in d]
        assert m.get_array(probe).tolist() == [d.get(k, -1) for k in probe]
        gone = keys[: rng.randrange(len(keys) + 1)]
        gone = [k for k in gone if rng.random() < 0.97]  # stragglers stay
        m.delete_many(gone)
        for k in gone:
            del d[k]
        _check(m, d)
    absent = GROUP | (next_seq + 7)
    present = sorted(d)[:20]
    with pytest.raises(KeyError):
        m.get_many([*present, absent])
    with pytest.raises(KeyError):
        m.delete_many([absent, *present])
    with pytest.raises(ValueError, match="must be >= 0"):
        m.set_many([GROUP | (next_seq + i) for i in range(20)], [*range(19), -1])


def test_delete_many_of_a_repeated_id_fails_as_deleting_twice() -> None:
    m = IdMap((GROUP | i, i) for i in range(100))
    with pytest.raises(KeyError):
        m.delete_many([GROUP | i for i in range(20)] + [GROUP | 3])
