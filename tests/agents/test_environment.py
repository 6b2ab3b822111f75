"""Encounters, the coordinator's routing, interventions and selectors, population."""

from __future__ import annotations

import pytest

from societas.agents.environment import SimTime, encounters
from societas.agents.population import population_for
from societas.agents.runtime.engine import GroupEngine
from societas.agents.runtime.protocol import GroupHandle, Message
from societas.agents.scenario import Selector, load_scenario
from societas.cluster.loop.coordinator import Coordinator
from societas.cluster.loop.local import partition

from .conftest import SMALL


def test_encounters_pair_agents_at_one_place_in_one_tick():
    pos = {1: "cafe-0", 2: "cafe-0", 3: "park-0", 4: "cafe-0", 5: "cafe-0", 6: "home-1"}
    got = encounters(pos, tick=3, seed=0)
    assert {e.place for e in got} == {"cafe-0"} and len(got) == 2
    assert sorted(x for e in got for x in (e.a, e.b)) == [1, 2, 4, 5]
    assert got == encounters(dict(reversed(pos.items())), tick=3, seed=0)  # order-free
    assert encounters({1: "a", 2: "b"}, 0, 0) == []
    assert len(encounters({i: "w" for i in range(10)}, 0, 0, max_pairs_per_place=2)) == 2


def test_sim_time_and_partition():
    t = SimTime.of(37, 1800.0, 6)
    assert (t.day, t.hour) == (1, 0.5)
    assert partition(10, 3) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]


def test_population_is_seeded_and_selectors_work():
    cfg = load_scenario({**SMALL, "agents": {"count": 40}, "network": {"k": 4, "isolated": 5}})
    pop = population_for(cfg)
    again = population_for(cfg.model_copy(update={"groups": 3}))
    assert [p.name for p in pop.profiles] == [p.name for p in again.profiles]
    assert all(p.home in pop.town and p.shelter.startswith("shelter") for p in pop.profiles)
    iso = set(range(35, 40))
    assert all({f for f, _ in pop.friends[i]} <= iso for i in iso)
    assert all(not ({f for f, _ in pop.friends[i]} & iso) for i in range(35))
    assert len(pop.select(Selector(count=7), 0, 0)) == 7
    assert pop.select(Selector(ids=[3, 4]), 0, 0) == {3, 4}
    assert pop.select(Selector(count=7), 0, 0) == pop.select(Selector(count=7), 0, 0)
    teachers = pop.select(Selector(occupation=["teacher"]), 0, 0)
    assert all(pop.profiles[i].occupation == "teacher" for i in teachers)
    half = pop.select(Selector(fraction=0.5), 1, 0)
    assert 5 < len(half) < 35


async def test_coordinator_routes_messages_and_encounters_across_groups(tmp_path, bm25_embedder):
    cfg = load_scenario(
        {
            **SMALL,
            "ticks": 4,
            "interventions": [
                {"tick": 1, "kind": "fact", "fact": "f1", "select": {"ids": [0]}},
                {"tick": 2, "kind": "set", "values": {"currency": 123.0}, "select": {"ids": [11]}},
            ],
        }
    )
    groups = [
        GroupEngine(cfg, g, ids, tmp_path, embedder=bm25_embedder)
        for g, ids in enumerate(partition(12, 2))
    ]
    assert all(isinstance(g, GroupHandle) for g in groups)
    seen = []
    coord = Coordinator(groups, seed=0, on_tick=seen.append)
    for g in groups:
        await g.setup()
    summary = await coord.run(4)
    assert summary.agent_steps == 48 and len(seen) == 4
    assert coord.owner[0] == 0 and coord.owner[11] == 1
    msg = Message(tick=0, sender=0, recipient=11, kind="chat")
    assert coord.route([msg]) == {0: [], 1: [msg]}
    assert groups[0].agents[0].state["knowledge"] == ["f1"]
    assert groups[1].agents[11].state["currency"] == 123.0
    assert await groups[1].memory.agent(11).status.get("currency") == 123.0  # written back
    met = coord.encounter_messages({0: "p", 11: "p"}, 5)
    assert {(m.sender, m.recipient) for m in met} == {(0, 11), (11, 0)}
    for g in groups:
        await g.close()


def test_duplicate_group_ids_are_rejected(tmp_path):
    cfg = load_scenario(SMALL)
    with pytest.raises(ValueError, match="unique"):
        Coordinator([GroupEngine(cfg, 0, [0], tmp_path), GroupEngine(cfg, 0, [1], tmp_path)])


def test_the_memoised_population_is_read_only():
    """Every group (and test) of a process gets the same population object: no one can change
    a profile, an attitude or a friend list under the others' feet; copies can be changed."""
    import dataclasses

    from societas.agents.population import FrozenProfileError

    cfg = load_scenario({**SMALL, "topics": [{"name": "tax"}]})
    pop = population_for(cfg)
    assert population_for(cfg) is pop
    profile = pop.profiles[3]
    age, tax = profile.age, profile.attitudes["tax"]
    with pytest.raises(FrozenProfileError, match="'age' is read-only"):
        profile.age = age + 1
    with pytest.raises(TypeError, match="read-only"):
        profile.attitudes["tax"] = tax + 1
    with pytest.raises(TypeError, match="read-only"):
        pop.friends[0] = ()
    with pytest.raises(AttributeError):
        pop.friends[0].append((1, 0.5))  # a tuple
    with pytest.raises(dataclasses.FrozenInstanceError):
        pop.profiles = ()  # type: ignore[misc]
    kv = profile.kv()
    kv["attitude"]["tax"] = tax + 1  # kv() hands out fresh copies
    mine = dataclasses.replace(profile, age=age + 1)
    mine.age += 1  # a copy is the caller's own
    assert (profile.age, profile.attitudes["tax"], mine.age) == (age, tax, age + 2)


async def test_agent_and_reflector_state_round_trip_through_json(engine):
    """get_state/set_state (what checkpoints store): JSON, and back to the same behaviour."""
    import json

    agent = engine.agents[3]
    agent.state["_econ_day"], agent.state["_invite"] = 2, (1, "cafe-0", "x")
    saved = json.loads(json.dumps(agent.get_state()))
    assert "_econ_day" in saved["state"] and "_invite" not in saved["state"]  # per-tick scratch
    draws = [agent.rng.random() for _ in range(3)]
    currency = agent.state["currency"]
    agent.state["currency"] = -1.0
    agent.dirty.clear()
    agent.set_state(saved)
    assert [agent.rng.random() for _ in range(3)] == draws
    assert agent.state["currency"] == currency and "currency" in agent.dirty
    engine.reflector.note(3, [0.5, 0.25])
    kept = json.loads(json.dumps(engine.reflector.get_state()))
    engine.reflector.note(3, 1.0)
    engine.reflector.set_state(kept)
    assert engine.reflector.accumulated == {3: 0.75}
