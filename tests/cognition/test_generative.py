"""Generative-agent cognition as the runtime uses it: importance rated in batches across
agents, reflection at the threshold with evidence links, emotion changing choices, and the
rendered prompts holding what they claim (checked on the text sent to the model)."""

from __future__ import annotations

from typing import Any

from societas.agents.cognition import (
    PendingMemories,
    ReflectionConfig,
    Reflector,
    decompose_hour,
    plan_day,
    react,
    speak,
    summarize_conversation,
)
from societas.agents.cognition.importance import MUNDANE as ANCHOR_LOW
from societas.agents.cognition.importance import POIGNANT as ANCHOR_HIGH
from societas.agents.cognition.persona import persona
from societas.agents.cognition.relationships import Relation, belief, mood
from societas.agents.llm.gateway import LLMGateway

MUNDANE = ["brushed my teeth", "ate breakfast at home", "sat and read the paper"]
POIGNANT = [
    "I was terrified when the fire reached our street and we had to evacuate",
    "my father died in the hospital and I cried all night",
    "I heard I got fired from my job and I am worried about money and rent",
]


async def test_pending_memories_rate_every_agents_memories_in_one_batch(group, llm) -> None:
    reflector = Reflector(llm)
    pending = PendingMemories(llm, reflector, fixed={"routine": 0.15})
    for agent_id, texts in ((2, POIGNANT), (1, MUNDANE)):
        for text in texts:
            assert await pending.add(group.agent(agent_id), "event", text) is None
    await pending.add(group.agent(3), "routine", "walked to work")
    if hasattr(llm, "emulator"):
        llm.emulator.reset()
    ids = await pending.flush(group, salt=7)
    assert len(ids) == 7 and pending.rated == 6 and pending.size == 0
    if hasattr(llm, "emulator"):  # six texts of two agents: one batched call
        assert llm.emulator.stats["chat_requests"] == 1
    records = {r.text: r for r in await group.get_by_ids(ids)}
    low = [records[t].importance for t in MUNDANE]
    high = [records[t].importance for t in POIGNANT]
    assert max(low) <= 0.3 and min(high) >= 0.6, (low, high)  # 1-3 vs 6-10
    assert records["walked to work"].importance == 0.15  # a configured topic is not rated
    assert [records[t].agent_id for t in MUNDANE] == [1, 1, 1]  # stored for its agent
    assert reflector.accumulated[2] == sum(high) and reflector.accumulated[3] == 0.15


async def test_reflection_fires_at_the_threshold_not_before_with_evidence(group) -> None:
    llm = LLMGateway({"provider": "rules"})
    reflector = Reflector(llm, ReflectionConfig(threshold=2.5, n_questions=3))
    pending = PendingMemories(llm, reflector, fixed={"event": 0.5})
    mem = group.agent(1)
    texts = [
        "The hurricane warning came on the radio",
        "Neighbours board up windows against the hurricane",
        "The school shelter opened for the hurricane evacuation",
        "The mayor ordered an evacuation before the hurricane",
        "A bus takes people to the shelter before the hurricane",
    ]
    for text in texts[:4]:
        await pending.add(mem, "event", text)
    await pending.flush(group)
    assert reflector.accumulated[1] == 2.0 and not reflector.due(1)
    assert await reflector.maybe_reflect(mem) == []  # below the threshold: nothing
    await pending.add(mem, "event", texts[4])
    await pending.flush(group)
    assert reflector.due(1)  # 2.5 reached exactly
    insights: list[tuple[int, int, str, list[int], str]] = []
    reflector.on_insight = lambda *row: insights.append(row)
    assert await reflector.reflect(mem, writer=pending) == []  # deferred to the flush
    await pending.flush(group)
    assert insights and reflector.reflections == 1
    assert sum(len(e) for *_, e, _ in insights) / len(insights) >= 2
    assert {source for *_, source in insights} == {"rules"}
    for agent_id, memory_id, text, evidence, _ in insights:
        (stored,) = await mem.stream.get_by_ids([memory_id])
        assert stored.topic == "reflection" and stored.text == text and agent_id == 1
        assert evidence
        sources = await mem.stream.get_by_ids(evidence)  # evidence ids are stored memories
        assert len(sources) == len(evidence) and all(s.agent_id == 1 for s in sources)
        for source in sources:
            assert memory_id in {c.id for c in await mem.stream.get_related_cognition(source.id)}
    # a reflection may rest on reflections: the next one retrieves the insights too
    for _agent, memory_id, text, _evidence, _source in insights[:1]:
        hits = await mem.stream.search(text, top_k=10)
        assert memory_id in {h.id for h in hits}


async def _set_emotion(group, agent_id: int, emotion: str, level: int) -> None:
    mem = group.agent(agent_id)
    await mem.status.update("emotion_types", emotion.capitalize())
    await mem.status.update("emotion", {emotion: level}, mode="merge")


