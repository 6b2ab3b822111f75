"""TextColumn reads back every text a list would, through appends, compactions and any Unicode."""

from __future__ import annotations

import random

import numpy as np
import pytest

from societas.memory.store.text_column import TextColumn

SAMPLES = ["", "plain", "早上好，世界", "emoji 🌊 flood", "lone \ud800 surrogate", "x" * 5000]


def test_every_text_reads_back_as_written() -> None:
    column = TextColumn(SAMPLES)
    assert len(column) == len(SAMPLES)
    assert [column[i] for i in range(len(SAMPLES))] == SAMPLES
    assert list(column) == SAMPLES
    assert column[-1] == SAMPLES[-1]
    with pytest.raises(IndexError):
        column[len(SAMPLES)]


def test_matches_a_list_under_random_appends_and_compactions() -> None:
    """Compaction in place: the kept texts read back in order, appends after it too, and the
    column keeps its one buffer (no second copy of the texts is made)."""
    rng = random.Random(7)
    column, mirror = TextColumn(), []
    for _ in range(300):
        if mirror and rng.random() < 0.12:  # compaction: keep a random subset, in order
            keep = sorted(rng.sample(range(len(mirror)), rng.randint(0, len(mirror))))
            buffer = column._data
            column.keep_rows(np.array(keep, np.int64))
            mirror = [mirror[r] for r in keep]
            assert column._data is buffer or not keep
        else:
            batch = [rng.choice(SAMPLES) + str(rng.random()) for _ in range(rng.randint(1, 5))]
            column.extend(batch[:-1])
            column.append(batch[-1])
            mirror.extend(batch)
        assert len(column) == len(mirror)
    assert list(column) == mirror
    assert column.nbytes() == sum(
        len(t.encode("utf-8", "surrogatepass")) for t in mirror
    ) + 8 * len(mirror)


@pytest.mark.parametrize("pattern", ["random", "prefix", "suffix", "every-other", "all"])
def test_a_compaction_across_chunks_keeps_the_texts_and_its_buffers(pattern) -> None:
    """Thousands of rows, several chunks of offsets rewritten over themselves: kept prefixes
    (rows whose offsets a chunk reads after the last chunk wrote them), long runs, gaps."""
    from societas.memory.store.column_ops import KEEP_CHUNK

    rng = random.Random(pattern)
    mirror = [rng.choice(SAMPLES[:-1]) + str(i) for i in range(3 * KEEP_CHUNK + 123)]
    n = len(mirror)
    keep = {
        "random": sorted(rng.sample(range(n), n // 3)),
        "prefix": list(range(KEEP_CHUNK + 7)) + list(range(KEEP_CHUNK + 9, n, 2)),
        "suffix": list(range(n - KEEP_CHUNK - 3, n)),
        "every-other": list(range(0, n, 2)),
        "all": list(range(n)),
    }[pattern]
    column = TextColumn(mirror)
    data, ends = column._data, column._ends
    column.keep_rows(np.array(keep, np.int64))
    expected = [mirror[r] for r in keep]
    assert list(column) == expected and len(column) == len(expected)
    assert column._data is data and column._ends is ends  # cut in place: no second copy
    column.append("after")
    assert column[-1] == "after" and list(column)[:-1] == expected
