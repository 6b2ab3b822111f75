"""Cognition block: a daily thought and emotion (LLM), attitude updates after exposure
(LLM, staggered over ticks), and reflection when accumulated importance passes the threshold
(Generative Agents). None of it runs every tick for every agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from societas.agents.cognition import update_attitude, update_thought
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
            out = await update_thought(agent.memory, ctx.llm, seed=seed)
            s["_emotion"] = out.emotion
        if (self.scenario.topics and s.get("_exposed")
                and (ctx.time.tick + agent.id) % cfg.attitude_every == 0):
            for topic in self.scenario.topics:
                await update_attitude(agent.memory, ctx.llm, topic.name, seed=seed,
                                      stubbornness=agent.profile.stubbornness)
            await agent.refresh("attitude")
            s["_exposed"] = False
        if cfg.reflection and ctx.reflector.due(agent.id):
            ids = await ctx.reflector.reflect(agent.memory)
            ctx.event("reflection", f"{len(ids)} insights")
