"""KV (status) memory: typed get/update/search/export, re-embedding in place, bad input."""

from __future__ import annotations

import math

import pytest


async def test_seed_usage_update_emotion_and_get(group):
    status = group.agent(1).status
    await status.update("emotion", {"fear": 9, "joy": 1})
    assert await status.get("emotion") == {"fear": 9, "joy": 1}
    await status.update("emotion", {"anger": 4}, mode="merge")
    assert await status.get("emotion") == {"fear": 9, "joy": 1, "anger": 4}


async def test_get_defaults_and_copies(group):
    status = group.agent(2).status
    assert await status.get("age") == 30  # config default
    assert await status.get("nonexistent", default="fallback") == "fallback"
    network = await status.get("social_network")
    network.append(99)  # mutating a returned value must not change the memory
    assert await status.get("social_network") == []


async def test_merge_list_appends_and_extends(group):
    status = group.agent(1).status
    await status.update("social_network", 7, mode="merge")
    await status.update("social_network", [8, 9], mode="merge")
    assert await status.get("social_network") == [7, 8, 9]


async def test_int_widens_to_float(group):
    await group.agent(1).status.update("income", 3000)
    value = await group.agent(1).status.get("income")
    assert value == 3000.0 and isinstance(value, float)


async def test_embedded_attribute_is_replaced_not_duplicated(group):
    status = group.agent(1).status
    before = await group.kv_store.count(agent_id=1)
    assert (await status.search("teacher"))[0].key == "occupation"
    await status.update("occupation", "firefighter")
    assert await group.kv_store.count(agent_id=1) == before
    hits = await status.search("firefighter")
    assert hits and hits[0].key == "occupation" and hits[0].value == "firefighter"
    assert await status.search("teacher") == []


async def test_kv_search_filter_by_key_and_agent_scope(group):
    status = group.agent(1).status
    await status.update("thought", "the teacher meeting went well")
    hits = await status.search("teacher", filter={"key": "thought"})
    assert [h.key for h in hits] == ["thought"]
    assert await group.agent(2).status.search("teacher") == []


async def test_export(group):
    exported = await group.agent(1).status.export(["name", "age"])
    assert exported == {"name": "Alice Smith", "age": 30}
    assert set(await group.agent(1).status.export()) == set(group.memory_config.attributes)


async def test_unknown_key_is_keyerror_naming_it(group):
    with pytest.raises(KeyError, match="'mood'"):
        await group.agent(1).status.get("mood")
    with pytest.raises(KeyError, match="'mood'"):
        await group.agent(1).status.update("mood", "happy")


@pytest.mark.parametrize(
    ("key", "value", "expected", "got"),
    [
        ("age", "old", "int", "str"),
        ("emotion", [1], "dict", "list"),
        ("name", 5, "str", "int"),
        ("income", True, "float", "bool"),
    ],
)
async def test_wrong_type_is_typeerror_naming_key_expected_got(group, key, value, expected, got):
    with pytest.raises(TypeError) as info:
        await group.agent(1).status.update(key, value)
    message = str(info.value)
    assert repr(key) in message and f"expected {expected}" in message and f"got {got}" in message


async def test_bad_mode_and_merge_on_scalar(group):
    with pytest.raises(ValueError, match="'append'"):
        await group.agent(1).status.update("emotion", {}, mode="append")
    with pytest.raises(ValueError, match="'age' is int"):
        await group.agent(1).status.update("age", 3, mode="merge")
    with pytest.raises(TypeError, match="expected dict"):
        await group.agent(1).status.update("emotion", 3, mode="merge")


async def test_rejected_update_writes_nothing(group):
    status = group.agent(1).status
    upserts = group.counters["vector_upserts"]
    with pytest.raises(TypeError):
        await status.update("occupation", 123)
    assert await status.get("occupation") == "teacher"
    assert group.counters["vector_upserts"] == upserts


async def test_unknown_agent_and_bad_search(group):
    with pytest.raises(KeyError, match="unknown agent 99"):
        group.agent(99)
    with pytest.raises(ValueError, match="top_k"):
        await group.agent(1).status.search("x", top_k=0)
    with pytest.raises(ValueError, match="non-empty"):
        await group.agent(1).status.search("  ")
    with pytest.raises(ValueError, match="only 'key'"):
        await group.agent(1).status.search("x", filter={"value": 1})
    with pytest.raises(KeyError, match="'nope'"):
        await group.agent(1).status.search("x", filter={"key": "nope"})


