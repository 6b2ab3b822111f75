"""The compiled ranking kernel (memory/_rank.c): bit-identical to the numpy path it replaces."""

from __future__ import annotations

from array import array

import numpy as np
import pytest

from societas.memory import rank_kernel
from societas.memory.embedding.base import SparseVector
from societas.memory.sparse_index import SparseIndex
from societas.memory.vectorstores.base import ScoredPoint

K_SAT = 2.0


def _kernel():
    kernel = rank_kernel.KERNEL
    assert kernel is not None, "the install did not build memory/_rank.c (is a C compiler there?)"
    return kernel


def _postings(rng: np.random.Generator, rows: int, vocabulary: int):
    """An index holding one agent's random memories (terms drawn from a small vocabulary,
    so that rows share terms and many scores tie)."""
    index = SparseIndex()
    vectors = []
    for _ in range(rows):
        n = min(int(rng.integers(0, 9)), vocabulary)
        terms = sorted(rng.choice(vocabulary, n, replace=False).tolist())
        weights = (rng.integers(1, 4, n) * 0.5).tolist() if rng.random() < 0.5 else rng.random(n)
        vectors.append(_Sparse(array("I", terms), array("f", weights)))
    index.add(
        list(range(10, 10 + rows)),
        [1] * rows,
        [0.0] * rows,
        [0.0] * rows,
        ["event"] * rows,
        vectors,
    )
    return index, index.agents[1]


def _postings_args(index, p, query):
    """The kernel's arguments before the score: the agent's postings, the query, the counts."""
    return p.ids, p.terms, p.weights, p.ends, query.indices, query.values, index.df, index.docs


class _Sparse:
    """The two fields of a sparse vector that `SparseIndex.add` reads."""

    def __init__(self, indices, values) -> None:
        self.indices, self.values = indices, values


def _numpy_rank(index, p, query, base, mask, gamma, saturate, relevant_only, k):
    """memory.ram_ranking's numpy path for one search: weights, relevance, score, top k."""
    score = base.copy()
    raw = index.relevance(p, index.query_weights(query))
    if relevant_only and len(query.indices):
        relevant = raw > 0 if raw is not None else np.zeros(len(p), bool)
        mask = relevant if mask is None else mask & relevant
    if raw is not None:
        relevance = raw / (raw + K_SAT) if saturate else raw
        score += relevance if gamma == 1.0 else gamma * relevance
    rows = np.arange(len(p)) if mask is None else mask.nonzero()[0]
    order = sorted(rows.tolist(), key=lambda r: (-score[r], -r))[:k]
    return [p.ids[r] for r in order], [float(score[r]) for r in order], len(rows)


def test_kernel_ranks_bit_for_bit_as_numpy():
    """Random postings, queries (0 to 80 terms, some absent), ties, masks, both
    normalizations, γ ≠ 1, k from 1 to beyond the rows: the same rows, scores and counts."""
    kernel = _kernel()
    rng = np.random.default_rng(5)
    for trial in range(1500):
        rows = int(rng.integers(1, 60))
        index, p = _postings(rng, rows, vocabulary=int(rng.integers(3, 40)))
        q_terms = rng.choice(100, int(rng.integers(0, 8)) if trial % 10 else 80, replace=False)
        query = SparseVector(array("I", q_terms.tolist()), array("f", rng.random(len(q_terms))))
        base = rng.integers(0, 3, rows) * 0.5 if trial % 2 else rng.random(rows)
        mask = rng.random(rows) < 0.6 if trial % 3 == 0 else None
        gamma = 1.0 if trial % 4 else 0.7
        saturate, relevant_only = bool(trial % 5), trial % 7 == 0
        k = int(rng.integers(1, 25))
        expected = _numpy_rank(index, p, query, base, mask, gamma, saturate, relevant_only, k)
        got = kernel.rank(
            *_postings_args(index, p, query), base.copy(), mask, K_SAT, gamma, saturate,
            relevant_only, k,
        )  # fmt: skip
        assert (got[0], got[1], got[2]) == expected, trial


