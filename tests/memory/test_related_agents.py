"""Memories record the agents they involve (`related_agents`), and a search filters by person
(`involving`) in every tier: hot, warm in the vector engine (Qdrant Edge, qdrant-client local
mode) and cold Parquet."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from societas.agents.cognition.conversation import remember_conversation
from societas.agents.cognition.memorize import PendingMemories
from societas.agents.llm.gateway import LLMGateway
from societas.memory.model.records import AddRequest, SearchRequest

from .conftest import roomy_tiers

HOUR = 3600.0
MEMORIES = [  # (text, related agents)
    ("talked with Bob about the harbour storm", [2]),
    ("Bob and Carol argued about the harbour storm", [2, 3]),
    ("Carol told me about the harbour storm", [3]),
    ("watched the harbour storm alone", []),
]


async def _remember(group) -> list[int]:
    await group.add_agents({1: {}, 2: {}, 3: {}})
    stream = group.agent(1).stream
    ids = []
    for n, (text, related) in enumerate(MEMORIES):
        group.clock.set(0, n * HOUR)
        ids.append(await stream.add("chat", text, importance=0.5, related_agents=related))
    group.clock.set(0, len(MEMORIES) * HOUR)
    await group.end_tick()
    return ids


async def _involving(group, agent: int, tiers=None) -> set[int]:
    stream = group.agent(1).stream
    hits = await stream.search("harbour storm", top_k=10, involving=agent, tiers=tiers)
    assert all(agent in h.related_agents for h in hits)
    return {h.id for h in hits}


@pytest.mark.parametrize("hot_cap", [200, 1])  # all hot; or the newest hot, the rest warm-only
async def test_search_involving_a_person_hot_and_warm(group_factory, backend, hot_cap):
    group = group_factory(backend, tiers=roomy_tiers(hot_cap_per_agent=hot_cap))
    ids = await _remember(group)
    if hot_cap == 1:
        assert sum(i in group.hot for i in ids) == 1
    assert await _involving(group, 2) == {ids[0], ids[1]}
    assert await _involving(group, 3) == {ids[1], ids[2]}
    assert await _involving(group, 7) == set()
    everything = await group.agent(1).stream.search("harbour storm", top_k=10)
    assert len(everything) == len(MEMORIES)
    (both,) = await group.agent(1).stream.get_by_ids(ids[1])
    assert both.related_agents == (2, 3) and both.tags == ("agent:2", "agent:3")
    await group.close()


async def test_search_involving_a_person_in_cold(group_factory, backend):
    group = group_factory(backend, tiers=roomy_tiers(warm_max_age_days=1))
    ids = await _remember(group)
    group.clock.set(3, 0.0)
    await group.end_tick()
    assert group.cold.count() == len(MEMORIES) and not any(i in group.hot for i in ids)
    assert await _involving(group, 2, ("cold",)) == {ids[0], ids[1]}
    assert await _involving(group, 3, ("hot", "warm", "cold")) == {ids[1], ids[2]}
    (old,) = await group.agent(1).stream.get_by_ids(ids[0])
    assert old.related_agents == (2,)
    await group.close()


def test_related_agents_are_kept_beside_user_tags():
    request = AddRequest(
        agent_id=1, topic="chat", description="x", tags=["tea"], related_agents=[4, 4, 0]
    )
    assert request.related_agents == (4, 0)
    assert request.tags == ("tea", "agent:4", "agent:0")
    again = AddRequest.model_validate(request.model_dump())
    assert (again.tags, again.related_agents) == (request.tags, request.related_agents)
    search = SearchRequest(agent_id=1, query="tea", involving=4)
    assert search.tags == ("agent:4",)
    assert SearchRequest.model_validate(search.model_dump()) == search


@pytest.mark.parametrize(
    ("cls", "fields", "name"),
    [
        (AddRequest, {"related_agents": [-1]}, "related_agents"),
        (AddRequest, {"related_agents": ["Bob"]}, "related_agents"),
        (AddRequest, {"related_agents": 2.0}, "related_agents"),
        (SearchRequest, {"involving": -2}, "involving"),
        (SearchRequest, {"involving": "Bob"}, "involving"),
        (SearchRequest, {"involving": 2, "tags": ["tea"]}, "involving"),
    ],
)
def test_bad_people_name_the_field(cls, fields, name):
    base = {"agent_id": 1, "topic": "chat", "description": "x"} if cls is AddRequest else {}
    with pytest.raises(ValidationError, match=name):
        cls(**base, **({"agent_id": 1, "query": "q"} if cls is SearchRequest else {}), **fields)


async def test_an_observation_involves_the_people_of_its_raw_events(group_factory):
    group = group_factory("edge", profile="cognitive", cognitive={"attention": {"every": 3}})
    await group.add_agents({1: {"name": "Ann Lee"}, 2: {"name": "Bob Ray"}, 3: {}})
    pending = PendingMemories(LLMGateway({"provider": "rules"}))
    ann = group.agent(1)
    await pending.add(ann, "dialogue", "Bob Ray told me: storm", record={"related_agents": [2]})
    await pending.add(ann, "event", "The storm warning was issued", importance=0.5)
    await pending.add(ann, "post", "Cy posted: sandbags", record={"related_agents": [3, 2]})
    (observation,) = await pending.flush(group)  # three raw events: attention fires
    (record,) = await ann.stream.get_by_ids(observation)
    assert record.topic == "observation" and record.related_agents == (2, 3)
    await pending.add(ann, "event", "Rain again", importance=0.2)
    await pending.add(ann, "event", "Rain still", importance=0.2)
    await pending.add(ann, "event", "Rain stops", importance=0.2)
    (alone,) = await pending.flush(group)
    assert (await ann.stream.get_by_ids(alone))[0].related_agents == ()
    await group.close()


async def test_a_conversation_with_sessions_on_involves_the_other_in_each_memory(group_factory):
    policies = {"sessions": {"enabled": True}, "temporal": {"enabled": True}}
    group = group_factory("edge", policies=policies)
    await group.add_agents({1: {"name": "Ann Lee"}, 2: {"name": "Bob Ray"}})
    writer = PendingMemories(LLMGateway({"provider": "rules"}))
    history = [("Ann Lee", "Did you hear about the storm?"), ("Bob Ray", "Yes, it is bad.")]
    await remember_conversation(
        writer,
        group,
        group.agent(2),
        "conv-1",
        "Ann warned me about the storm.",
        history[:1],
        "bakery",
        other="Ann Lee",
        history=history,
        involved=(1,),
    )
    ids = await writer.flush(group)
    records = await group.agent(2).stream.get_by_ids(ids)
    assert {r.type for r in records} == {"session", "conversation", "episodic"}
    assert all(r.related_agents == (1,) for r in records)
    found = await group.agent(2).stream.search("storm", top_k=10, involving=1)
    assert {h.id for h in found} == set(ids)
    assert await group.agent(2).stream.search("storm", top_k=10, involving=2) == []
    await group.close()
