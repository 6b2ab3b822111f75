"""Reflection as Generative Agents specifies it: questions from the 30 newest memories in
the order they were lived, nothing asked with fewer than 5 memories, 8 evidence memories and
one insight per question."""

from __future__ import annotations

import re
from typing import Any

from societas.agents.cognition import ReflectionConfig, Reflector
from societas.agents.llm.gateway import LLMGateway
from tests.chat_server import user_text

from .scripted import gateway_config, scripted

QUESTIONS = ["Why do I tend the tomatoes?", "What does the orchard mean to me?", "Who waters?"]
INSIGHTS = [
    {"text": "Gardening steadies my mornings.", "evidence": [1, 2]},
    {"text": "I trust routines more than plans.", "evidence": [3]},
    {"text": "Quiet work restores me.", "evidence": [4]},
]


def reply(schema: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    props = schema.get("properties") or {}
    if "questions" in props:
        return {"questions": QUESTIONS}
    if "insights" in props:
        return {"insights": INSIGHTS}  # three offered: the seed keeps one per question
    if "results" in props:
        n = props["results"].get("minItems", 1)
        return {"results": [{"score": 5} for _ in range(n)]}
    return {}


async def _lived(group, agent_id: int, n: int) -> list[str]:
    """`n` memories ten minutes apart from 06:00; the five oldest are the most important."""
    mem, texts = group.agent(agent_id), []
    for i in range(n):
        group.clock.set(1, 6 * 3600.0 + 600.0 * i)
        text = f"entry {i}: watered the tomatoes in the orchard"
        await mem.stream.add("event", text, importance=0.95 if i < 5 else 0.1)
        texts.append(text)
    return texts


async def test_questions_read_the_newest_thirty_oldest_first(group, bm25_embedder) -> None:
    texts = await _lived(group, 1, 40)
    async with scripted(reply) as (url, seen), LLMGateway(gateway_config(url)) as llm:
        reflector = Reflector(llm, ReflectionConfig(threshold=0.1))
        reflector.note(1, 1.0)
        ids = await reflector.reflect(group.agent(1))
    (asked,) = [b for b in seen if '"questions"' in user_text(b)]
    shown = re.findall(r"entry \d+:[^\n]*", user_text(asked))
    assert shown == texts[10:]  # the 30 newest, in the order they happened
    assert "[day 1 07:40] entry 10:" in user_text(asked)  # stamped with when, as the seed does
    per_question = [b for b in seen if "Question: " in user_text(b)]
    assert len(per_question) == len(QUESTIONS)
    for body in per_question:
        numbered = re.findall(r"^\d+\. ", user_text(body), flags=re.MULTILINE)
        assert len(numbered) == 8  # evidence per question
    stored = await group.agent(1).stream.get_by_ids(ids)
    # one insight per question, and the three questions drew the same one: one memory
    assert [r.text for r in stored] == [INSIGHTS[0]["text"]]
    assert stored[0].topic == "reflection" and len(stored[0].evidence_ids) >= 2


async def test_no_reflection_before_five_memories(group) -> None:
    llm = LLMGateway({"provider": "rules"})
    await _lived(group, 2, 4)
    reflector = Reflector(llm, ReflectionConfig(threshold=0.5))
    reflector.note(2, 1.0)
    assert await reflector.maybe_reflect(group.agent(2)) == []
    assert reflector.due(2) and reflector.reflections == 0  # the importance waits
    group.clock.set(1, 12 * 3600.0)
    await group.agent(2).stream.add("event", "Bob Ray helped me carry the tomatoes home")
    ids = await reflector.maybe_reflect(group.agent(2))
    assert ids and reflector.reflections == 1 and not reflector.due(2)


def test_defaults_follow_the_seed() -> None:
    cfg = ReflectionConfig()
    assert (cfg.n_recent, cfg.min_recent, cfg.evidence_k, cfg.n_insights) == (30, 5, 8, 1)


def test_the_same_insight_from_two_questions_is_one_with_both_evidence() -> None:
    from societas.agents.cognition.reflection import distinct
    from societas.agents.llm.tasks import Insight

    made = [
        (Insight(text="I love the orchard.", evidence=[1]), [11, 12]),
        (Insight(text="The river is rising.", evidence=[2]), [13]),
        (Insight(text="I love  the Orchard.", evidence=[3]), [12, 14]),
    ]
    kept = distinct(made)
    assert [(i.text, e) for i, e in kept] == [
        ("I love the orchard.", [11, 12, 14]),
        ("The river is rising.", [13]),
    ]