async def test_add_agents_validates_everything_first(group):
    with pytest.raises(TypeError, match="'age'"):
        await group.add_agents({5: {"name": "Eve"}, 6: {"age": "x"}})
    with pytest.raises(KeyError):
        group.agent(5)  # the valid profile of the rejected call was not added either
    with pytest.raises(ValueError, match="already"):
        await group.add_agents({1: {}})
    with pytest.raises(ValueError, match="non-negative int"):
        await group.add_agents({-1: {}})
    with pytest.raises(KeyError, match="'height'"):
        await group.add_agents({7: {"height": 180}})


async def test_nan_float_is_accepted_as_a_float(group):
    # KV floats are state, not scores: NaN is a legal float value and kept as is.
    await group.agent(1).status.update("income", math.nan)
    assert math.isnan(await group.agent(1).status.get("income"))


async def test_peek_reads_the_live_value_synchronously(group):
    status = group.agent(1).status
    assert status.peek("name") == "Alice Smith"
    await status.update("thought", "the river is rising")
    assert status.peek("thought") == "the river is rising"
    assert group.kv_column("thought")[1] == "the river is rising"
    with pytest.raises(KeyError, match="nosuchkey"):
        status.peek("nosuchkey")
    assert status.peek("nosuchkey", None) is None


async def test_derived_default_is_read_until_a_value_is_written(group):
    """A per-agent default (the population's friend lists in a run) is computed on read, a
    fresh object each time; a written value takes over; it never enters the stored columns
    (a checkpoint's KV rows) and an embedded attribute cannot have one."""
    group.set_kv_default("social_network", lambda i: [[i + 100, 0.5]])
    status = group.agent(2).status
    network = await status.get("social_network")
    assert network == [[102, 0.5]]
    network.append([7, 1.0])
    assert await status.get("social_network") == [[102, 0.5]]
    assert group.kv_peek(1, "social_network") == [[101, 0.5]]
    await status.update("social_network", [[3, 0.25]], mode="merge")
    assert await status.get("social_network") == [[102, 0.5], [3, 0.25]]
    assert group.kv_peek(1, "social_network") == [[101, 0.5]]
    rows = group.kv_rows()
    keys = zip(rows["agent_id"], rows["key"], strict=True)
    stored = [a for a, k in keys if k == "social_network"]
    assert stored == [2]
    with pytest.raises(ValueError, match="'thought' is embedded"):
        group.set_kv_default("thought", lambda i: "derived")


async def test_update_reuses_what_the_memory_already_owns(group):
    """A write copies the caller's new containers but reuses the stored value's own (an
    hourly plan update does not copy the day's items again); the caller's objects stay
    the caller's: mutating them later changes nothing stored."""
    status = group.agent(1).status
    await status.update("plan", {"items": [{"hour": 7, "activity": "walk"}], "hourly": {}})
    stored = group.kv_peek(1, "plan")
    steps = [{"minute": 0, "action": "stretch"}]
    await status.update("plan", {**stored, "hourly": {"7": steps}})
    again = group.kv_peek(1, "plan")
    assert again["items"] is stored["items"]  # owned already: reused
    assert again["hourly"]["7"] == steps and again["hourly"]["7"] is not steps
    steps.append({"minute": 30, "action": "run"})
    assert len(group.kv_peek(1, "plan")["hourly"]["7"]) == 1
    fresh = {"items": [{"hour": 8, "activity": "cook"}]}
    await status.update("plan", fresh)
    assert group.kv_peek(1, "plan")["items"] is not fresh["items"]


def test_private_copy_keeps_owned_parts_and_copies_the_rest():
    from societas.memory.model.config import private_copy

    owned = {"day": 1, "items": [{"at": 8, "what": "work"}], "hourly": {"8": [{"m": 0}]}}
    update = {**owned, "hourly": {"9": [{"m": 5}]}, "extra": ({"a": [1]},)}
    copied = private_copy(update, owned)
    assert copied == update and copied is not update
    assert copied["items"] is owned["items"]  # still held by the update: kept, not copied
    assert copied["hourly"] is not update["hourly"]
    assert copied["hourly"]["9"][0] is not update["hourly"]["9"][0]
    assert copied["extra"][0] is not update["extra"][0]  # other types: a deep copy
    steps = [owned["items"][0], {"at": 9}]
    listed = private_copy(steps, owned["items"])
    assert listed[0] is owned["items"][0] and listed[1] is not steps[1]
    assert private_copy(owned, owned) is owned
