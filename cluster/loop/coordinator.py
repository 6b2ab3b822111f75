"""The tick loop over groups of agents (no Ray here): the local runner and the Ray runtime
both drive their groups through `Coordinator.run`.

Per tick: step every group concurrently with its inbox; run the tick's conversations; ask
every group for the tick's stats (`finish_tick`); merge position reports; pair agents
at the same place into encounters (whichever groups own them); route every message to the
group owning its recipient, in `Message.sort_key` order; report progress and per-tick stats
to callbacks; call the checkpoint hook every K ticks.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from societas.agents.environment import encounters
from societas.agents.runtime.protocol import GroupHandle, GroupStats, Message, StepResult
from societas.cluster.loop.conversations import ConversationTotals, run_conversations
from societas.cluster.loop.groups import finish_tick


class Progress(BaseModel):
    """What the progress callback gets after each tick."""

    tick: int
    ticks: int
    agents: int
    agent_steps_per_s: float
    llm_requests: int
    llm_tokens: int
    fallbacks: int = Field(0, description="Structured LLM calls that fell back so far.")
    encounters: int
    messages: int
    elapsed_s: float
    eta_s: float


class TickReport(BaseModel):
    """What the stats callback gets after each tick (metrics are derived from this)."""

    tick: int
    seconds: float
    groups: list[GroupStats]
    encounters: int
    messages_routed: int
    agents: int


class RunSummary(BaseModel):
    """Totals of a coordinator run."""

    ticks_run: int
    first_tick: int
    agents: int
    groups: int
    wall_s: float
    agent_steps: int
    agent_steps_per_s: float
    tick_seconds: list[float] = Field(default_factory=list)
    llm_requests: int = 0
    llm_tokens: int = 0
    llm_fallbacks: int = Field(0, description="Structured LLM calls answered by a fallback.")
    encounters: int = 0
    messages: int = 0
    conversations: int = 0
    conversation_turns: int = 0
    cross_group_conversations: int = 0
    memories_total: int = 0
    checkpoints: list[int] = Field(default_factory=list)


Callback = Callable[[Any], Awaitable[None] | None]
CheckpointHook = Callable[[int, Sequence[GroupHandle]], Awaitable[Any] | Any]


async def call_back(fn: Callable[..., Any] | None, *args: Any) -> None:
    if fn is None:
        return
    out = fn(*args)
    if inspect.isawaitable(out):
        await out


class Coordinator:
    """Drives groups through ticks; routing and encounters are deterministic."""

    def __init__(
        self,
        groups: Sequence[GroupHandle],
        *,
        seed: int = 0,
        encounters_enabled: bool = True,
        max_pairs_per_place: int = 50,
        on_progress: Callback | None = None,
        on_tick: Callback | None = None,
        checkpoint_every: int | None = None,
        on_checkpoint: CheckpointHook | None = None,
    ) -> None:
        ids = [g.group_id for g in groups]
        if len(set(ids)) != len(ids):
            raise ValueError(f"group ids must be unique, got {ids}")
        self.groups = sorted(groups, key=lambda g: g.group_id)
        self.seed = seed
        self.encounters_enabled = encounters_enabled
        self.max_pairs_per_place = max_pairs_per_place
        self.on_progress = on_progress
        self.on_tick = on_tick
        self.checkpoint_every = checkpoint_every
        self.on_checkpoint = on_checkpoint
        self.owner: dict[int, int] = {}
        self.pending: dict[int, list[Message]] = {g.group_id: [] for g in self.groups}
        self.talk = ConversationTotals()  # the last tick's conversations

    def route(self, messages: Sequence[Message]) -> dict[int, list[Message]]:
        """Messages per owning group, each list in sort_key order; unknown recipients dropped
        (counted by the caller)."""
        inboxes: dict[int, list[Message]] = {g.group_id: [] for g in self.groups}
        for msg in sorted(messages, key=Message.sort_key):
            owner = self.owner.get(msg.recipient)
            if owner is not None:
                inboxes[owner].append(msg)
        return inboxes

    def encounter_messages(self, positions: dict[int, str], tick: int) -> list[Message]:
        """One 'encounter' message to each side of every encounter of this tick (compact:
        one payload per place, shared, and no validation of the values made here)."""
        places: dict[str, dict[str, Any]] = {}
        out = []
        for e in encounters(positions, tick, self.seed, self.max_pairs_per_place):
            payload = places.get(e.place)
            if payload is None:
                payload = places[e.place] = {"place": e.place}
            for sender, recipient in ((e.b, e.a), (e.a, e.b)):
                out.append(Message.trusted(tick, sender, recipient, "encounter", payload))
        return out

    async def step(self, tick: int) -> tuple[list[StepResult], int, int]:
        """One tick on every group; returns results, encounters and messages routed."""
        results: list[StepResult] = await asyncio.gather(
            *(g.step(tick, self.pending[g.group_id]) for g in self.groups)
        )
        positions: dict[int, str] = {}
        outbox: list[Message] = []
        for group, result in zip(self.groups, results, strict=True):
            for agent_id in result.positions:
                self.owner[agent_id] = group.group_id
            positions.update(result.positions)
            outbox.extend(result.outbox)
        invites = [c for r in results for c in r.conversations]
        self.talk = ConversationTotals()
        if invites:  # conversations complete within the tick, across groups, in sub-rounds
            self.talk = await run_conversations(self.groups, self.owner, invites)
        finished = await asyncio.gather(  # the tick's stats, its conversation rounds included
            *(finish_tick(g, tick, r.stats) for g, r in zip(self.groups, results, strict=True))
        )
        for result, stats in zip(results, finished, strict=True):
            result.stats = stats
        met = self.encounter_messages(positions, tick) if self.encounters_enabled else []
        self.pending = self.route([*outbox, *met])
        return results, len(met) // 2, len(outbox)

    async def run(self, ticks: int, start_tick: int = 0) -> RunSummary:
        """Run ticks [start_tick, start_tick + ticks); groups must be set up already."""
        started = time.perf_counter()
        summary = RunSummary(
            ticks_run=0,
            first_tick=start_tick,
            agents=0,
            groups=len(self.groups),
            wall_s=0.0,
            agent_steps=0,
            agent_steps_per_s=0.0,
        )
        for n, tick in enumerate(range(start_tick, start_tick + ticks), 1):
            t0 = time.perf_counter()
            results, met, routed = await self.step(tick)
            seconds = time.perf_counter() - t0
            stats = [r.stats for r in results if r.stats is not None]  # set by step()
            steps = sum(s.agent_steps for s in stats)
            summary.ticks_run = n
            summary.agents = len(self.owner)
            summary.agent_steps += steps
            summary.tick_seconds.append(seconds)
            summary.llm_requests += sum(s.llm_requests for s in stats)
            summary.llm_tokens += sum(s.llm_tokens for s in stats)
            summary.llm_fallbacks += int(sum(s.extra.get("llm_fallbacks", 0) for s in stats))
            summary.encounters += met
            summary.messages += routed
            summary.conversations += self.talk.accepted
            summary.conversation_turns += self.talk.turns
            summary.cross_group_conversations += self.talk.cross_group
            # hot is a RAM copy of recent warm memories: every memory is warm or cold.
            summary.memories_total = sum(
                s.memories_by_tier.get("warm", 0) + s.memories_by_tier.get("cold", 0) for s in stats
            )
            await call_back(
                self.on_tick,
                TickReport(
                    tick=tick,
                    seconds=seconds,
                    groups=stats,
                    encounters=met,
                    messages_routed=routed,
                    agents=len(self.owner),
                ),
            )
            elapsed = time.perf_counter() - started
            rate = summary.agent_steps / elapsed if elapsed > 0 else 0.0
            await call_back(
                self.on_progress,
                Progress(
                    tick=tick,
                    ticks=ticks,
                    agents=len(self.owner),
                    agent_steps_per_s=rate,
                    llm_requests=summary.llm_requests,
                    llm_tokens=summary.llm_tokens,
                    fallbacks=summary.llm_fallbacks,
                    encounters=met,
                    messages=routed,
                    elapsed_s=elapsed,
                    eta_s=elapsed / n * (ticks - n),
                ),
            )
            if (
                self.checkpoint_every
                and self.on_checkpoint is not None
                and n % self.checkpoint_every == 0
            ):
                await call_back(self.on_checkpoint, tick, self.groups)
                summary.checkpoints.append(tick)
        summary.wall_s = time.perf_counter() - started
        summary.agent_steps_per_s = summary.agent_steps / summary.wall_s if summary.wall_s else 0
        return summary
