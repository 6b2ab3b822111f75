"""Stream memory: add/search under every filter, today, ids, cognition links, bad input."""

from __future__ import annotations

import itertools
import math

import pytest

from societas.memory import format_memories

# (day, t seconds, topic, location, text)
TIMELINE = [
    (0, 8 * 3600, "activity", "market", "bought fresh apples at the market"),
    (0, 14 * 3600, "social", "park", "talked with Bob about apples and the weather"),
    (1, 9 * 3600, "event", "home", "heard a hurricane warning on the radio"),
    (1, 18 * 3600, "activity", "market", "the market sold out of apples before the storm"),
    (2, 10 * 3600, "event", "shelter", "moved to the shelter because of the hurricane"),
]


async def write_timeline(group, agent_id=1):
    ids = []
    for day, t, topic, location, text in TIMELINE:
        group.clock.set(day, t)
        ids.append(
            await group.agent(agent_id).stream.add(topic, text, importance=0.5, location=location)
        )
    return ids


def expected(query_words, topic=None, day_range=None, time_range=None, location=None):
    """Texts of agent 1 that pass the filters (and share a query word, if words are given)."""
    out = set()
    for day, t, top, loc, text in TIMELINE:
        if query_words is not None and not any(w in text for w in query_words):
            continue
        if topic is not None and top != topic:
            continue
        if day_range is not None and not day_range[0] <= day <= day_range[1]:
            continue
        if time_range is not None and not time_range[0] <= t <= time_range[1]:
            continue
        if location is not None and loc != location:
            continue
        out.add(text)
    return out


FILTERS = {
    "topic": [None, "activity", "event"],
    "day_range": [None, (0, 0), (1, 2)],
    "time_range": [None, (0.0, 12 * 3600.0)],
    "location": [None, "market"],
}


@pytest.mark.parametrize("combo", list(itertools.product(*FILTERS.values())), ids=str)
@pytest.mark.parametrize("query", ["apples", "hurricane", "market storm"])
async def test_search_finds_what_add_wrote_under_every_filter(group_factory, combo, query):
    # Relevance candidates only: exactly the memories sharing a word with the query.
    lexical = group_factory("edge", sub="lexical", retrieval={"candidates": "relevant"})
    # Default: the most recent memories compete too, so every memory passing the filters.
    default = group_factory("edge", sub="default")
    kwargs = dict(zip(FILTERS, combo, strict=True))
    for group, words in ((lexical, query.split()), (default, None)):
        await group.add_agents({1: {}, 2: {}})
        await write_timeline(group)
        await write_timeline(group, agent_id=2)  # another agent's twin memories must not leak
        hits = await group.agent(1).stream.search(query, top_k=10, **kwargs)
        assert {h.text for h in hits} == expected(words, **kwargs)
        assert all(h.agent_id == 1 for h in hits)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)


async def test_filters_on_qdrant_backend_too(group):
    await write_timeline(group)
    hits = await group.agent(1).stream.search("apples", topic="activity", day_range=(1, 1))
    assert [h.text for h in hits] == ["the market sold out of apples before the storm"]
    hits = await group.agent(1).stream.search("hurricane", location="shelter")
    assert [h.location for h in hits] == ["shelter"]


async def test_seed_usage_add_search_topic_day_range(group):
    stream = group.agent(1).stream
    group.clock.set(3, 7 * 3600)
    memory_id = await stream.add(topic="activity", description="I went jogging in the park")
    record = (await stream.get_by_ids(memory_id))[0]
    assert (record.day, record.t, record.topic) == (3, 7 * 3600, "activity")
    assert record.importance == group.config.default_importance
    hits = await stream.search("jogging", topic="activity", day_range=(3, 3))
    assert [h.id for h in hits] == [memory_id]
    assert await stream.search("jogging", topic="event") == []
    assert await stream.search("jogging", day_range=(0, 2)) == []


async def test_search_today(group):
    await write_timeline(group)
    group.clock.set(1, 20 * 3600)
    hits = await group.agent(1).stream.search_today("apples hurricane", top_k=5)
    assert {h.day for h in hits} == {1}
    assert len(hits) == 2


async def test_recency_and_importance_order_equal_relevance(group):
    stream = group.agent(1).stream
    group.clock.set(0, 3600)
    old = await stream.add("event", "the bridge closed", importance=0.2)
    group.clock.set(2, 3600)
    new = await stream.add("event", "the bridge closed", importance=0.2)
    hits = await stream.search("bridge", top_k=2)
    assert [h.id for h in hits] == [new, old]
    vital = await stream.add("event", "the bridge closed", importance=1.0)
    hits = await stream.search("bridge", top_k=1)
    assert hits[0].id == vital


