"""Whether an agent starts a conversation with someone it meets, decided as Generative Agents
decides it: from the relationship with each person and what the agent retrieves about them.
One call per agent and tick covers everyone it meets (the model, or the rules policy: talk
to the closest person that is a friend or remembered, or to anyone when lonely or with news
to tell, never to someone disliked)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from societas.agents.cognition.conversation import describe_relation
from societas.agents.cognition.persona import Persona, fmt_needs, plain_name
from societas.agents.cognition.prompts import messages
from societas.agents.cognition.relationships import Relation
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.tasks import Reply
from societas.memory import AgentMemory

N_MEMORIES = 5  # memories retrieved about each person met, as the seed retrieves
RECENT_TALK_HOURS = 2.0  # a pair that talked this recently is not asked again
MAX_CANDIDATES = 5  # people met that one decision weighs (the closest)


class TalkChoice(Reply):
    """The number of the person to talk to (1-based), 0 for nobody, and why."""

    talk_to: int = Field(ge=0)
    reason: str = ""


class Candidate(BaseModel):
    """Someone the agent meets: who, the agent's relation to them, what it remembers."""

    agent_id: int
    name: str
    relation: Relation
    memories: list[str] = Field(default_factory=list)


async def remembered(
    mem: AgentMemory, name: str, top_k: int = N_MEMORIES, agent_id: int | None = None
) -> list[str]:
    """What the agent retrieves about `name`: its best memories for the name that name them
    or involve them (`agent_id` among their related_agents)."""
    plain = plain_name(name)
    hits = await mem.stream.search(plain, top_k=top_k, expand=True)  # linked memories too
    return [h.text for h in hits if plain in h.text or agent_id in h.related_agents]


def talked_recently(rel: Relation, tick: int, tick_hours: float) -> bool:
    """Whether the pair's last conversation is less than `RECENT_TALK_HOURS` old."""
    return rel.tick >= 0 and (tick - rel.tick) * tick_hours < RECENT_TALK_HOURS


def describe_people(candidates: Sequence[Candidate]) -> str:
    """'1. Bob Ray (closeness 0.4, ...); remembers: a; b' lines for the prompt."""
    out = []
    for i, c in enumerate(candidates, 1):
        known = "; ".join(c.memories) if c.memories else "nothing"
        who = f"{plain_name(c.name)} ({describe_relation(c.relation)})"
        out.append(f"{i}. {who}; remembers: {known}")
    return "\n".join(out)


async def choose_partner(
    llm: LLMGateway,
    me: Persona,
    candidates: Sequence[Candidate],
    place: str,
    news: str = "",
    seed: int = 0,
    people: Sequence[str] = (),
) -> TalkChoice:
    """Whom of `candidates` the agent talks to (`talk_to`, 1-based; 0: nobody); `news` is
    what it has to tell, if anything."""
    return await llm.json(
        messages(
            "talk_decision",
            me.system(),
            name=me.name,
            place=place or "town",
            mood=me.mood(),
            needs=fmt_needs(me.needs),
            news=news or "nothing in particular",
            people=describe_people(candidates),
        ),
        TalkChoice,
        task="talk_decision",
        context={
            "name": me.name,
            "place": place,
            "news": news,
            "n": len(candidates),
            "candidates": [
                {
                    "name": plain_name(c.name),
                    "closeness": c.relation.closeness,
                    "sentiment": c.relation.sentiment,
                    "talks": c.relation.talks,
                    "memories": c.memories,
                }
                for c in candidates
            ],
            **({"people": people} if people else {}),
            **me.feeling(),
        },
        seed=seed * 7919 + me.agent_id,
        fallback=lambda: TalkChoice(talk_to=0, reason=""),
    )
