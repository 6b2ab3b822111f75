"""Cognition block: a daily thought and emotion (LLM, rows in `thoughts` with their
answer_source), attitude updates after exposure (LLM, staggered over ticks), and reflection
when accumulated importance passes the threshold (Generative Agents). None of it runs every
tick for every agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.agents.blocks.social import posts_read
from societas.agents.cognition import update_thought
from societas.agents.cognition.attitude import N_MEMORIES
from societas.agents.cognition.persona import describe_self, recall
from societas.agents.cognition.preferences import note_preference
from societas.agents.cognition.prompts import messages
from societas.agents.llm.tasks import AttitudeUpdate
from societas.agents.scenario import ScenarioConfig

if TYPE_CHECKING:
    from societas.agents.agent import AgentContext


class CognitionBlock:
    """Thought at `thought_hour`, attitudes every `attitude_every` ticks, reflection."""

    name = "cognition"

    def __init__(self, scenario: ScenarioConfig) -> None:
        self.scenario = scenario
        self.cfg = scenario.cognition

    async def forward(self, ctx: AgentContext) -> None:
        agent, s, cfg, seed = ctx.agent, ctx.state, self.cfg, self.scenario.seed
        hour = ctx.time.hour
        if cfg.thought_hour is not None and 0 <= hour - cfg.thought_hour < ctx.tick_hours:
            out = await update_thought(agent.memory, ctx.llm, seed=seed, writer=ctx.memory_writer())
            s["_emotion"] = out.emotion
            row = (out.thought, out.emotion, float(out.intensity), out.answer_source)
            ctx.results.add("thoughts", (ctx.time.tick, agent.id, *row))
            await agent.refresh("emotion", "emotion_types")
        if (
            self.scenario.topics
            and s.get("_exposed")
            and (ctx.time.tick + agent.id) % cfg.attitude_every == 0
        ):
            for topic in self.scenario.topics:
                await self.attitude(ctx, topic.name)
            s["_exposed"] = []
        if cfg.reflection and ctx.reflector.due(agent.id):
            before = ctx.reflector.accumulated.get(agent.id, 0.0)
            await ctx.reflector.reflect(agent.memory, writer=ctx.memory_writer())
            ctx.event("reflection", f"after importance {before:.2f}")

    async def attitude(self, ctx: AgentContext, topic: str) -> float:
        """Re-evaluate the stance on `topic` from what others said and posted (LLM), read
        with the agent's self-description as the seed's prompt has it.

        Unlike `cognition.update_attitude`, evidence is only others' posts and dialogue, and
        the agent's note of its new stance carries no reason text, so its own earlier
        reasoning ("... most of them against it.") is not read back as somebody's opinion."""
        agent, s = ctx.agent, ctx.state
        current = float(s["attitude"].get(topic, 5.0))
        hits = await recall(agent.memory, topic, top_k=N_MEMORIES, topic="post")
        read = [text for about, text in reversed(posts_read(s)) if about == topic]  # newest first
        texts = [*read, *(h.text for h in hits if h.text not in read)][:N_MEMORIES]
        me = agent.profile
        system = {"name": me.name, "profile": f"age: {me.age}, occupation: {me.occupation}"}
        out = await ctx.llm.json(
            messages(
                "attitude_update",
                system,
                name=me.name,
                topic=topic,
                attitude=f"{current:.1f}",
                self_description=await describe_self(agent.memory),
                memories="\n".join(f"- {t}" for t in texts) or "(none)",
            ),
            AttitudeUpdate,
            task="attitude_update",
            context={
                "name": me.name,
                "topic": topic,
                "attitude": current,
                "recent": texts,
                "profile": {"stubbornness": me.stubbornness},
            },
            seed=self.scenario.seed * 7919 + agent.id * 13 + ctx.time.tick,
            fallback=lambda: AttitudeUpdate(attitude=current, reason="unchanged"),
        )
        if out.answer_source == "fallback":  # no answer: the stance in force and its source stay
            return current
        value = round(float(out.attitude), 4)
        agent.set("attitude", {**s["attitude"], topic: value})
        s["_attitude_source"] = {**(s.get("_attitude_source") or {}), topic: out.answer_source}
        prefs = self.scenario.memory.policies.preferences
        timelines = s.get("preferences") or {}
        new = await note_preference(
            ctx.memory_writer(), agent.memory, prefs, timelines, topic, value
        )
        if new is not None:
            agent.set("preferences", new)
        await ctx.remember("cognition", f"My stance on {topic} is now {value:.1f} of 10.")
        return value
