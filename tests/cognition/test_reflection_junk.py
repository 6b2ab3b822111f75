"""A reflection never stores an insight that talks to an interviewer and reads back the day's
plan (SmolLM2's "... will allow us to learn from you is the plan for day 1: 7:00 wake up and
have dinner.") or asks its question as an interviewer ("... will allow us to learn from
you?"): the gateway re-asks, and what the re-asks give is what the reflection uses."""

from __future__ import annotations

from typing import Any

from societas.agents.cognition import ReflectionConfig, Reflector
from societas.agents.llm.gateway import LLMGateway

from .scripted import gateway_config, scripted

QUESTION = "What is the most important information that will allow us to learn from you?"
JUNK = (
    "The most important information that will allow us to learn from you is the plan for "
    "day 1: 7:00 wake up and have dinner."
)
OWN = "Looking after things at home keeps me calm."
OWN_QUESTION = "What keeps Ann Lee calm?"
LIVED = [
    "Ann Lee talked with Bob Ray.",
    "Ann Lee is going to relax after the meal",
    "Ann Lee is going to wake up and have breakfast",
    "Ann Lee is going to look after things at home",
    "Ann Lee's plan for day 0: 7:00 wake up and have breakfast at flat 1; 9:00 look after "
    "things at home at flat 1; 18:00 have dinner at flat 1; 22:00 sleep at flat 1",
]


def reply(schema: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """SmolLM2's question and insight on the first ask, the person's own on a re-ask."""
    props = schema.get("properties") or {}
    asked = [m["content"] for m in messages if m["role"] == "user"]
    if "questions" in props:
        return {"questions": [QUESTION if len(messages) <= 2 else OWN_QUESTION]}
    if "insights" in props:
        assert OWN_QUESTION in asked[0] and QUESTION not in asked[0]  # the re-asked question
        text = JUNK if len(messages) <= 2 else OWN
        return {"insights": [{"text": text, "evidence": [1, 2, 3, 4, 5]}]}
    if "results" in props:
        n = props["results"].get("minItems", 1)
        return {"results": [{"score": 5} for _ in range(n)]}
    return {}


async def test_an_insight_to_an_interviewer_is_re_asked_and_never_stored(group) -> None:
    mem = group.agent(1)
    for i, text in enumerate(LIVED):
        group.clock.set(1, 7 * 3600.0 + 600.0 * i)
        await mem.stream.add("event", text, importance=0.5)
    reported: list[tuple[str, str]] = []
    async with scripted(reply) as (url, _), LLMGateway(gateway_config(url)) as llm:
        reflector = Reflector(llm, ReflectionConfig(threshold=0.1))
        reflector.on_insight = lambda _a, _m, text, _e, source: reported.append((text, source))
        reflector.note(1, 1.0)
        ids = await reflector.reflect(mem)
    stored = await mem.stream.get_by_ids(ids)
    assert [r.text for r in stored] == [OWN]
    assert reported == [(OWN, "re_asked")]
