"""Whether agents who meet talk, decided as Generative Agents decides it: from the relationship
and the memories each retrieves about the other, by the model when one is configured (one
call for everyone met, checked and sourced) and by the rules policy otherwise."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from societas.agents.blocks.social import INVITE, SocialBlock
from societas.agents.cognition.relationships import Relation
from societas.agents.llm.gateway import LLMGateway
from societas.agents.runtime.conversations import accepts
from societas.agents.runtime.protocol import Message
from tests.chat_server import user_text

from ..cognition.scripted import gateway_config, scripted
from .conftest import make_ctx

ME = 5


def _met(*others: int, tick: int = 1) -> list[Message]:
    return [
        Message(tick=tick, sender=o, recipient=ME, kind="encounter", payload={"place": "cafe-0"})
        for o in others
    ]


def _stranger(engine) -> int:
    friends = {f for f, _ in engine.population.friends[ME]}
    return next(i for i in range(12) if i != ME and i not in friends)


def _every_meeting_an_occasion(engine) -> None:
    engine.scenario.social.chat_prob = 1.0
    engine.scenario.social.friend_chat_prob = 1.0
    a = engine.agents[ME]
    a.profile = dataclasses.replace(a.profile, sociability=1.0)  # shared profiles: a copy
    a.state.update(category="leisure", social_satisfaction=0.9, knowledge=[])


def _decisions(engine) -> list[tuple[Any, ...]]:
    return [r for r in engine.results.buffered("events") if r[2] == "talk_decision"]


async def test_rules_talk_to_whom_the_agent_knows_or_remembers(engine) -> None:
    _every_meeting_an_occasion(engine)
    block, a = SocialBlock(engine.scenario), engine.agents[ME]
    other = _stranger(engine)
    for tick in range(1, 9):  # a stranger the agent remembers nothing of: never
        await block.forward(make_ctx(engine, ME, tick=tick, inbox=_met(other, tick=tick)))
        assert INVITE not in a.state
    assert {r[3] for r in _decisions(engine)} == {f"talk to nobody of {other}"}
    assert {r[4] for r in _decisions(engine)} == {"rules"}
    name = engine.population.profiles[other].name
    await a.memory.stream.add("event", f"I saw {name} feeding the ducks at the park")
    await block.forward(make_ctx(engine, ME, tick=9, inbox=_met(other, tick=9)))
    assert a.state.pop(INVITE)[0] == other  # now remembered: the agent talks
    disliked = {str(other): Relation(closeness=0.9, sentiment=-0.8).model_dump()}
    a.state["relationships"] = disliked
    await block.forward(make_ctx(engine, ME, tick=10, inbox=_met(other, tick=10)))
    assert INVITE not in a.state  # close but disliked: no
    recent = {str(other): Relation(closeness=0.9, sentiment=0.5, talks=1, tick=10).model_dump()}
    a.state["relationships"] = recent
    before = len(_decisions(engine))
    await block.forward(make_ctx(engine, ME, tick=11, inbox=_met(other, tick=11)))
    assert INVITE not in a.state and len(_decisions(engine)) == before  # talked half an hour ago


async def test_rules_talk_to_a_stranger_with_news_or_when_lonely(engine) -> None:
    _every_meeting_an_occasion(engine)
    block, a = SocialBlock(engine.scenario), engine.agents[ME]
    other = _stranger(engine)
    a.state["social_satisfaction"] = 0.3
    await block.forward(make_ctx(engine, ME, tick=1, inbox=_met(other)))
    assert a.state.pop(INVITE)[0] == other  # lonely: anyone will do
    a.state.update(social_satisfaction=0.9, knowledge=["f1"])
    await block.forward(make_ctx(engine, ME, tick=2, inbox=_met(other, tick=2)))
    partner, _, topic = a.state.pop(INVITE)
    assert partner == other and "bridge" in topic.lower()  # news to tell


async def test_rules_pick_the_closest_friend_among_those_met(engine) -> None:
    _every_meeting_an_occasion(engine)
    block, a = SocialBlock(engine.scenario), engine.agents[ME]
    friends = sorted(engine.population.friends[ME], key=lambda fw: (-fw[1], fw[0]))
    stranger = _stranger(engine)
    await block.forward(
        make_ctx(engine, ME, tick=3, inbox=_met(stranger, *(f for f, _ in friends), tick=3))
    )
    assert a.state[INVITE][0] == friends[0][0]  # the strongest tie


def test_the_invitee_accepts_unless_asleep_or_disliking() -> None:
    assert accepts(Relation(), asleep=False)  # a stranger asking is heard
    assert not accepts(Relation(closeness=0.9, sentiment=-0.6), asleep=False)
    assert not accepts(Relation(closeness=0.9, sentiment=0.9), asleep=True)


def _picks(first: int, then: int):
    """Answers a talk decision with person `first`, and `then` when re-asked."""

    def reply(schema: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        props = schema.get("properties") or {}
        if "talk_to" in props:
            again = any(m["role"] == "assistant" for m in messages)
            return {"talk_to": then if again else first, "reason": "We share the garden."}
        return {}

    return reply


async def test_the_model_decides_from_relationships_and_memories(engine) -> None:
    _every_meeting_an_occasion(engine)
    block, a = SocialBlock(engine.scenario), engine.agents[ME]
    friend, tie = max(engine.population.friends[ME], key=lambda fw: (fw[1], -fw[0]))
    stranger = _stranger(engine)
    s_name = engine.population.profiles[stranger].name
    await a.memory.stream.add("event", f"{s_name} lent me a ladder for the apple tree")
    async with scripted(_picks(7, 2)) as (url, seen), LLMGateway(gateway_config(url)) as llm:
        ctx = make_ctx(engine, ME, tick=2, inbox=_met(stranger, friend, tick=2))
        await block.forward(dataclasses.replace(ctx, llm=llm))
    asked = [b for b in seen if "talk_to" in user_text(b)]
    assert len(asked) == 2  # one decision for everyone met; person 7 of 2 was asked again
    prompt = user_text(asked[0])
    lines = re.findall(r"^\d\. .*$", prompt, flags=re.MULTILINE)
    assert len(lines) == 2 and f"closeness {tie:.1f}" in lines[0]  # the friend first
    assert "lent me a ladder" in lines[1] and "closeness 0.0" in lines[1]
    assert a.state[INVITE][0] == stranger  # the model's choice, person 2
    (row,) = _decisions(engine)
    assert row[3] == f"talk to {stranger} of {friend},{stranger}" and row[4] == "re_asked"
