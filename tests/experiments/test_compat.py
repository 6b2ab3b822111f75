"""The AgentSociety memory API (seed 000) on the group memory: status with new keys, typed
stream adds, search results as "- [topic]: text [day, time, location]" lines, newest first,
or "Nothing"."""

from __future__ import annotations

import pytest

from societas.memory import GroupMemory, GroupMemoryConfig, MemoryConfig
from societas.memory.compat import NOTHING, TOPICS, Memory


def texts(found: str) -> list[str]:
    """The memory texts of a search result, in its order."""
    return [line.split("]: ", 1)[1].rsplit(" [day: ", 1)[0] for line in found.splitlines()]


@pytest.fixture
async def group(tmp_path, bm25_embedder):
    schema = MemoryConfig.from_list([("name", "str", ""), ("hobbies", "list", [])])
    mem = GroupMemory(GroupMemoryConfig(), schema, root=tmp_path, embedder=bm25_embedder)
    await mem.add_agents({1: {"name": "Ada"}, 2: {"name": "Ben"}})
    mem.clock.set(0, 8 * 3600.0)
    yield mem
    await mem.close()


async def test_status_get_with_default_and_update_of_new_keys(group):
    ada = Memory(group=group, agent_id=1)
    assert await ada.status.get("name") == "Ada"
    with pytest.raises(KeyError, match="mood"):
        await ada.status.get("mood")
    assert await ada.status.get("mood", default_value=0.5) == 0.5
    await ada.status.update("mood", 0.8)  # a key the config did not have
    await ada.status.update("ubi_benefit", 300)
    await ada.status.update("hobbies", "chess", mode="merge")
    await ada.status.update("visited", ["park"])
    await ada.status.update("visited", ["cafe"], mode="merge")
    await ada.status.update("prefs", {"food": "soup"})
    await ada.status.update("prefs", {"drink": "tea"}, mode="merge")
    assert await ada.status.get("mood") == 0.8
    assert await ada.status.get("ubi_benefit") == 300
    assert await ada.status.get("hobbies") == ["chess"]
    assert await ada.status.get("visited") == ["park", "cafe"]
    assert await ada.status.get("prefs") == {"food": "soup", "drink": "tea"}
    ben = Memory(group=group, agent_id=2)  # the key is the group's; Ben has no value yet
    assert await ben.status.get("mood", default_value="n/a") == "n/a"
    with pytest.raises(TypeError, match="'mood': expected float"):
        await ada.status.update("mood", "sad")  # the key is typed from its first value
    with pytest.raises(ValueError, match="mode must be"):
        await ada.status.update("mood", 0.1, mode="add")
    assert await ada.status.get("mood") == 0.8


async def test_stream_typed_adds_and_search_text(group):
    ada, ben = Memory(group=group, agent_id=1), Memory(group=group, agent_id=2)
    assert await ada.stream.search("anything") == NOTHING
    assert await ada.stream.search_today() == NOTHING
    ids = [
        await ada.stream.add_cognition("I think the bakery is the best place in town"),
        await ada.stream.add_social("Talked with Ben about the bakery"),
        await ada.stream.add_economy("Paid 8 for bread at the bakery"),
        await ada.stream.add_mobility("Walked from home to the park"),
        await ada.stream.add_event("The bridge closed for repairs"),
        await ada.stream.add_other("Saw a red kite"),
    ]
    await ben.stream.add_event("Ben's own memory about the bakery")
    assert len(set(ids)) == 6
    found = await ada.stream.search("bakery bread", top_k=2)
    lines = found.splitlines()
    assert len(lines) == 2
    assert all(line.startswith("- [") and "]: " in line for line in lines)
    assert lines[0] == (  # same time: rank order, as the seed's stable sort keeps it
        "- [economy]: Paid 8 for bread at the bakery [day: 0, time: 08:00:00, location: unknown]"
    )
    assert "Ben's own" not in await ada.stream.search("bakery", top_k=10)
    assert texts(await ada.stream.search("bridge", topic="event")) == [
        "The bridge closed for repairs"
    ]
    only_mobility = await ada.stream.search("bakery", topic="mobility", top_k=5)
    assert texts(only_mobility) == ["Walked from home to the park"]
    today = (await ada.stream.search_today(top_k=100)).splitlines()
    assert [line.split("]")[0][3:] for line in today] == list(TOPICS)[::-1]  # newest first
    assert (await ada.stream.search_today(top_k=2)).splitlines() == today[:2]
    group.clock.set(1, 9 * 3600.0)  # the next day: nothing today yet
    assert await ada.stream.search_today() == NOTHING
    assert "bridge" in await ada.stream.search("bridge closed")  # earlier days still found
    linked = await ada.stream.add_cognition_to_memory([ids[1]], "Ben likes the bakery too")
    assert texts(await ada.stream.get_related_cognition(ids[1])) == ["Ben likes the bakery too"]
    assert (await ada.stream.get_by_ids([linked])).startswith("- [cognition]: ")
