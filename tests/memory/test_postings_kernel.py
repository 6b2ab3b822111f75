"""The RAM index's appends in C (memory/_postings.c) against `SparseIndex.add`'s Python loop:
the same postings, term counts and errors, and storage grown by a quarter again."""

from __future__ import annotations

import random

import pytest

from societas.memory import rank_kernel
from societas.memory.sparse_index import AgentPostings

from .conftest import allocated_items, quarter_rule


@pytest.mark.parametrize("seed", range(4))
def test_compiled_appends_equal_the_python_loop(seed, monkeypatch):
    """`SparseIndex.add` through memory/_postings.c and through its Python loop build the
    same postings, term counts, topics and row order: batches with new and known agents,
    new topics, memories with no vector or no terms, and ids below an agent's last (a
    restore: re-sorted)."""
    from societas.memory.embedding.base import SparseVector
    from societas.memory.sparse_index import SparseIndex

    assert rank_kernel.POSTINGS is not None, "the install did not build memory/_postings.c"
    rng = random.Random(seed)
    batches = []
    next_id = 1000
    for _ in range(12):
        n = rng.randrange(1, 40)
        ids = [next_id + i for i in range(n)]
        next_id += n
        if rng.random() < 0.25:  # a restore: ids below some agents' last
            ids = [i - rng.randrange(900) for i in ids]
        vectors = []
        for _ in ids:
            terms = sorted(rng.sample(range(1, 5000), rng.randrange(0, 12)))
            vector = SparseVector.of(terms, [rng.random() for _ in terms])
            vectors.append(None if rng.random() < 0.1 else vector)
        batches.append(
            (
                ids,
                [rng.randrange(8) for _ in ids],
                [rng.random() * 1e6 for _ in ids],
                [rng.random() for _ in ids],
                [rng.choice(("event", "social", "plan", f"t{rng.randrange(50)}")) for _ in ids],
                vectors,
            )
        )
    indexes = {}
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(rank_kernel, "POSTINGS", None)
        index = indexes[compiled] = SparseIndex()
        for batch in batches:
            index.add(*batch)
    fast, slow = indexes[True], indexes[False]
    assert fast.docs == slow.docs and fast.df == slow.df and fast.topic_names == slow.topic_names
    assert fast.agents.keys() == slow.agents.keys()
    for agent_id, p in slow.agents.items():
        q = fast.agents[agent_id]
        for name in AgentPostings.__slots__:
            assert getattr(q, name) == getattr(p, name), (agent_id, name)
        assert list(q.ids) == sorted(q.ids)


def test_compiled_appends_fail_as_the_python_loop(monkeypatch):
    """An agent's postings exporting their buffer (a live memoryview) refuse the append in
    both paths with BufferError, and the rows before it keep their terms counted; both paths
    hold the same values after many appends."""
    from societas.memory.embedding.base import SparseVector
    from societas.memory.sparse_index import SparseIndex

    def vec(*terms):
        return SparseVector.of(terms, [0.5] * len(terms))

    states = {}
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(rank_kernel, "POSTINGS", None)
        index = SparseIndex()
        index.add([1], [2], [0.0], [0.1], ["event"], [vec(4, 8)])
        view = memoryview(index.agents[2].ids)  # agent 2's ids exported: no resize
        with pytest.raises(BufferError):
            index.add([5, 6, 7], [1, 2, 3], [1.0] * 3, [0.2] * 3, ["event"] * 3,
                      [vec(4, 9), vec(4, 8), vec(1)])  # fmt: skip
        view.release()
        after_failure = dict(index.df)
        for n in range(300):  # long runs of appends
            index.add([100 + n], [1], [float(n)], [0.5], ["plan"], [vec(n, n + 1, 7)])
        columns = {
            a: [getattr(p, f) for f in AgentPostings.__slots__] for a, p in index.agents.items()
        }
        states[compiled] = (
            after_failure,
            dict(index.df),
            {a: [c.tolist() for c in cs] for a, cs in columns.items()},
        )
    assert states[True] == states[False]
    assert states[True][0] == {4: 2, 8: 1, 9: 1}  # agent 1's row counted, not 2's or 3's


def test_compiled_postings_grow_by_a_quarter():
    """Rows go straight into the arrays' storage, grown by a quarter again (memory/_arrays.h),
    not by `array`'s own sixteenth: 300 rows of 3 terms take the terms array through 16
    allocations, not 34, and leave at most a quarter of its items (plus 7) as headroom."""
    from societas.memory.embedding.base import SparseVector
    from societas.memory.sparse_index import SparseIndex

    index = SparseIndex()
    ids, terms = [], []
    for n in range(300):
        vector = SparseVector.of([n, n + 1, 7], [0.5] * 3)
        index.add([100 + n], [1], [float(n)], [0.5], ["plan"], [vector])
        p = index.agents[1]
        ids.append(allocated_items(p.ids))
        terms.append(allocated_items(p.terms))
    assert ids == quarter_rule([1] * 300)
    assert terms == quarter_rule([3] * 300)
    assert len(set(terms)) == 16 and terms[-1] - 900 <= 900 // 4 + 7
