"""Social block: messages received (chats, posts, encounters); of the people it meets the
agent may invite one to a conversation, decided from its relationship with each and what it
remembers about them (agents/cognition/talk.py), which the driver then routes turn by turn
(agents/runtime/conversations.py);
one-line messages to friends (partner weighted by closeness); facts spreading through what
is said, believed as far as the speaker is trusted; stance posts read by friends (echo
chamber) or by anyone, ignored from people the reader dislikes."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from societas.agents.blocks.plan import me as persona_now
from societas.agents.cognition.attitude import N_MEMORIES as READ_KEPT
from societas.agents.cognition.conversation import describe_relation
from societas.agents.cognition.persona import NEEDS, fmt_needs, plain_name, recall
from societas.agents.cognition.prompts import messages
from societas.agents.cognition.relationships import DISLIKED, belief, relation
from societas.agents.cognition.talk import (
    MAX_CANDIDATES,
    Candidate,
    choose_partner,
    remembered,
    talked_recently,
)
from societas.agents.llm.tasks import DialogueTurn
from societas.agents.scenario import ScenarioConfig

if TYPE_CHECKING:
    from societas.agents.agent import AgentContext
    from societas.agents.runtime.protocol import Message

CHAT_RESTORE, SPEAK_RESTORE = 0.15, 0.1
INVITE = "_invite"  # scratch: (partner, place, topic) of the conversation asked for this tick


async def _remember_with(
    ctx: AgentContext, other: int, topic: str, text: str, location: str | None = None
) -> None:
    """`ctx.remember` of a memory involving `other` (its related_agents)."""
    mem, record = ctx.agent.memory, {"related_agents": [other]}
    await ctx.memory_writer().add(mem, topic, text, location=location, record=record)


def stance_text(topic: str, value: float) -> str:
    """What an agent posts about `topic` given its stance 0..10."""
    if value >= 6.0:
        return f"I support {topic}: it is good and fair."
    if value <= 4.0:
        return f"I oppose {topic}: it is bad and harmful."
    return f"I am unsure about {topic}."


def posts_read(state: dict[str, Any]) -> list[list[str]]:
    """[topic, post] of the posts read since the agent last weighed its stances, oldest first
    (a run written before these were kept holds True or False)."""
    read = state.get("_exposed")
    return read if isinstance(read, list) else []


class SocialBlock:
    """Perceive the inbox, then talk, message and post."""

    name = "social"

    def __init__(self, scenario: ScenarioConfig) -> None:
        self.scenario = scenario
        self.cfg = scenario.social
        self.exposure = scenario.exposure
        self.fact_text = {f.id: f.text for f in scenario.facts}

    async def forward(self, ctx: AgentContext) -> None:
        s = ctx.state
        for ev in ctx.events:
            if ev.kind == "fact" and ev.fact is not None:
                await self.learn(ctx, ev.fact, -1)
        met: list[Message] = []
        for msg in ctx.inbox:
            if msg.kind == "chat":
                await self._heard(ctx, msg)
            elif msg.kind == "post":
                await self._read(ctx, msg)
            elif msg.kind == "encounter":
                met.append(msg)
        if s["category"] == "sleep":
            return
        friends = ctx.population.friends[ctx.agent.id]
        ties = dict(friends)
        rels = s.get("relationships") or {}
        if self.cfg.encounters and met:
            await self._decide_talk(ctx, met, ties, rels)
        if friends and self.cfg.message_prob > 0 and ctx.rng.random() < self.cfg.message_prob:
            weights = [relation(rels, f, w).closeness + 0.05 for f, w in friends]
            (friend,) = ctx.rng.choices([f for f, _ in friends], weights)
            await self.speak(ctx, friend, "message", "")
        if self.exposure.enabled and ctx.rng.random() < self.exposure.post_prob:
            self._post(ctx, [f for f, _ in friends])

    @staticmethod
    def _tie(ctx: AgentContext, other: int) -> float | None:
        return dict(ctx.population.friends[ctx.agent.id]).get(other)

    def topic(self, ctx: AgentContext) -> str:
        """What the agent wants to talk about: its newest news, else a scenario topic."""
        known = ctx.state["knowledge"]
        if known:
            return self.fact_text.get(known[-1], known[-1])
        return self.scenario.topics[0].name if self.scenario.topics else ""

    async def _decide_talk(
        self,
        ctx: AgentContext,
        met: list[Message],
        ties: dict[int, float],
        rels: dict[str, Any],
    ) -> None:
        """Invite one of the people met, or nobody. A meeting is an occasion to talk with
        chance `friend_chat_prob` for a friend, `chat_prob` x sociability otherwise; whom of
        the occasions (closest first, none talked with in the last hours) the agent talks
        to, with its newest news, is the talk decision, recorded as a `talk_decision` event
        with its source."""
        s = ctx.state
        occasions: dict[int, Message] = {}
        for enc in met:
            base = (
                self.cfg.friend_chat_prob
                if enc.sender in ties
                else self.cfg.chat_prob * ctx.agent.profile.sociability
            )
            if ctx.rng.random() < base:
                occasions.setdefault(enc.sender, enc)
        if not occasions or INVITE in s:
            return
        tick = ctx.time.tick
        known = {o: relation(rels, o, ties.get(o)) for o in occasions}
        open_ = [o for o in occasions if not talked_recently(known[o], tick, ctx.tick_hours)]
        open_ = sorted(open_, key=lambda o: (-known[o].closeness, o))[:MAX_CANDIDATES]
        if not open_:
            return
        names = [ctx.population.profiles[other].name for other in open_]
        mem = ctx.agent.memory
        found = await asyncio.gather(
            *(remembered(mem, n, agent_id=o) for n, o in zip(names, open_, strict=True))
        )
        candidates = [
            Candidate(agent_id=other, name=name, relation=known[other], memories=memories)
            for other, name, memories in zip(open_, names, found, strict=True)
        ]
        place = str(occasions[open_[0]].payload.get("place", ""))
        facts = s["knowledge"]
        choice = await choose_partner(
            ctx.llm,
            persona_now(ctx),
            candidates,
            place,
            news=self.fact_text.get(facts[-1], facts[-1]) if facts else "",
            seed=self.scenario.seed * 1_000_003 + tick,
            people=ctx.population.plain_names,
        )
        asked = ",".join(str(o) for o in open_)
        if 1 <= choice.talk_to <= len(candidates):
            partner = candidates[choice.talk_to - 1].agent_id
            s[INVITE] = (partner, place, self.topic(ctx))
            ctx.event("talk_decision", f"talk to {partner} of {asked}", choice.answer_source)
        else:
            ctx.event("talk_decision", f"talk to nobody of {asked}", choice.answer_source)

    async def learn(self, ctx: AgentContext, fact: str, source: int) -> bool:
        """Add a fact to the agent's knowledge; True if it is new."""
        known = ctx.state["knowledge"]
        if fact in known:
            return False
        ctx.agent.set("knowledge", [*known, fact])
        ctx.results.add("knowledge", (ctx.time.tick, ctx.agent.id, fact, source))
        if source < 0:
            await ctx.remember(
                "fact", self.fact_text.get(fact, fact), 0.7, location=ctx.state["position"]
            )
        return True

    async def speak(self, ctx: AgentContext, listener: int, channel: str, place: str) -> None:
        """One utterance to `listener` (LLM), shared facts attached; remembered by both."""
        agent, s = ctx.agent, ctx.state
        other = ctx.population.profiles[listener]
        facts = sorted(s["knowledge"]) if self.cfg.share_facts else []
        hits = await recall(agent.memory, f"news for {other.name}", top_k=2)
        memories = [self.fact_text.get(f, f) for f in facts] + [h.text for h in hits]
        me = agent.profile
        my_name, other_name = plain_name(me.name), plain_name(other.name)
        system = {
            "name": my_name,
            "profile": f"age: {me.age}, occupation: {me.occupation}, personality: {me.personality}",
        }
        out = await ctx.llm.json(
            messages(
                "dialogue_turn",
                system,
                speaker=my_name,
                listener=other_name,
                topic_line=" (a message)",
                relationship=describe_relation(
                    relation(s.get("relationships") or {}, listener, self._tie(ctx, listener))
                ),
                mood=s.get("_emotion") or "calm",
                needs=fmt_needs({k: s[f"{k}_satisfaction"] for k in NEEDS}),
                memories="\n".join(f"- {m}" for m in memories) or "(none)",
                history="(nothing said yet)",
            ),
            DialogueTurn,
            task="dialogue_turn",
            context={
                "speaker": my_name,
                "listener": other_name,
                "topic": None,
                "memories": memories,
                "history": [],
                "turn": 0,
                "max_turns": 1,
                "people": ctx.population.plain_names,  # who a line may name
            },
            seed=self.scenario.seed * 7919 + agent.id * 31 + ctx.time.tick,
            fallback=lambda: DialogueTurn(utterance="Hello!", end=True),
        )
        text = out.utterance
        ctx.send(
            listener,
            "chat",
            {"text": text, "facts": facts, "place": place, "channel": channel, "name": me.name},
        )
        said = (ctx.time.tick, agent.id, listener, place, channel, text, ",".join(facts))
        ctx.results.add("dialogues", (*said, "", 0, out.answer_source))
        agent.set("social_satisfaction", min(1.0, s["social_satisfaction"] + SPEAK_RESTORE))
        told = f"I told {other.name}: {text}"
        await _remember_with(ctx, listener, "dialogue", told, place or None)

    async def _heard(self, ctx: AgentContext, msg: Message) -> None:
        s, p = ctx.state, msg.payload
        ties = dict(ctx.population.friends[ctx.agent.id])
        trust = belief(relation(s.get("relationships") or {}, msg.sender, ties.get(msg.sender)))
        unknown = [f for f in p.get("facts", []) if f not in s["knowledge"]]
        if unknown and ctx.rng.random() < trust:
            for fact in unknown:
                await self.learn(ctx, fact, msg.sender)
        s_val = min(1.0, s["social_satisfaction"] + CHAT_RESTORE)
        ctx.agent.set("social_satisfaction", s_val)
        heard = f"{p.get('name', msg.sender)} told me: {p.get('text', '')}"
        await _remember_with(ctx, msg.sender, "dialogue", heard, p.get("place") or None)

    def _post(self, ctx: AgentContext, friends: list[int]) -> None:
        n = len(ctx.population)
        me = ctx.agent.id
        if self.exposure.echo_chamber:
            readers = ctx.rng.sample(friends, min(self.exposure.audience, len(friends)))
        else:
            readers = [
                r for r in (ctx.rng.randrange(n) for _ in range(self.exposure.audience)) if r != me
            ]
        for topic in self.scenario.topics:
            value = float(ctx.state["attitude"].get(topic.name, 5.0))
            payload = {
                "topic": topic.name,
                "value": value,
                "name": ctx.agent.profile.name,
                "text": stance_text(topic.name, value),
            }
            for reader in sorted(set(readers)):
                ctx.send(reader, "post", payload)

    async def _read(self, ctx: AgentContext, msg: Message) -> None:
        p = msg.payload
        mine = float(ctx.state["attitude"].get(p["topic"], 5.0))
        if self.exposure.echo_chamber and abs(mine - float(p["value"])) > self.exposure.tolerance:
            return
        rels = ctx.state.get("relationships") or {}
        if str(msg.sender) in rels and relation(rels, msg.sender).sentiment < DISLIKED:
            return  # not believed from someone the reader dislikes
        post = f"{p['name']} posted: {p['text']}"
        await _remember_with(ctx, msg.sender, "post", post)
        # Kept for the stance's next weighing: memories of this tick are not searchable yet.
        ctx.state["_exposed"] = [*posts_read(ctx.state)[-READ_KEPT + 1 :], [p["topic"], post]]
