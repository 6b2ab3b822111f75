"""The compiled column appends (memory/_columns.c) leave each hot-tier column exactly as the
Python loops do: few-valued columns (new values, None, codes widened past 65,535 values, a
large vocabulary), texts (non-ASCII, lone surrogates, empty; copied between columns in
Python) and the agents' row queues; bad rows and values fail, naming the problem."""

from __future__ import annotations

import math
import random
from array import array

import pytest

from societas.memory import rank_kernel
from societas.memory.code_column import CodeColumn
from societas.memory.hot_store import HotStore
from societas.memory.id_map import RowQueue
from societas.memory.text_column import TextColumn

from .conftest import allocated_items, quarter_rule

pytestmark = pytest.mark.skipif(
    rank_kernel.COLUMNS is None, reason="kernel not built, or off (SOCIETAS_RANK_KERNEL=0)"
)
KERNEL = rank_kernel.COLUMNS


def _both(monkeypatch, build, kernel: str = "COLUMNS"):
    """`build()` with the kernel, then with the Python loops."""
    built = getattr(rank_kernel, kernel)
    assert built is not None, f"the install did not build {kernel}"
    compiled = build()
    monkeypatch.setattr(rank_kernel, kernel, None)
    python = build()
    monkeypatch.setattr(rank_kernel, kernel, built)
    return compiled, python


def _code_state(column: CodeColumn) -> tuple:
    return column.codes.typecode, column.codes.tobytes(), column.values, column._code_of


def _text_state(column: TextColumn) -> tuple:
    return bytes(column._data), column._ends.tobytes()


def _values(rng: random.Random, n: int, vocabulary: int) -> list[str | None]:
    return [None if rng.random() < 0.1 else f"place {rng.randrange(vocabulary)}" for _ in range(n)]


@pytest.mark.parametrize("vocabulary", [5, 3_000, 10**6])  # 10**6: ~100,000 values, 4-byte codes
def test_codes_extend_as_the_loop(monkeypatch, vocabulary):
    def build() -> CodeColumn:
        rng = random.Random(vocabulary)
        column = CodeColumn()
        for n in (0, 1, 2, 300, 50_000, 50_000, 7):
            column.extend(iter(_values(rng, n, vocabulary)))  # any iterable, as the loop
        return column

    compiled, python = _both(monkeypatch, build)
    assert _code_state(compiled) == _code_state(python)
    assert compiled.codes.typecode == ("I" if vocabulary > 10_000 else "H")
    assert list(compiled)[-7:] == list(python)[-7:]


@pytest.mark.parametrize(("vocabulary", "rows"), [(6, 40), (6, 600), (90_000, 50)])
def test_codes_extend_rows_as_the_loop(monkeypatch, vocabulary, rows):
    """Rows of another column mapped into this one's vocabulary: a small batch, a tick's
    600, and a source with 4-byte codes and a vocabulary far larger than the batch (no table
    sized by it). The same values row for row; the Python path numbers a batch of 128 rows
    or more in code order (numpy), fewer and the kernel in the order met."""
    rng = random.Random(rows)
    src = CodeColumn(_values(rng, 2 * vocabulary, vocabulary))
    picks = [[rng.randrange(len(src)) for _ in range(rows)] for _ in range(4)]

    def build() -> CodeColumn:
        column = CodeColumn(["seen before", None])
        for batch in picks:
            column.extend_rows(src, batch)
        column.extend_rows(column, list(range(len(column)))[::3])  # its own rows
        return column

    compiled, python = _both(monkeypatch, build)
    assert list(compiled) == list(python)
    assert set(compiled.values) == set(python.values)
    assert all(compiled._code_of[v] == c for c, v in enumerate(compiled.values))
    if rows < 128:
        assert _code_state(compiled) == _code_state(python)
    assert [compiled[r] for r in range(2, 2 + rows)] == [src[r] for r in picks[0]]


def test_texts_extend_as_the_loop(monkeypatch):
    """Appended texts (the copy of rows between columns stays a Python loop: see
    TextColumn.extend_rows), read back as written."""
    rng = random.Random(3)
    samples = ["storm", "", "café au lait", "淡水の港", "emoji 🌊", "lone \udc80 surrogate"]
    batches = [
        [rng.choice(samples) + str(i) * rng.randrange(3) for i in range(n)] for n in (1, 2, 50)
    ]

    def build() -> TextColumn:
        column = TextColumn()
        for batch in batches:
            column.extend(batch)
        other = TextColumn(samples)
        column.extend_rows(other, [5, 0, 3, 3, 1])
        column.extend_rows(column, [0, len(column) - 1, 2])  # its own rows, buffer growing
        return column

    compiled, python = _both(monkeypatch, build)
    assert _text_state(compiled) == _text_state(python)
    texts = list(compiled)
    copied = ["lone \udc80 surrogate", "storm", "淡水の港", "淡水の港", ""]
    assert texts[-8:] == [*copied, texts[0], "", texts[2]]  # then rows 0, last, 2 again


def test_queued_rows_as_the_loop(monkeypatch):
    rng = random.Random(4)
    batches = [[rng.randrange(30) for _ in range(n)] for n in (2, 600, 1, 40)]

    def build() -> HotStore:
        hot = HotStore()
        start = 0
        for agents in batches:
            ids = list(range(1_000 + start, 1_000 + start + len(agents)))
            hot._index_rows(start, ids, agents)
            start += len(agents)
        return hot

    compiled, python = _both(monkeypatch, build, "ROWS")
    assert compiled.rows_of_agent.keys() == python.rows_of_agent.keys()
    for agent, rows in python.rows_of_agent.items():
        assert type(compiled.rows_of_agent[agent]) is RowQueue
        assert compiled.rows_of_agent[agent] == rows
    assert compiled.row_of == python.row_of


