"""Thought and emotion update as in the AgentSociety seed: the agent's self-description
(demographic fields, emotion intensities, thought), its needs and up to 20 of today's
memories → its inner thought and dominant emotion, one of the seed's 21 words, stored in KV
with the intensity it raises and remembered as a cognition memory."""

from __future__ import annotations

from typing import cast

from societas.agents.cognition.emotions import INTENSITIES, OCC_WORDS, family, occ_word
from societas.agents.cognition.memorize import ImmediateWriter, MemoryWriter
from societas.agents.cognition.persona import describe_self, fmt_needs, lines, persona, recall
from societas.agents.cognition.prompts import messages
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.provenance import mark
from societas.agents.llm.tasks import ThoughtUpdate
from societas.memory import AgentMemory

N_MEMORIES = 20  # today's memories the seed's thought update reads


async def update_thought(
    mem: AgentMemory,
    llm: LLMGateway,
    seed: int = 0,
    writer: MemoryWriter | None = None,
    top_k: int = N_MEMORIES,
) -> ThoughtUpdate:
    """Update KV `thought`, `emotion_types` (one of the 21 words) and the `emotion`
    intensity (0..10) that word raises; the answer's `emotion` is the stored word. With no
    usable answer (a fallback) nothing changes: the answer is the thought and the emotion in
    force ("" before the first), and no memory is added."""
    p = await persona(mem)
    current = str(await mem.status.get("thought", default="nothing in particular"))
    word_now = occ_word(str(await mem.status.get("emotion_types", default="") or "")) or ""
    felt = await mem.status.get("emotion", default=None)
    level = felt.get(family(word_now), 0) if word_now and isinstance(felt, dict) else 0
    hits = await recall(mem, f"{p.name} feelings", top_k=top_k, today=True)
    out = await llm.json(
        messages(
            "thought_update",
            p.system(),
            name=p.name,
            words=", ".join(OCC_WORDS),
            self_description=await describe_self(mem),
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
            "choices": {"emotion": [*OCC_WORDS, *INTENSITIES]},
        },
        seed=seed * 7919 + mem.agent_id,
        fallback=lambda: cast(  # as it stands, "" before the first: no made-up feeling
            ThoughtUpdate,
            ThoughtUpdate.model_construct(
                thought=current, emotion=word_now, intensity=min(1.0, float(level) / 10)
            ),
        ),
    )
    if out.answer_source == "fallback":
        return out
    word = occ_word(out.emotion) or "Joy"
    stored = mark(out.model_copy(update={"emotion": word}), out.answer_source)
    await mem.status.update("thought", stored.thought)
    await mem.status.update("emotion", {family(word): round(stored.intensity * 10)}, mode="merge")
    await mem.status.update("emotion_types", word)
    await (writer or ImmediateWriter(llm)).add(
        mem, "cognition", f"{p.name} thinks: {stored.thought}"
    )
    return stored