async def test_get_by_ids_and_ownership(group):
    ids = await write_timeline(group)
    records = await group.agent(1).stream.get_by_ids(ids[::-1])
    assert [r.id for r in records] == ids[::-1]
    with pytest.raises(KeyError, match=str(ids[0])):
        await group.agent(2).stream.get_by_ids([ids[0]])
    with pytest.raises(KeyError, match="unknown memory id 123456"):
        await group.agent(1).stream.get_by_ids([123456])


async def test_cognition_links(group):
    stream = group.agent(1).stream
    ids = await write_timeline(group)
    cognition_id = await stream.add_cognition_to_memory(ids[2:4], "A storm is coming; stock up")
    related = await stream.get_related_cognition(ids[2])
    assert [r.id for r in related] == [cognition_id]
    assert related[0].topic == "cognition"
    second = await stream.add("reflection", "I should help my neighbours")
    assert await stream.add_cognition_to_memory(ids[2], second) == second
    assert [r.id for r in await stream.get_related_cognition(ids[2])] == [cognition_id, second]
    assert await stream.get_related_cognition(ids[0]) == []
    assert (await group.store.retrieve([ids[2]]))[ids[2]]["links"] == [cognition_id, second]
    with pytest.raises(KeyError):
        await group.agent(2).stream.add_cognition_to_memory(ids[0], "not mine")
    with pytest.raises(KeyError):
        await stream.add_cognition_to_memory(ids[0], 987654)


async def test_format_memories_seed_text(group):
    await write_timeline(group)
    hits = await group.agent(1).stream.search("hurricane", top_k=1, day_range=(1, 1))
    assert format_memories(hits) == (
        "- heard a hurricane warning on the radio [day: 1, time: 09:00, location: home]"
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"description": ""}, ValueError, "non-empty"),
        ({"description": "   "}, ValueError, "non-empty"),
        ({"description": 42}, ValueError, "must be a string"),
        ({"description": "x", "importance": math.nan}, ValueError, "importance"),
        ({"description": "x", "importance": math.inf}, ValueError, "importance"),
        ({"description": "x", "importance": 1.5}, ValueError, "importance"),
        ({"description": "x", "topic": ""}, ValueError, "topic"),
    ],
)
async def test_bad_add_is_rejected_and_writes_nothing(group, kwargs, error, match):
    args = {"topic": "event", **kwargs}
    with pytest.raises(error, match=match):
        await group.agent(1).stream.add(**args)
    assert await group.memory_count() == 0
    assert len(group.hot) == 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"top_k": 0}, "top_k"),
        ({"day_range": (3, 1)}, "day_range start must be <= end"),
        ({"time_range": (5.0, 1.0)}, "time_range start must be <= end"),
        ({"query": ""}, "non-empty"),
    ],
)
async def test_bad_search_is_valueerror(group, kwargs, match):
    args = {"query": "storm", **kwargs}
    with pytest.raises(ValueError, match=match):
        await group.agent(1).stream.search(**args)


async def test_unknown_agent_in_batch_api_writes_nothing(group):
    from societas.memory import AddRequest

    requests = [
        AddRequest(agent_id=1, topic="e", description="fine"),
        AddRequest(agent_id=77, topic="e", description="no such agent"),
    ]
    with pytest.raises(KeyError, match="unknown agent 77"):
        await group.add_many(requests)
    assert await group.memory_count() == 0


async def test_empty_query_vector_ranks_by_recency(group):
    stream = group.agent(1).stream
    group.clock.set(0, 0)
    first = await stream.add("event", "apples")
    group.clock.set(0, 60)
    second = await stream.add("event", "pears")
    hits = await stream.search("the and of", top_k=2)  # only stop words: no relevance signal
    assert [h.id for h in hits] == [second, first]


async def test_ties_are_broken_the_same_way_every_time(group_factory):
    """Qdrant breaks exact score ties at random; societas must not: runs have to replay."""

    async def build(sub):
        group = group_factory("edge", sub=sub)
        await group.add_agents({a: {} for a in range(20)})
        for tick in range(30):
            group.clock.set(0, tick * 600.0)
            for a in range(20):
                for k in range(3):  # same text, time and importance: exact ties
                    await group.agent(a).stream.add("social", f"talked with {a + k} about rain")
        return group

    async def answers(group):
        out = []
        for a in range(20):
            out.append([h.id for h in await group.agent(a).stream.search("rain talk", top_k=5)])
        return out

    first, second = await build("one"), await build("two")
    reference = await answers(first)
    assert await answers(first) == reference  # the same group, asked again
    assert await answers(second) == reference  # a twin group built the same way
