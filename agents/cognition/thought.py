"""Thought and emotion update in the spirit of the AgentSociety seed: recent experience and
needs → the agent's inner thought, dominant emotion and its intensity, stored in KV and
remembered as a cognition memory."""

from __future__ import annotations

from societas.agents.cognition.memorize import ImmediateWriter, MemoryWriter
from societas.agents.cognition.persona import fmt_needs, lines, persona, recall
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import ThoughtUpdate
from societas.memory import AgentMemory

EMOTIONS = ("sadness", "joy", "fear", "disgust", "anger", "surprise")


async def update_thought(
    mem: AgentMemory, llm: LLMGateway, seed: int = 0, writer: MemoryWriter | None = None
) -> ThoughtUpdate:
    """Update KV `thought`, `emotion` (0..10 per seed emotion) and `emotion_types`."""
    p = await persona(mem)
    current = str(await mem.status.get("thought", default="nothing in particular"))
    hits = await recall(mem, f"{p.name} feelings", top_k=5, today=True)
    out = await llm.json(
        messages(
            "thought_update",
            p.system(),
            name=p.name,
            thought=current,
            needs=fmt_needs(p.needs),
            memories=lines(hits),
        ),
        ThoughtUpdate,
        task="thought_update",
        context={
            "name": p.name,
            "thought": current,
            "needs": p.needs,
            "recent": [h.text for h in hits],
            "profile": p.rules_profile(),
        },
        seed=seed * 7919 + mem.agent_id,
        fallback=lambda: ThoughtUpdate(thought=current, emotion="joy", intensity=0.3),
    )
    await mem.status.update("thought", out.thought)
    emotion = out.emotion.lower()
    if emotion in EMOTIONS:
        await mem.status.update("emotion", {emotion: round(out.intensity * 10)}, mode="merge")
    await mem.status.update("emotion_types", emotion.capitalize())
    await (writer or ImmediateWriter(llm)).add(mem, "cognition", f"{p.name} thinks: {out.thought}")
    return out
