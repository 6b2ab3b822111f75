"""The run's attitude update (the cognition block) as the AgentSociety seed writes it: 20 of
the posts the agent read, under the seed's self-description with the agent's generated
demographic fields."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from societas.agents.blocks.cognition import CognitionBlock
from societas.agents.llm.gateway import LLMGateway
from tests.chat_server import user_text

from ..cognition.scripted import gateway_config, scripted
from .conftest import make_ctx


def reply(schema: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    if "attitude" in (schema.get("properties") or {}):
        return {"attitude": 6.5, "reason": "Most posts I read were in favour."}
    return {"results": [{"score": 3}]}


async def test_block_attitude_reads_twenty_posts_with_the_self_description(engine) -> None:
    block, a = CognitionBlock(engine.scenario), engine.agents[9]
    for n in range(26):
        await a.memory.stream.add("post", f"N{n} posted: I support carbon tax: it is good.")
    a.state["attitude"] = {"carbon tax": 5.0}
    async with scripted(reply) as (url, seen), LLMGateway(gateway_config(url)) as llm:
        ctx = dataclasses.replace(make_ctx(engine, 9, tick=3), llm=llm)
        value = await block.attitude(ctx, "carbon tax")
    (asked,) = [b for b in seen if '"attitude"' in user_text(b)]
    text = user_text(asked)
    assert len(re.findall(r"^- N\d+ posted", text, flags=re.MULTILINE)) == 20
    p = a.profile
    assert f"belonging to the {p.race} race and identifying as {p.religion}" in text
    assert f"skilled in {p.skill}" in text and f"marital status is {p.marriage_status}" in text
    assert value == 6.5 and a.state["attitude"]["carbon tax"] == 6.5


async def test_a_post_read_this_tick_is_weighed_in_this_ticks_stance(engine) -> None:
    """The group writer stores a tick's memories only when the tick ends, so the post an agent
    just read is not yet searchable: it is still in the prompt (before, the first stance after
    a post was weighed on '(none)')."""
    from societas.agents.blocks.social import SocialBlock
    from societas.agents.cognition.memorize import PendingMemories
    from societas.agents.runtime.protocol import Message

    block, a = CognitionBlock(engine.scenario), engine.agents[9]
    await a.memory.stream.add("post", "Old Ann posted: I oppose carbon tax: it is bad.")
    a.state["attitude"] = {"carbon tax": 5.0}
    post = {"topic": "carbon tax", "value": 8.0, "name": "Bo Lee", "text": "I support it."}
    inbox = [Message(tick=2, sender=3, recipient=9, kind="post", payload=post)]
    async with scripted(reply) as (url, seen), LLMGateway(gateway_config(url)) as llm:
        ctx = dataclasses.replace(make_ctx(engine, 9, tick=3, inbox=inbox), llm=llm)
        ctx.writer = PendingMemories(llm)  # as the engine's tick has it: stored at the end
        await SocialBlock(engine.scenario)._read(ctx, inbox[0])
        assert ctx.writer.size == 1  # not stored yet
        await block.attitude(ctx, "carbon tax")
    (asked,) = [b for b in seen if '"attitude"' in user_text(b)]
    lines = re.findall(r"^- (.+)$", user_text(asked), flags=re.MULTILINE)
    assert lines == [
        "Bo Lee posted: I support it.",
        "Old Ann posted: I oppose carbon tax: it is bad.",
    ]