def test_hot_appends_as_the_loop(monkeypatch):
    """A batch's numeric columns stored in one call (`extend_each`: the clock's day, t and a
    shared time standing for each row) leave the hot tier as the Python loop does: one time
    or one a row, expiries or none."""

    def build() -> HotStore:
        hot = HotStore()
        for at, n in enumerate((2, 1, 40)):
            ids = list(range(100 * at, 100 * at + n))
            agents, imps = [i % 7 for i in ids], [i / 100 for i in ids]
            times = 3.5 if at % 2 else [float(i) for i in ids]
            expires = [None if i % 3 else i + 0.5 for i in ids] if at else None
            hot.append_many(
                ids, agents, ["t"] * n, ["x"] * n, [None] * n, imps, at, 60.0 * at, times,
                expires=expires,
            )  # fmt: skip
        return hot

    compiled, python = _both(monkeypatch, build, "POSTINGS")
    for name in ("ids", "agent_ids", "days", "ts", "times", "importances", "layer_since"):
        assert getattr(compiled, name) == getattr(python, name), name
    for name in ("access_counts", "last_accessed", "expires"):
        assert getattr(compiled, name).tobytes() == getattr(python, name).tobytes(), name
    assert compiled.expires[4] == 201.5 and compiled.expires[3] == math.inf  # given, or never
    assert compiled.times[2] == 3.5 and compiled.times[4] == 201.0 and len(compiled.ids) == 43


@pytest.mark.parametrize("cap", [0, 3, 10**6])
def test_rows_leaving_as_the_loop(monkeypatch, cap):
    """Each agent's oldest rows older than the cut or past its cap, in the queues' order: some
    agents with none leaving, one with no rows, a NaN time (leaves, as in the loop)."""
    rng = random.Random(cap)
    hot = HotStore()
    start = 0
    for agents in ([rng.randrange(12) for _ in range(n)] for n in (40, 7, 120)):
        ids = list(range(5_000 + start, 5_000 + start + len(agents)))
        hot._index_rows(start, ids, agents)
        hot.ids.extend(ids)
        hot.times.extend(rng.random() * 100 for _ in agents)
        start += len(agents)
    hot.times[5] = float("nan")
    hot.rows_of_agent[99] = RowQueue()
    for cut in (-1.0, 30.0, 70.0, 1e9):
        compiled, python = _both(monkeypatch, lambda cut=cut: hot.leaving(cut, cap), "ROWS")
        assert compiled == python and list(compiled) == list(python)

        # Evicting them: the same rows taken off, queues left and each agent's latest time.
        def evicted(cut=cut):
            copy = HotStore()
            copy.ids, copy.times = array("q", hot.ids), array("d", hot.times)
            copy._index_rows(0, list(hot.ids), list(hot.agent_ids))
            copy.rows_of_agent = {a: RowQueue(r) for a, r in hot.rows_of_agent.items()}
            copy.newest_evicted = {0: 50.0, 1: float("nan")}
            leaving = copy.leaving(cut, cap)
            gone = copy.evict_leaving(leaving)
            return gone, copy.rows_of_agent, copy.newest_evicted

        compiled, python = _both(monkeypatch, evicted, "ROWS")
        assert repr(compiled) == repr(python)
    with pytest.raises(IndexError, match="row 9999 outside"):
        rank_kernel.ROWS.leaving({1: RowQueue([9999])}, hot.times, hot.ids, 1.0, 0)
    with pytest.raises(IndexError, match="evict_front: row 9999 outside"):
        rank_kernel.ROWS.evict_front({1: RowQueue([9999])}, {1: [5]}, hot.times, {})
    with pytest.raises(ValueError, match="8-byte columns"):
        rank_kernel.ROWS.leaving({}, hot.times, array("i", [1]), 1.0, 0)


def test_bad_rows_and_values_fail_naming_the_problem():
    src = CodeColumn(["a", "b"])
    with pytest.raises(IndexError, match="row 2 out of range"):
        KERNEL.codes_extend_rows(CodeColumn(), src, [0, 2])
    broken = CodeColumn(["a"])
    broken.codes = array("H", [0, 9])  # a code with no value
    with pytest.raises(ValueError, match="code 9 of row 1 has no value"):
        KERNEL.codes_extend_rows(CodeColumn(), broken, [0, 1])
    with pytest.raises(TypeError, match="texts must be str, got int"):
        KERNEL.texts_extend(TextColumn(), ["ok", 5])
    with pytest.raises(TypeError):
        CodeColumn().extend([["unhashable"]])


def test_appends_grow_by_a_quarter_and_respect_exported_buffers():
    """Codes and text ends go straight into the arrays' storage, grown by a quarter again
    (memory/_arrays.h; `frombytes` grows by a sixteenth): the allocations that rule gives
    after each call; an array exporting its buffer refuses the append with BufferError, as
    `frombytes` does, unchanged."""
    codes, texts = CodeColumn(), TextColumn()
    batches = [n % 5 for n in range(1, 200)], [n % 3 for n in range(1, 200)]
    code_sizes, end_sizes = [], []
    for n in range(1, 200):
        KERNEL.codes_extend(codes, [f"v{n % 7}"] * (n % 5))
        KERNEL.texts_extend(texts, [f"text {n}"] * (n % 3))
        code_sizes.append(allocated_items(codes.codes))
        end_sizes.append(allocated_items(texts._ends))
    assert code_sizes == quarter_rule(batches[0])
    assert end_sizes == quarter_rule(batches[1])
    column = CodeColumn()
    column.extend(["a", "b"])
    view = memoryview(column.codes)
    with pytest.raises(BufferError):
        KERNEL.codes_extend(column, ["a"])
    view.release()
    assert list(column) == ["a", "b"]
