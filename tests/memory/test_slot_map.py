"""SlotMap behaves as the dict keyed by (agent, key) it replaces; KVIndex packs its vectors."""

from __future__ import annotations

import math
import random
from array import array

import pytest

from societas.memory.embedding.base import SparseVector
from societas.memory.store.kv_columns import AgentSlots, IntColumn, KVColumn, SlotMap
from societas.memory.store.kv_index import KVIndex


@pytest.mark.parametrize("column", [KVColumn, IntColumn])
def test_slot_map_matches_a_dict_under_random_use(column: type[KVColumn]) -> None:
    rng = random.Random(3)
    slots: SlotMap[int] = SlotMap(AgentSlots(), column)
    mirror: dict[tuple[int, str], int] = {}
    keys = ["name", "thought", "emotion"]
    for step in range(2000):
        slot = (rng.randrange(50), rng.choice(keys))
        if mirror and rng.random() < 0.2:
            gone = rng.choice(sorted(mirror))
            del slots[gone], mirror[gone]
        else:
            slots[slot] = mirror[slot] = step
        probe = (rng.randrange(60), rng.choice([*keys, "other"]))
        assert (probe in slots) == (probe in mirror)
        assert slots.get(probe) == mirror.get(probe)
        assert len(slots) == len(mirror)
    assert dict(slots.items()) == mirror
    assert sorted(slots) == sorted(mirror)
    assert "name" not in slots and (1, "name", 2) not in slots
    slots.clear()
    assert len(slots) == 0 and list(slots) == [] and (1, "name") not in slots


def test_kv_index_reads_back_vectors_and_scores_as_before() -> None:
    index = KVIndex()
    index.put((1, "name"), "Ada", SparseVector.of([5, 9], [0.5, 1.25]))
    index.put((2, "name"), "Bo", SparseVector.of([9], [2.0]))
    index.put((1, "name"), "Ada L", SparseVector.of([7, 9], [0.75, 1.5]))  # replaced
    got = index.vector((1, "name"))
    assert list(got.indices) == [7, 9] and list(got.values) == [0.75, 1.5]
    assert index.df == {7: 1, 9: 2}
    hits = index.search(1, ["name"], SparseVector.of([7], [1.0]), top_k=3)
    assert [(k, t) for k, t, _ in hits] == [("name", "Ada L")]
    n, count = 2, 1  # IDF over the two KV points, one of which holds term 7
    idf = math.log(1.0 + (n - count + 0.5) / (count + 0.5))
    assert abs(hits[0][2] - idf * 0.75) < 1e-12


def test_packed_sparse_vector_round_trips_and_converts_other_typecodes() -> None:
    vector = SparseVector.of([3, 70000, 4_000_000_000], [0.5, 1.25, 2.0])
    back = SparseVector.unpacked(vector.packed())
    assert back == vector and back.indices.typecode == "I" and back.values.typecode == "f"
    wide = SparseVector(array("L", [3, 9]), array("d", [0.1, 0.2]))  # stored as 4 + 4 bytes
    got = SparseVector.unpacked(wide.packed())
    assert list(got.indices) == [3, 9] and list(got.values) == list(array("f", [0.1, 0.2]))


def test_maps_sharing_agent_slots_stay_independent() -> None:
    shared = AgentSlots()
    ids: SlotMap[int] = SlotMap(shared, IntColumn)
    texts: SlotMap[str] = SlotMap(shared)
    texts[(7, "name")] = "Ada"
    ids[(9, "name")] = 0  # zero is a value, not an absent slot
    ids[(7, "thought")] = 12
    assert shared.slot_of == {7: 0, 9: 1}
    assert ids.get((7, "name")) is None and ids[(9, "name")] == 0 and len(ids) == 2
    assert (9, "name") not in texts and texts[(7, "name")] == "Ada" and len(texts) == 1
    del ids[(9, "name")]
    assert (9, "name") not in ids and sorted(ids) == [(7, "thought")]
    with pytest.raises(KeyError):
        del ids[(9, "name")]
    with pytest.raises(ValueError, match="non-negative"):
        ids[(1, "name")] = -3
