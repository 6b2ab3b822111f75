"""Typed associations in spreading activation, their persistence, and the access log."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from societas.memory import GroupMemory
from societas.memory.tiers.access_log import SCHEMA

DAY = 86_400.0


async def _linked(group):
    s = group.agent(1).stream
    anchor = await s.add("event", "the river flooded the lower town")
    others = {
        kind: await s.add("event", f"unrelated note number {i} about bread")
        for i, kind in enumerate(("similar", "temporal", "contradictory"))
    }
    await s.associate(anchor, others["similar"], "similar", 1.0)
    await s.associate(anchor, others["temporal"], "temporal", 0.5)
    await s.associate(others["contradictory"], anchor, "contradictory")
    return anchor, others


RELEVANCE_ONLY = {"candidates": "relevant", "recency_weight": 0, "importance_weight": 0}


async def test_spreading_activation_weights_each_association_type(group_factory, backend):
    group = group_factory(backend, retrieval=RELEVANCE_ONLY)
    await group.add_agents({1: {}})
    anchor, others = await _linked(group)
    s = group.agent(1).stream
    plain = await s.search("river flooded", top_k=1)
    assert [h.id for h in plain] == [anchor]
    hits = {h.id: h.score for h in await s.search("river flooded", top_k=4, expand=True)}
    top = hits[anchor]
    assert hits[others["similar"]] == pytest.approx(top * 0.5 * 0.8)
    assert hits[others["temporal"]] == pytest.approx(top * 0.5 * 0.6 * 0.5)
    assert hits[others["contradictory"]] == pytest.approx(top * 0.5 * 0.3)
    await group.close()


async def test_type_weights_are_configuration(group_factory):
    weights = {"causal": 1.0, "similar": 0.1, "temporal": 1.0, "contradictory": 0.0}
    group = group_factory(
        retrieval=RELEVANCE_ONLY, policies={"associations": {"type_weights": weights}}
    )
    await group.add_agents({1: {}})
    anchor, others = await _linked(group)
    hits = await group.agent(1).stream.search("river flooded", top_k=4, expand=True)
    order = [h.id for h in hits]
    assert order[:3] == [anchor, others["temporal"], others["similar"]]
    assert others["contradictory"] not in order  # weight 0: no activation
    with pytest.raises(ValidationError, match="type_weights"):
        group_factory(sub="bad", policies={"associations": {"type_weights": {"similar": 2.0}}})
    await group.close()


async def test_bad_associations_are_refused(group_factory):
    group = group_factory()
    await group.add_agents({1: {}, 2: {}})
    a = await group.agent(1).stream.add("event", "one")
    b = await group.agent(2).stream.add("event", "two")
    c = await group.agent(1).stream.add("event", "three")
    with pytest.raises(ValidationError, match="type"):
        await group.agent(1).stream.associate(a, c, "friendly")
    with pytest.raises(ValidationError, match="strength"):
        await group.agent(1).stream.associate(a, c, "similar", 1.5)
    with pytest.raises(KeyError, match=str(b)):
        await group.agent(1).stream.associate(a, b, "similar")
    with pytest.raises(ValueError, match="two memories"):
        await group.agent(1).stream.associate(a, a, "similar")
    await group.close()


async def test_associations_survive_a_checkpoint_and_leave_with_expiry(group_factory, tmp_path):
    group = group_factory(tiers={"migrate_every_ticks": 1})
    await group.add_agents({1: {}})
    anchor, _ = await _linked(group)
    s = group.agent(1).stream
    short = await s.add("event", "a passing remark", expires_at=group.clock.abs_seconds + 60)
    await s.associate(anchor, short, "temporal")
    await group.checkpoint(tmp_path / "ck")
    restored = await GroupMemory.restore(tmp_path / "ck", tmp_path / "r", embedder=group.embedder)
    assert restored.associations.neighbours(anchor) == group.associations.neighbours(anchor)
    assert len(restored.associations) == 4
    restored.clock.advance(120)
    await restored.end_tick()
    assert short not in {n for n, _, _ in restored.associations.neighbours(anchor)}
    await group.close()
    await restored.close()


async def test_access_log_records_reads_writes_and_moves(group_factory, tmp_path):
    group = group_factory(
        access_log=True,
        tiers={"warm_max_age_days": 1, "migrate_every_ticks": 1, "hot_window_hours": 1},
    )
    await group.add_agents({1: {}, 2: {}})
    first = await group.agent(1).stream.add("event", "the bakery opened early")
    await group.agent(2).stream.add("chat", "talked about the weather")
    await group.agent(1).stream.search("bakery", top_k=1)
    group.clock.set(2, 0.0)
    await group.end_tick()  # both move to cold; the log is flushed on this schedule
    log = group.access_log
    rows = pa.concat_tables(pq.read_table(f, schema=SCHEMA) for f in log.files()).to_pylist()
    ops = [(r["op"], r["agent_id"]) for r in rows]
    assert ops[:3] == [("write", 1), ("write", 2), ("read", 1)]
    assert rows[2]["memory_id"] == first and rows[2]["context"] == "bakery"
    assert sorted(op for op, _ in ops[3:]) == ["move_cold", "move_cold"]
    assert rows[3]["time"] == 2 * DAY
    assert all(f.suffix == ".parquet" for f in group.access_log.files())
    await group.close()


def test_a_pair_keeps_its_strongest_association_whichever_way_it_is_given():
    from societas.memory.model.associations import Association, AssociationIndex

    index = AssociationIndex()
    index.add_many(
        [
            Association(source=1, target=2, type="temporal", strength=0.4),
            Association(source=3, target=1, type="similar", strength=0.9),
            Association(source=2, target=1, type="causal", strength=0.8),  # stronger: replaces
            Association(source=1, target=2, type="similar", strength=0.5),  # weaker: ignored
        ]
    )
    assert len(index) == 2
    assert [(a.source, a.target, a.type) for a in index.directed] == [
        (3, 1, "similar"),
        (2, 1, "causal"),
    ]
    assert index.neighbours(1) == [(2, "causal", 0.8), (3, "similar", 0.9)]
    table = index.to_table()
    assert table.column("source").to_pylist() == [2, 3] and table.column("target").to_pylist() == [
        1,
        1,
    ]
    many = [Association(source=i, target=i + 1, type="temporal") for i in range(10, 20_010)]
    index.add_many(many)  # one pass: a pair is looked up, not searched for among the others
    index.drop([2, 10])
    assert len(index) == 1 + 19_999 and index.neighbours(1) == [(3, "similar", 0.9)]
    assert index.neighbours(11) == [(12, "temporal", 1.0)]
