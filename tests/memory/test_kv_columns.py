"""KVColumn: a mapping over a group's shared agent slots, equal to a dict under any writes."""

from __future__ import annotations

import random

import pytest

from societas.memory.store.kv_columns import AgentSlots, KVColumn


def test_columns_behave_like_dicts_under_random_writes():
    rng = random.Random(3)
    slots = AgentSlots()
    columns = {k: KVColumn(slots) for k in "abc"}
    plain: dict[str, dict[int, object]] = {k: {} for k in "abc"}
    for _ in range(3_000):
        key, agent = rng.choice("abc"), rng.randrange(200)
        action = rng.random()
        if action < 0.7:
            value = rng.choice([None, 0.0, "x", [1], {"k": 2}, agent])
            columns[key][agent] = plain[key][agent] = value
        elif agent in plain[key]:
            del columns[key][agent], plain[key][agent]
        else:
            with pytest.raises(KeyError):
                del columns[key][agent]
    for key in "abc":
        column, expected = columns[key], plain[key]
        assert len(column) == len(expected)
        assert dict(column.items()) == expected
        assert sorted(column) == sorted(expected)
        for agent in range(200):
            assert (agent in column) == (agent in expected)
            assert column.get(agent, "none") == expected.get(agent, "none")
    assert len(slots.slot_of) <= 200  # one slot an agent, shared by the three columns


def test_a_stored_none_is_a_value_and_a_missing_agent_a_key_error():
    column = KVColumn(AgentSlots())
    column[5] = None
    assert 5 in column and column[5] is None and column.get(5, "d") is None
    with pytest.raises(KeyError):
        column[6]
    assert column.get(6) is None and 6 not in column
