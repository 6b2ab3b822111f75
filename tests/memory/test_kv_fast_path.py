"""The inline paths of the usual status calls (a str replacing a stored str, a stored str
read back) leave a group exactly as the general path does: values, embedding point ids,
stale-embedding queue and its order, counters; and every other call still takes the general
path with its errors and copies."""

from __future__ import annotations

import random

import pytest

KEYS = ("gender", "thought", "occupation", "position", "age", "social_network")


def _state(group) -> dict:
    return {
        "values": {key: dict(group.kv_by_key[key].items()) for key in KEYS},
        "points": dict(group.kv_point.items()),
        "stale": list(group.writes.kv),
        "updates": group.counters["kv_updates"],
    }


def _value(rng: random.Random, key: str):
    if key == "age":
        return rng.randrange(18, 90)
    if key == "social_network":
        return [rng.randrange(100)]
    return rng.choice(["calm", "busy at the harbour", "worried about the storm", ""])


async def test_status_updates_leave_the_state_of_the_general_path(group_factory):
    fast, general = group_factory(sub="fast"), group_factory(sub="general")
    agents = {a: {"name": f"agent {a}", "occupation": "teacher"} for a in range(6)}
    for g in (fast, general):
        await g.add_agents(agents)
    rng = random.Random(7)
    for _ in range(400):
        agent, key = rng.randrange(6), rng.choice(KEYS)
        value = _value(rng, key)
        mode = "merge" if key == "social_network" and rng.random() < 0.5 else "replace"
        await fast.agent(agent).status.update(key, value, mode)
        checked = general.check_update(agent, key, value, mode)
        general.kv_apply(agent, key, checked.value, checked.mode)
        assert _state(fast) == _state(general)
        status = fast.agent(agent).status
        assert await status.get(key) == general.kv_get(agent, key)
    assert fast.counters["kv_updates"] == 400
    for g in (fast, general):
        await g.close()


async def test_status_reads_keep_their_defaults_copies_and_errors(group_factory):
    g = group_factory()
    await g.add_agents({1: {"name": "Ann"}, 2: {"name": "Bo"}})
    status = g.agent(1).status
    assert await status.get("gender") == ""  # nothing stored: the attribute's default
    g.set_kv_default("position", lambda agent: f"home of {agent}")
    assert await status.get("position") == "home of 1"  # derived until written
    await status.update("position", "market")
    assert await status.get("position") == "market"
    assert await g.agent(2).status.get("position") == "home of 2"
    await status.update("social_network", [3, 4])
    friends = await status.get("social_network")
    friends.append(5)  # a copy: the stored list is untouched
    assert await status.get("social_network") == [3, 4]
    assert await status.get("no_such_key", default="x") == "x"
    with pytest.raises(KeyError, match="unknown memory attribute 'no_such_key'"):
        await status.get("no_such_key")
    with pytest.raises(KeyError, match="unknown agent 9"):
        g.kv_get(9, "gender")
    with pytest.raises(KeyError, match="unknown agent 9"):
        g.kv_update_now(9, "gender", "x")
    with pytest.raises(TypeError, match="'age'"):
        await status.update("age", "old")  # a str into an int attribute: the checked path
    await g.close()
