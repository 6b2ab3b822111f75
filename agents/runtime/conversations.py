"""A group's side of routed conversations (Generative Agents dialogue across groups).

During its step an agent may ask someone it met to talk (`SocialBlock` leaves an invitation
in its scratch state); `invitations` turns them into 'invite' requests for the driver. The
driver routes every step of every conversation to the group owning the acting agent, in
sub-rounds of the same tick (`GroupEngine.converse_round`): the invitee accepts unless it is
asleep or dislikes the one asking (`accepts`), the two alternate turns until one ends it or
the turn limit, then each side concludes: it remembers its own summary (importance rated),
updates its relationship to the other, believes the news it heard as far as it trusts the
speaker, and reacts to it next tick.

Randomness here is drawn from RNGs seeded by (seed, conversation, agent, step), never from
the agents' own RNGs, so it does not depend on how agents are split into groups.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from societas.agents.agent import Agent, AgentContext
from societas.agents.blocks.plan import NEWS, me
from societas.agents.blocks.social import CHAT_RESTORE, INVITE, SocialBlock
from societas.agents.cognition.conversation import (
    about,
    remember_conversation,
    speak,
    summarize_conversation,
)
from societas.agents.cognition.relationships import (
    DISLIKED,
    Relation,
    after_conversation,
    belief,
    relation,
    stance_agreement,
)
from societas.agents.runtime.protocol import DialogueLine, TurnReply, TurnRequest
from societas.agents.runtime.stepping import run_all

if TYPE_CHECKING:
    from societas.agents.runtime.engine import GroupEngine


def accepts(rel: Relation, asleep: bool) -> bool:
    """Whether the invitee says yes: awake, and not disliking the one who asks (whether to
    talk at all was the initiator's decision, as in Generative Agents)."""
    return not asleep and rel.sentiment >= DISLIKED


class ConversationHost:
    """Answers the conversation steps routed to this group's agents."""

    def __init__(self, engine: GroupEngine) -> None:
        self.engine = engine
        self.rounds = 0  # sub-rounds in the current tick (salts the importance batch seed)
        # (conversation, speaker) -> what the speaker retrieved about the other and the
        # topic: its memories do not change during the conversation, so one search serves
        # all its turns (summaries are stored only when the conversation ends).
        self.retrieved: dict[tuple[str, int], list[str]] = {}

    def invitations(self, tick: int) -> list[TurnRequest]:
        """The invitations the group's agents made this tick, as 'invite' requests."""
        out = []
        max_turns = self.engine.scenario.cognition.conversation_max_turns
        for agent_id, agent in sorted(self.engine.agents.items()):
            invite = agent.state.pop(INVITE, None)
            if invite is None:
                continue
            partner, place, topic = invite
            out.append(
                TurnRequest(
                    conversation_id=f"{tick}-{agent_id}-{partner}",
                    tick=tick,
                    kind="invite",
                    speaker=partner,
                    listener=agent_id,
                    initiator=agent_id,
                    max_turns=max_turns,
                    topic=topic,
                    place=place,
                )
            )
        self.rounds = 0
        self.retrieved = {}
        return out

    async def round(self, requests: list[TurnRequest]) -> list[TurnReply]:
        """Answer one sub-round's requests concurrently, then store their memories."""
        ordered = sorted(requests, key=TurnRequest.sort_key)
        replies = await run_all([self._one(r) for r in ordered])
        self.rounds += 1
        tick = ordered[0].tick if ordered else 0
        await self.engine.flush_memories(tick * 64 + self.rounds)
        return replies

    def _context(self, agent: Agent, tick: int) -> AgentContext:
        eng = self.engine
        assert eng.population is not None and eng.now is not None and eng.env is not None
        return AgentContext(
            agent=agent,
            time=eng.now,
            env=eng.env,
            llm=eng.llm,
            scenario=eng.scenario,
            population=eng.population,
            results=eng.results,
            reflector=eng.reflector,
            outbox=[],
            writer=eng.pending,
        )

    def _rng(self, r: TurnRequest) -> random.Random:
        return random.Random(
            f"{self.engine.scenario.seed}:{r.conversation_id}:{r.speaker}:{r.kind}"
        )

    async def _one(self, r: TurnRequest) -> TurnReply:
        agent = self.engine.agents.get(r.speaker)
        if agent is None:  # routed to the wrong group: refuse rather than invent an agent
            return TurnReply(
                conversation_id=r.conversation_id, speaker=r.speaker, kind=r.kind, end=True
            )
        ctx = self._context(agent, r.tick)
        if r.kind == "invite":
            return await self._invite(ctx, r)
        if r.kind == "turn":
            return await self._turn(ctx, r)
        await self._conclude(ctx, r)
        return TurnReply(conversation_id=r.conversation_id, speaker=r.speaker, kind=r.kind)

    def _relation(self, ctx: AgentContext, other: int) -> Relation:
        ties = dict(ctx.population.friends[ctx.agent.id])
        return relation(ctx.state.get("relationships") or {}, other, ties.get(other))

    async def _invite(self, ctx: AgentContext, r: TurnRequest) -> TurnReply:
        yes = accepts(self._relation(ctx, r.listener), ctx.state["category"] == "sleep")
        return TurnReply(
            conversation_id=r.conversation_id, speaker=r.speaker, kind="invite", end=not yes
        )

    async def _turn(self, ctx: AgentContext, r: TurnRequest) -> TurnReply:
        agent, s, sc = ctx.agent, ctx.state, ctx.scenario
        other = ctx.population.profiles[r.listener].name
        facts = sorted(s["knowledge"]) if sc.social.share_facts else []
        fact_text = {f.id: f.text for f in sc.facts}
        p = me(ctx)
        history = [(line.name, line.text) for line in r.history]
        key = (r.conversation_id, agent.id)
        if key not in self.retrieved:
            sessions = sc.memory.policies.sessions.enabled
            self.retrieved[key] = await about(agent.memory, other, r.topic, sessions)
        out = await speak(
            ctx.llm,
            agent.memory,
            p,
            other,
            self._relation(ctx, r.listener),
            r.topic,
            history,
            r.turn,
            r.max_turns,
            known=[fact_text.get(f, f) for f in facts],
            seed=sc.seed * 1_000_003 + r.tick,
            retrieved=self.retrieved[key],
            people=ctx.population.plain_names,
        )
        row = (r.tick, agent.id, r.listener, r.place, "encounter", out.utterance, ",".join(facts))
        ctx.results.add("dialogues", (*row, r.conversation_id, r.turn, out.answer_source))
        line = DialogueLine(
            speaker=agent.id,
            name=p.name,
            text=out.utterance,
            facts=facts,
            attitudes={k: float(v) for k, v in (s.get("attitude") or {}).items()},
        )
        end = out.end or r.turn + 1 >= r.max_turns
        return TurnReply(
            conversation_id=r.conversation_id, speaker=agent.id, kind="turn", line=line, end=end
        )

    async def _conclude(self, ctx: AgentContext, r: TurnRequest) -> None:
        agent, s, sc = ctx.agent, ctx.state, ctx.scenario
        other = r.listener
        heard = [line for line in r.history if line.speaker == other]
        rel = self._relation(ctx, other)
        p = me(ctx)
        theirs = heard[-1].attitudes if heard else {}
        agreement = stance_agreement(s.get("attitude") or {}, theirs)
        other_name = ctx.population.profiles[other].name
        history = [(line.name, line.text) for line in r.history]
        summary = await summarize_conversation(
            ctx.llm,
            p,
            other_name,
            rel,
            history,
            r.topic,
            r.place,
            agreement,
            seed=sc.seed + r.tick,
            people=ctx.population.plain_names,
        )
        said = [(line.name, line.text) for line in heard]  # linked in order (memory.temporal)
        assert self.engine.memory is not None, "a conversation is remembered by a group memory"
        await remember_conversation(
            ctx.memory_writer(),
            self.engine.memory,
            agent.memory,
            r.conversation_id,
            summary.summary,
            said,
            r.place or None,
            other=other_name,
            topic=r.topic,
            history=history,
            tone=summary.tone,
            involved=(other,),
        )
        new = after_conversation(rel, summary.tone, len(r.history), r.tick)
        rels = {**(s.get("relationships") or {}), str(other): new.model_dump()}
        agent.set("relationships", rels)
        row = (r.tick, agent.id, other, new.closeness, new.sentiment, new.talks, r.conversation_id)
        ctx.results.add("relationships", row)
        agent.set("social_satisfaction", min(1.0, s["social_satisfaction"] + CHAT_RESTORE))
        unknown = sorted({f for line in heard for f in line.facts} - set(s["knowledge"]))
        if unknown and self._rng(r).random() < belief(rel):
            social = next(b for b in agent.blocks if isinstance(b, SocialBlock))
            fact_text = {f.id: f.text for f in sc.facts}
            for fact in unknown:
                await social.learn(ctx, fact, other)
                if sc.cognition.react_to_news:
                    news = f"{other_name} told me: {fact_text.get(fact, fact)}"
                    s[NEWS] = [*(s.get(NEWS) or []), news]