def test_kernel_rejects_what_it_cannot_rank():
    """A NaN score and arrays of different lengths raise, naming the problem."""
    kernel = _kernel()
    index, p = _postings(np.random.default_rng(1), 4, vocabulary=5)
    args = _postings_args(index, p, SparseVector(array("I", [1, 2]), array("f", [1.0, 0.5])))
    score = np.array([0.1, np.nan, 0.2, 0.3])
    with pytest.raises(ValueError, match="NaN"):
        kernel.rank(*args, score, None, K_SAT, 1.0, True, False, 3)
    with pytest.raises(ValueError, match="lengths"):
        kernel.rank(*args, np.zeros(3), None, K_SAT, 1.0, True, False, 3)
    with pytest.raises(ValueError, match="lengths"):
        kernel.rank(*args[:5], array("f", [1.0]), *args[6:], score, None, K_SAT, 1.0, 1, 0, 3)
    with pytest.raises(TypeError, match="dict"):
        kernel.rank(*args[:6], [(1, 2)], index.docs, score, None, K_SAT, 1.0, True, False, 3)


def test_recency_passes_take_one_buffer_or_a_batch_of_them():
    """decay_args / weigh over a list of agents' buffers write them one after another, as
    over each alone; the parts must fill the output exactly, and be buffers of doubles."""
    kernel = _kernel()
    rng = np.random.default_rng(5)
    parts = [array("d", rng.random(n) * 1e5) for n in (3, 0, 70, 1)]  # 70: past a stack's 64
    weights = [array("d", rng.random(len(p))) for p in parts]
    together = np.empty(74)
    kernel.decay_args(parts, 1e5, -2e-6, together)
    kernel.weigh(together, weights, 0.7, 1.3)
    alone = []
    for p, w in zip(parts, weights, strict=True):
        out = np.empty(len(p))
        kernel.decay_args(p, 1e5, -2e-6, out)
        kernel.weigh(out, w, 0.7, 1.3)
        alone.append(out)
    assert together.tobytes() == np.concatenate(alone).tobytes()
    many = [array("d", [float(i)]) for i in range(100)]  # more agents than the stack holds
    out = np.empty(100)
    kernel.decay_args(many, 100.0, 1.0, out)
    assert out.tolist() == [100.0 - i for i in range(100)]
    with pytest.raises(ValueError, match="decay_args"):
        kernel.decay_args(parts[:2], 1e5, -2e-6, together)  # 3 rows for 74
    with pytest.raises(ValueError, match="weigh"):
        kernel.weigh(np.empty(4), [array("f", [1.0] * 4)], 1.0, 1.0)  # floats, not doubles
    with pytest.raises(TypeError):
        kernel.decay_args([parts[0], "rows"], 1e5, -2e-6, together)


def test_ranker_uses_the_kernel_only_when_asked(monkeypatch):
    """`SOCIETAS_RANK_KERNEL=0` (or off, false, no) leaves numpy to rank; 1, on, unset: the
    built kernel; anything else is named in a warning and the kernel stays on."""
    for off in ("0", "off", "False"):
        monkeypatch.setenv("SOCIETAS_RANK_KERNEL", off)
        assert rank_kernel.load_kernel() is None
    for on in ("1", "on", ""):
        monkeypatch.setenv("SOCIETAS_RANK_KERNEL", on)
        assert rank_kernel.load_kernel() is _kernel()
    monkeypatch.setenv("SOCIETAS_RANK_KERNEL", "numpy")  # neither: named, and left on
    with pytest.warns(UserWarning, match=r"SOCIETAS_RANK_KERNEL must be 0 .* got 'numpy'"):
        assert rank_kernel.load_kernel() is _kernel()
    assert ScoredPoint(1, 0.5).score == 0.5  # what the ranker builds from the kernel's rows