async def test_two_agents_differing_only_in_emotion_choose_differently(group, llm) -> None:
    same = {"name": "Dee Fox", "occupation": "clerk", "home": "flat 9", "work": "office"}
    await group.add_agents({7: same, 8: same})
    await _set_emotion(group, 7, "joy", 10)
    await _set_emotion(group, 8, "fear", 10)
    glad, afraid = await plan_day(group.agent(7), llm, 1), await plan_day(group.agent(8), llm, 1)
    evening = {i.activity for i in glad.items if i.start_hour == 18}
    assert evening == {"meet friends"}
    assert {i.activity for i in afraid.items if i.start_hour == 18} == {"stay home and rest"}
    news = "There is a festival in the park with a party tonight"
    r_glad = await react(group.agent(7), llm, news, day=1, hour=16)
    r_afraid = await react(group.agent(8), llm, news, day=1, hour=16)
    assert r_glad.react and r_afraid.react and r_glad.new_activity != r_afraid.new_activity
    p_glad, p_afraid = await persona(group.agent(7)), await persona(group.agent(8))
    m_glad = mood(p_glad.emotion, p_glad.emotion_intensity)
    m_afraid = mood(p_afraid.emotion, p_afraid.emotion_intensity)
    assert m_glad > 0 > m_afraid  # the mood every decision prompt shows
    assert belief(Relation(closeness=0.9, sentiment=0.8)) > belief(Relation(sentiment=-0.8))


class Recorder:
    """The rules gateway, recording every rendered prompt (what a model would be sent)."""

    def __init__(self) -> None:
        self.inner = LLMGateway({"provider": "rules"})
        self.config = self.inner.config
        self.sent: dict[str, list[dict[str, str]]] = {}

    async def json(self, messages: Any, schema: Any, **kw: Any) -> Any:
        self.sent[kw.get("task") or "?"] = messages
        return await self.inner.json(messages, schema, **kw)

    def answers_by_rules(self, task: str | None) -> bool:
        """False: the prompts are those a model would be sent (attention checks included)."""
        return False


async def test_every_prompt_contains_what_it_claims(group) -> None:
    llm = Recorder()
    ann = group.agent(1)
    await ann.stream.add("event", "Bob Ray lent me his ladder yesterday", importance=0.6)
    await ann.stream.add("event", "The baker plans a festival for goals today", importance=0.6)
    await _set_emotion(group, 1, "sadness", 8)
    await plan_day(ann, llm, day=1)  # type: ignore[arg-type]
    system, user = (m["content"] for m in llm.sent["daily_plan"])
    assert "Ann Lee" in system and "teacher" in system and "school" in system  # persona
    assert "Rules of the world" in system
    assert "festival" in user  # the retrieved memory
    assert "sadness (intensity 0.8)" in user and "hunger" in user  # mood and needs
    assert user.index("Reply with ONLY") < user.index("festival")  # static text first
    (rated,) = (m["content"] for m in llm.sent["importance"])
    assert any(t in rated for t in ANCHOR_LOW) and any(t in rated for t in ANCHOR_HIGH)
    plan = await ann.status.get("plan")
    hour = plan["items"][1]["start_hour"]
    await decompose_hour(ann, llm, hour)  # type: ignore[arg-type]
    _, user = (m["content"] for m in llm.sent["hourly_plan"])
    first = plan["items"][0]
    assert f"{first['start_hour']}:00 {first['activity']}" in user  # the day plan
    assert plan["items"][1]["activity"] in user
    await react(ann, llm, "a flood reached the street", day=1, hour=hour)  # type: ignore[arg-type]
    _, user = (m["content"] for m in llm.sent["reaction"])
    assert "a flood reached the street" in user and first["activity"] in user
    _, user = (m["content"] for m in llm.sent["replan"])
    assert "a flood reached the street" in user and "evacuate" in user
    me = await persona(ann)
    history = [("Bob Ray", "Hello Ann, how is the ladder?")]
    rel = Relation(closeness=0.7, sentiment=0.4, talks=2)
    await speak(llm, ann, me, "Bob Ray", rel, "the ladder", history, 1, 8)  # type: ignore[arg-type]
    system, user = (m["content"] for m in llm.sent["dialogue_turn"])
    assert "Ann Lee" in system
    assert "lent me his ladder" in user  # retrieved about the other and the topic
    assert "Bob Ray: Hello Ann, how is the ladder?" in user  # the conversation so far
    assert "closeness 0.7" in user and "sadness" in user
    out = await summarize_conversation(llm, me, "Bob Ray", rel, history, "the ladder", "park")  # type: ignore[arg-type]
    _, user = (m["content"] for m in llm.sent["conversation_summary"])
    assert "Hello Ann, how is the ladder?" in user and "park" in user
    assert "Bob Ray" in out.summary and -1.0 <= out.tone <= 1.0
