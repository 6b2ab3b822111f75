"""Attitude update (AgentSociety seed): the agent's self-description (demographic fields,
emotions, thought) and up to 20 memories about a topic move its stance on the seed's
0 (against) .. 10 (for) scale, stored in KV `attitude`."""

from __future__ import annotations

from societas.agents.cognition.memorize import ImmediateWriter, MemoryWriter
from societas.agents.cognition.persona import describe_self, lines, persona, recall
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import AttitudeUpdate
from societas.memory import AgentMemory

NEUTRAL = 5.0
N_MEMORIES = 20  # memories about the topic the seed's attitude update reads


async def update_attitude(
    mem: AgentMemory,
    llm: LLMGateway,
    topic: str,
    seed: int = 0,
    stubbornness: float = 0.5,
    writer: MemoryWriter | None = None,
    top_k: int = N_MEMORIES,
) -> AttitudeUpdate:
    """Re-evaluate the stance on `topic` from the most relevant memories; store it (with no
    usable answer, a fallback, the stance stays and no memory is added)."""
    p = await persona(mem)
    attitudes = await mem.status.get("attitude", default={})
    current = float(attitudes.get(topic, NEUTRAL))
    hits = await recall(mem, topic, top_k=top_k)
    out = await llm.json(
        messages(
            "attitude_update",
            p.system(),
            name=p.name,
            topic=topic,
            attitude=f"{current:.1f}",
            self_description=await describe_self(mem),
            memories=lines(hits),
        ),
        AttitudeUpdate,
        task="attitude_update",
        context={
            "name": p.name,
            "topic": topic,
            "attitude": current,
            "recent": [h.text for h in hits],
            "profile": {**p.rules_profile(), "stubbornness": stubbornness},
        },
        seed=seed * 7919 + mem.agent_id,
        fallback=lambda: AttitudeUpdate(attitude=current, reason="unchanged"),
    )
    if out.answer_source == "fallback":
        return out
    await mem.status.update("attitude", {topic: out.attitude}, mode="merge")
    await (writer or ImmediateWriter(llm)).add(
        mem,
        "cognition",
        f"{p.name}'s attitude towards {topic} is now {out.attitude:.1f}/10: {out.reason}",
    )
    return out
