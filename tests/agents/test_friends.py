"""FriendTable: the friend lists in arrays answer exactly as the dict of tuples did."""

from __future__ import annotations

import pickle

import pytest

from societas.agents.friends import FriendTable


def test_lookups_equal_the_dict_of_tuples_and_survive_pickling():
    lists = {0: [(1, 0.5), (3, 0.312)], 1: [(0, 0.5)], 2: [], 3: [(0, 0.312)]}
    table = FriendTable(lists, 4)
    assert dict(table.items()) == {i: tuple(ties) for i, ties in lists.items()}
    assert table[0] == ((1, 0.5), (3, 0.312)) and table.get(2) == () and len(table) == 4
    assert [table.degree(i) for i in range(4)] == [2, 1, 0, 1]
    assert dict(pickle.loads(pickle.dumps(table)).items()) == dict(table.items())
    assert table.get(7) is None and table.get(-1) is None
    with pytest.raises(KeyError):
        table[4]
    with pytest.raises(TypeError, match="read-only"):
        table[0] = ()
