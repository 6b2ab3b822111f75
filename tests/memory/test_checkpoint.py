"""Checkpoint/restore of a group's memory: every search answers the same afterwards."""

from __future__ import annotations

import json

import pytest

from societas.memory import GroupMemory

HOUR = 3600.0
SIGHTS = ["storm", "parade", "market", "ferry"]


async def populated(group):
    await group.add_agents({a: {"name": f"agent {a}"} for a in range(3)})
    ids = []
    for day in range(4):
        for tick in range(4):
            group.clock.set(day, tick * 6 * HOUR)
            for a in range(3):
                ids.append(
                    await group.agent(a).stream.add(
                        "event" if tick % 2 else "social",
                        f"day {day} agent {a} saw the {SIGHTS[tick]}",
                        importance=(a + tick) / 10,
                        location=["home", "park"][tick % 2],
                    )
                )
            await group.end_tick()
    agent0_last_two = [ids[-6], ids[-3]]  # ids go a0, a1, a2 per tick
    await group.agent(0).stream.add_cognition_to_memory(agent0_last_two, "the town feels uneasy")
    await group.agent(1).status.update("thought", "the ferry was late again")
    await group.agent(2).status.update("emotion", {"fear": 9}, mode="merge")
    return ids


QUERIES = ["storm", "ferry late", "parade market", "the and"]


async def answers(group):
    out = []
    for a in range(3):
        for q in QUERIES:
            for tiers in (("hot", "warm"), ("hot", "warm", "cold"), ("hot",)):
                hits = await group.agent(a).stream.search(q, top_k=6, tiers=tiers)
                out.append([(h.id, round(h.score, 5), h.tier) for h in hits])
        out.append([(h.key, h.value) for h in await group.agent(a).status.search("ferry late")])
        out.append(await group.agent(a).status.export())
    return out


async def test_restore_answers_every_search_the_same(group_factory, backend, tmp_path):
    group = group_factory(
        backend, tiers={"hot_window_hours": 12, "warm_max_age_days": 2, "migrate_every_ticks": 1}
    )
    ids = await populated(group)
    counts = await group.tier_counts()
    assert counts["cold"] > 0 and counts["hot"] > 0
    manifest = await group.checkpoint(tmp_path / "ckpt" / "tick=16")
    before = await answers(group)
    assert manifest["cold_rows"] == counts["cold"]
    assert json.loads((tmp_path / "ckpt" / "tick=16" / "manifest.json").read_text()) == manifest

    restored = await GroupMemory.restore(
        tmp_path / "ckpt" / "tick=16", tmp_path / "restored", embedder=group.embedder
    )
    assert restored.clock == group.clock
    assert await restored.tier_counts() == counts
    assert await answers(restored) == before
    assert [r.model_dump() for r in await restored.get_by_ids(ids)] == [
        r.model_dump() for r in await group.get_by_ids(ids)
    ]
    new_id = await restored.agent(0).stream.add("event", "life goes on after the restore")
    assert new_id not in ids  # the id sequence continues, no reuse
    await restored.close()


async def test_checkpoint_refuses_to_overwrite_and_restore_needs_manifest(group_factory, tmp_path):
    group = group_factory("edge")
    await group.add_agents({1: {}})
    await group.checkpoint(tmp_path / "c1")
    with pytest.raises(FileExistsError, match="c1"):
        await group.checkpoint(tmp_path / "c1")
    (tmp_path / "half").mkdir()
    with pytest.raises(FileNotFoundError, match="no manifest.json"):
        await GroupMemory.restore(tmp_path / "half", tmp_path / "r")


async def test_crash_during_checkpoint_leaves_no_checkpoint(group_factory, tmp_path, monkeypatch):
    import societas.memory.store.checkpoint as ck

    group = group_factory("edge")
    await group.add_agents({1: {}})
    await group.agent(1).stream.add("event", "something worth keeping")
    real = ck.write_bytes_atomic

    def crash(path, data):
        if path.name == "manifest.json":
            raise OSError("power cut")
        real(path, data)

    monkeypatch.setattr(ck, "write_bytes_atomic", crash)
    with pytest.raises(OSError, match="power cut"):
        await group.checkpoint(tmp_path / "tick=1")
    assert not (tmp_path / "tick=1").exists()
    monkeypatch.undo()
    await group.checkpoint(tmp_path / "tick=1")  # a retry succeeds
    restored = await GroupMemory.restore(
        tmp_path / "tick=1", tmp_path / "r", embedder=group.embedder
    )
    assert [h.text for h in await restored.agent(1).stream.search("worth keeping")] == [
        "something worth keeping"
    ]
