"""GroupEngine: one group of agents stepping tick by tick, in process (implements GroupHandle).

It owns a `GroupMemory` (under `RUN_DIR/memory`), an `LLMGateway` (rules by default), its
agents and a results writer. `step` runs the agents' blocks concurrently, `agents_in_flight`
at a time (agents.runtime.stepping), so the memory and gateway coalesce their calls; hot
state goes back to the KV memory in one `update_many` per tick; `finish_tick`, after the
tick's conversation rounds, reports the whole tick's stats. The Ray runtime wraps this
class in an actor; `--local` calls it directly through the same coordinator.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import time
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any, Literal

import psutil

from societas.agents.agent import Agent, AgentContext
from societas.agents.blocks import NEED_KEYS, default_blocks
from societas.agents.blocks.state import hot_keys_of, kept_of
from societas.agents.cognition import PendingMemories, ReflectionConfig, Reflector, summarize
from societas.agents.cognition.prompts import set_folder as set_prompt_folder
from societas.agents.environment import EnvironmentView, SimTime
from societas.agents.experiments import branching, custom, memory_profiles
from societas.agents.experiments.outcomes import OutcomeRecorder
from societas.agents.experiments.schedule import fired as fired_at
from societas.agents.experiments.schedule import ticks_of
from societas.agents.experiments.survey import run_surveys
from societas.agents.llm import LLMGateway
from societas.agents.population import Population, population_for
from societas.agents.rng import AgentRandom
from societas.agents.runtime import memory_policies
from societas.agents.runtime.conversations import ConversationHost
from societas.agents.runtime.group_json import write_group_json
from societas.agents.runtime.hot_state import write_back
from societas.agents.runtime.memory_checks import judge_contradictions
from societas.agents.runtime.protocol import GroupStats, Message, StepResult, TurnReply, TurnRequest
from societas.agents.runtime.results import ResultsWriter, write_window
from societas.agents.runtime.stats import (
    Deltas,
    LoopLagMonitor,
    llm_calls_delta,
    model_deltas,
    task_deltas,
)
from societas.agents.runtime.stepping import checked_in_flight, step_agents
from societas.agents.scenario import Intervention, ScenarioConfig, load_scenario
from societas.memory import GroupMemory
from societas.memory.embedding import Embedder
from societas.memory.policies.importance import give_feedback

Concurrency = Literal["gather", "sequential"]
EVIDENCE_FEEDBACK = 1.0  # feedback each memory gets per reflection it was evidence of


def agent_seed(seed: int, agent_id: int) -> int:
    """The seed of one agent's RNG: independent of the group that runs it."""
    return (seed * 1_000_003 + agent_id) * 2_654_435_761 % 2**63


def memory_checkpoint_dir(directory: str | Path, group_id: int) -> Path:
    """Where a group's checkpoint in `directory` keeps its memory (GroupMemory.restore reads it)."""
    return Path(directory) / f"group-{group_id:04d}-memory"


class GroupEngine:
    """A group of agents with its memory, gateway and results writer."""

    def __init__(
        self,
        scenario: ScenarioConfig | dict[str, Any] | str | Path,
        group_id: int,
        agent_ids: list[int],
        run_dir: str | Path,
        *,
        embedder: Embedder | None = None,
        llm: LLMGateway | None = None,
        concurrency: Concurrency = "gather",
        agents_in_flight: int | None = None,
    ) -> None:
        self.scenario = load_scenario(scenario)
        self.in_flight = checked_in_flight(agents_in_flight, self.scenario.cluster)
        self.group_id = group_id
        self.agent_ids = sorted(agent_ids)
        self.run_dir = Path(run_dir)
        self.concurrency = concurrency
        self._embedder = embedder
        self.llm = llm or LLMGateway(custom.run_llm_config(self.scenario, self.run_dir))
        self._own_llm = llm is None
        self.memory: GroupMemory | None = None
        self.population: Population | None = None
        self.agents: dict[int, Agent] = {}
        self.events_at: dict[int, list[tuple[Intervention, set[int]]]] = defaultdict(list)
        self.danger = False
        self.reflector = Reflector(
            self.llm, ReflectionConfig(threshold=self.scenario.cognition.reflection_threshold)
        )
        self.reflector.on_insight = self._insight
        cog = self.scenario.cognition  # memories of a tick are rated in batches, then stored
        self.pending = PendingMemories(
            self.llm, self.reflector, cog.fixed_importance, self.scenario.seed
        )
        self.pending.on_rated = self._rated
        self.talk = ConversationHost(self)
        self.now: SimTime | None = None
        self._open_tick: int | None = None
        self._stepped: tuple[int, float] = (0, 0.0)  # the open tick's messages out, seconds
        self.env: EnvironmentView | None = None
        res = self.scenario.results
        self.results = ResultsWriter(self.run_dir, group_id, res.flush_every, res.compression)
        self.outcomes = OutcomeRecorder(self.scenario)  # the researcher's outcomes, baseline
        self.deltas = Deltas()  # running totals -> per-tick figures, each reported once
        self._tick_reports: list[dict[str, int]] = []  # memory end_tick reports, this tick
        self._evidence: list[int] = []  # evidence of this flush's reflections: feedback
        self.loop_lag = LoopLagMonitor()
        self._closed = False

    # ------------------------------------------------------------------ lifecycle
    async def setup(self) -> None:
        """Generate the population, register this group's agents in memory, build agents."""
        sc = self.scenario
        self.population = pop = population_for(sc)
        self.reflector.people = pop.plain_names
        mem_cfg = sc.memory.model_copy(update={"group_id": self.group_id})
        self.memory = GroupMemory(
            mem_cfg,
            custom.memory_config_of(sc),  # built-in + the scenario's attributes
            root=self.run_dir / "memory",
            embedder=self._embedder,
        )
        self._wire_memory()
        profiles = {i: pop.profiles[i].kv() for i in self.agent_ids}
        for i in self.agent_ids:
            profiles[i]["consumption"] = round(
                sc.economy.consumption_propensity * profiles[i]["income"], 2
            )
        await self.memory.add_agents(profiles)
        memory_profiles.wire(self.memory, self.llm, sc.seed)  # cognitive attention via the LLM
        memory_profiles.write_agent_profiles(self.run_dir, self.group_id, self.memory)
        blocks = default_blocks(sc) + custom.import_blocks(sc)  # yours after the built-ins
        hot = hot_keys_of() + custom.custom_keys(sc)
        kept = kept_of()
        for i in self.agent_ids:
            view = self.memory.agent(i)
            state = {k: self.memory.kv_get(i, k) for k in hot}
            rng = AgentRandom(agent_seed(sc.seed, i))
            self.agents[i] = Agent(pop.profiles[i], view, blocks, rng, state, kept)
        mine = set(self.agent_ids)
        for n, iv in enumerate(sc.interventions):
            chosen = pop.select(iv.select, n, sc.seed) & mine
            for at in ticks_of(iv, sc):  # once, or again every N ticks
                self.events_at[at].append((iv, chosen))
        self.loop_lag.start()

    async def close(self) -> None:
        """Flush results, close memory and the gateway (idempotent)."""
        if self._closed:
            return
        self._closed = True
        await self._finish_open()
        await self.loop_lag.stop()
        self.results.flush()
        if self.memory is not None:
            if self.memory.cognition is not None:  # the layers' logs, one Markdown per agent
                logs = self.run_dir / "memory_logs"
                await asyncio.to_thread(self.memory.cognition.write_logs, logs)
            await self.memory.flush()
            await self.memory.close()
        if self._own_llm:
            await self.llm.aclose()

    # ------------------------------------------------------------------ tick
    async def step(self, tick: int, inbox: list[Message]) -> StepResult:
        """Run one tick for every agent of the group and report outbox, positions, stats."""
        assert self.memory is not None and self.population is not None, "call setup() first"
        started = time.perf_counter()
        await self._finish_open()  # a driver that never called finish_tick
        sc = self.scenario
        set_prompt_folder(sc.prompts)  # this task's templates: the scenario's folder
        now = SimTime.of(tick, sc.tick_seconds, sc.start_hour)
        self.memory.clock.set(now.day, now.t)
        fired = fired_at(self, tick)  # this tick's interventions and whom they reach now
        self.outcomes.start(self, tick, fired)  # baseline and treated rows, before them
        events_by_agent: dict[int, list[Intervention]] = defaultdict(list)
        for iv, selected in fired:
            if iv.kind == "event" and iv.danger:
                self.danger = True
            if iv.kind == "event" and iv.all_clear:
                self.danger = False
            for agent_id in sorted(selected):
                if iv.kind == "set":
                    for key, value in (iv.values or {}).items():
                        self._set(agent_id, key, value)
                else:
                    events_by_agent[agent_id].append(iv)
        inbox_by_agent: dict[int, list[Message]] = defaultdict(list)
        for msg in sorted(inbox, key=Message.sort_key):
            if msg.recipient in self.agents:
                inbox_by_agent[msg.recipient].append(msg)
        self.now = now
        self.env = env = EnvironmentView(self.population.town, now, self.danger)
        outbox: list[Message] = []
        contexts = [
            AgentContext(
                agent=agent,
                time=now,
                env=env,
                llm=self.llm,
                scenario=sc,
                population=self.population,
                results=self.results,
                reflector=self.reflector,
                outbox=outbox,
                inbox=inbox_by_agent.get(i, []),
                events=events_by_agent.get(i, []),
                writer=self.pending,
            )
            for i, agent in self.agents.items()
        ]
        await step_agents(contexts, self.in_flight if self.concurrency == "gather" else 1)
        await self.flush_memories(tick * 64)
        await self._write_back()
        if sc.surveys:  # scheduled surveys of this tick, on the state just written
            await run_surveys(self, tick, now)
        self._tick_reports.append(await self.memory.end_tick())  # tiers and memory policies
        self._record(tick)
        outbox.sort(key=Message.sort_key)
        self._open_tick = tick  # closed by finish_tick: conversation rounds still add rows
        self._stepped = (len(outbox), time.perf_counter() - started)
        return StepResult(
            outbox=outbox,
            positions={i: a.state["position"] for i, a in self.agents.items()},
            conversations=self.talk.invitations(tick),
        )

    async def finish_tick(self, tick: int) -> GroupStats:
        """The tick's stats (its conversation rounds included) and `llm` row; ends its window."""
        if self._open_tick != tick or self.memory is None:
            raise RuntimeError(
                f"group {self.group_id}: finish_tick({tick}), open {self._open_tick}"
            )
        stats = self._stats(tick, *self._stepped, await self.memory.tier_counts())  # `llm` row
        reports, self._tick_reports = self._tick_reports, []
        row = memory_policies.row(tick, self.group_id, self.deltas, self.memory, reports)
        self.results.add("memory_policies", row)
        window = self.results.end_tick(tick)  # after the row: the window may be due
        if window is not None:
            await asyncio.to_thread(write_window, window)  # Parquet encoding off the loop
        self._open_tick = None
        return stats

    def abandon_tick(self) -> None:
        """Forget a tick cut short by a stop: `close` does not finish it (no more LLM calls);
        the run resumes from a checkpoint taken before it."""
        self._open_tick = None
        self._tick_reports = []

    async def _finish_open(self) -> None:
        """Finish a tick the driver left open (its stats are not reported; its rows are)."""
        if self._open_tick is not None and self.memory is not None:
            await self.finish_tick(self._open_tick)

    async def converse_round(self, requests: list[TurnRequest]) -> list[TurnReply]:
        """One sub-round of the conversations the driver routed to this group's agents."""
        return await self.talk.round(requests)

    async def flush_memories(self, salt: int) -> None:
        """Rate the group's pending memories in batched LLM calls and store them."""
        assert self.memory is not None
        await self.pending.flush(self.memory, salt)
        evidence, self._evidence = self._evidence, []
        if evidence and self.memory.config.policies.importance.enabled:
            await self._feedback(evidence)

    async def _feedback(self, evidence: list[int]) -> None:
        """Positive feedback to the memories that were evidence of a reflection (those still
        hot or warm and unexpired: cold rows are read-only), read by importance recomputation."""
        memory = self.memory
        assert memory is not None
        ids = sorted(set(evidence))
        warm = await memory.store.retrieve([i for i in ids if i not in memory.hot])
        now, expiring = memory.clock.abs_seconds, memory.expiring
        live = [
            i for i in ids if (i in memory.hot or i in warm) and expiring.get(i, math.inf) > now
        ]
        if live:
            await give_feedback(memory, dict.fromkeys(live, EVIDENCE_FEEDBACK))

    def _insight(
        self, agent_id: int, memory_id: int, text: str, evidence: list[int], source: str
    ) -> None:
        tick = self.now.tick if self.now is not None else 0
        row = (tick, agent_id, memory_id, text, ",".join(map(str, evidence)), source)
        self.results.add("reflections", row)
        self._evidence.extend(evidence)

    def _rated(self, agent_id: int, memory_id: int, topic: str, imp: float, source: str) -> None:
        """A memory's rated importance and where the rating came from (`importance` table)."""
        tick = self.now.tick if self.now is not None else 0
        self.results.add("importance", (tick, agent_id, memory_id, topic, float(imp), source))

    def _set(self, agent_id: int, key: str, value: Any) -> None:
        agent = self.agents[agent_id]
        assert self.memory is not None
        self.memory.check_update(agent_id, key, value, "replace")  # type errors name the key
        agent.set(key, value)
        if key == "attitude":  # the stances are the scenario's now, no model's answer
            agent.state.pop("_attitude_source", None)

    async def _write_back(self) -> None:
        """Every agent's changed hot state in one batched, validated KV write."""
        assert self.memory is not None
        await write_back(self.agents, self.memory)

    def _record(self, tick: int) -> None:
        """Per-agent rows of this tick: state, needs, attitudes."""
        add, town = self.results.add, self.population.town  # type: ignore[union-attr]
        topics = [t.name for t in self.scenario.topics]
        for i, a in self.agents.items():
            s = a.state
            pos = s["position"]
            add(
                "agent_state",
                (
                    tick,
                    i,
                    pos,
                    town.kind_of(pos),
                    s["activity"],
                    s["category"],
                    s["current_need"],
                    s["currency"],
                    s["income"],
                    s["consumption"],
                    s["work_hours"],
                    s["worked_today"],
                    s["transfers"],
                    s["evacuating"],
                    s.get("_emotion", ""),
                ),
            )
            n = [s[key] for key in NEED_KEYS.values()]
            add("needs", (tick, i, n[1], n[2], n[0], n[3], s["current_need"]))
            sources = s.get("_attitude_source") or {}
            for topic in topics:
                value = float(s["attitude"].get(topic, 5.0))
                add("attitudes", (tick, i, topic, value, sources.get(topic, "")))
        self.outcomes.end(self, tick)

    def _stats(
        self, tick: int, messages_out: int, seconds: float, tiers: dict[str, int]
    ) -> GroupStats:
        """This tick's figures (deltas of the running totals) and its `llm` results row."""
        assert self.memory is not None
        d = self.deltas
        models = self.llm.accounting.models.values()
        req = d("llm.requests", sum(m.requests for m in models))
        pt = d("llm.prompt_tokens", sum(m.prompt_tokens for m in models))
        ct = d("llm.completion_tokens", sum(m.completion_tokens for m in models))
        mem = d.memory(self.memory.counters)
        adds = mem.get("adds", 0)
        self.results.add("llm", (tick, self.group_id, req, pt, ct, adds))
        calls = llm_calls_delta(d, self.llm.accounting)
        events = self.llm.accounting.events
        fallbacks = d("llm.fallbacks", events["json.fallback"] + events["json.failed"])
        return GroupStats(
            group_id=self.group_id,
            tick=tick,
            agent_steps=len(self.agents),
            step_seconds=seconds,
            llm_requests=req,
            llm_tokens=pt + ct,
            llm_errors=sum(c.errors for c in calls),
            embeddings=mem.get("embedded_texts", 0),
            vector_upserts=mem.get("vector_upserts", 0),
            vector_queries=mem.get("vector_queries", 0),
            memories_by_tier=tiers,
            messages_out=messages_out,
            rss_bytes=psutil.Process(os.getpid()).memory_info().rss,
            extra={"memories_added": float(adds), "llm_fallbacks": float(fallbacks)},
            llm_calls=calls,
            loop_lag=self.loop_lag.drain(),
            llm_tasks=task_deltas(d, self.llm.accounting.snapshot()["tasks"]),
            llm_models=model_deltas(d, self.llm.accounting),
            llm_stop=self.llm.stop.info() if self.llm.stop is not None else None,
        )

    # ------------------------------------------------------------------ checkpoints
    async def checkpoint(self, directory: str) -> dict[str, Any]:
        """Write agent hot state, RNG states and reflection accumulators as JSON (the memory
        stream and vectors stay where the memory persists them)."""
        await self._finish_open()
        await self._write_back()
        self.results.flush()
        assert self.memory is not None
        await self.memory.flush()
        head = {
            "group_id": self.group_id,
            "danger": self.danger,
            "reflection": self.reflector.get_state(),
            "unreported": branching.unreported_totals(self),  # reported by the next tick
        }
        path = Path(directory) / f"group-{self.group_id:04d}.json"
        states = {i: a.get_state for i, a in self.agents.items()}  # encoded one at a time
        await asyncio.to_thread(write_group_json, path, head, states)
        memory = await self.memory.checkpoint(self._memory_checkpoint(directory))
        return {
            "group_id": self.group_id,
            "file": path.name,
            "agents": len(self.agents),
            "memory": memory,
        }

    def _wire_memory(self) -> None:
        """What the run gives its group memory: LLM summaries and contradiction judge, and
        friend lists read from the population, not copied per agent (memory.group_kv)."""
        assert self.memory is not None and self.population is not None
        seed, friends = self.scenario.seed, self.population.friends
        self.memory.summarizer = partial(summarize, self.llm, seed=seed)
        self.memory.contradiction_judge = partial(judge_contradictions, self.llm, seed=seed)
        self.memory.set_kv_default("social_network", lambda i: [[f, w] for f, w in friends[i]])

    def _memory_checkpoint(self, directory: str) -> Path:
        return memory_checkpoint_dir(directory, self.group_id)

    async def restore(self, directory: str) -> None:
        """Load what `checkpoint` wrote (call after `setup`)."""
        path = Path(directory) / f"group-{self.group_id:04d}.json"
        data = json.loads(await asyncio.to_thread(path.read_text))
        self.danger = bool(data["danger"])
        for key, entry in data["agents"].items():
            self.agents[int(key)].set_state(entry)
        self.reflector.set_state(data["reflection"])
        await self._restore_memory(directory)
        branching.carry_over(self, data.get("unreported", {}))
        await self._write_back()

    async def _restore_memory(self, directory: str) -> None:
        """Swap in the group memory as checkpointed (KV, hot, warm vectors, cold parts)."""
        assert self.memory is not None
        source = self._memory_checkpoint(directory)
        if not (source / "manifest.json").exists():
            raise FileNotFoundError(
                f"checkpoint {directory!r} has no memory for group {self.group_id} ({source.name})"
            )
        embedder = self.memory.embedder
        await self.memory.close()
        root = self.run_dir / "memory" / f"restored-{Path(directory).name}-g{self.group_id:04d}"
        if root.exists():  # restored before from this checkpoint: derived state, rebuilt
            await asyncio.to_thread(shutil.rmtree, root)
        self.memory = await GroupMemory.restore(
            source, root, memory_config=custom.memory_config_of(self.scenario), embedder=embedder
        )
        self._wire_memory()
        memory_profiles.wire(self.memory, self.llm, self.scenario.seed)
        for agent_id, agent in self.agents.items():
            agent.memory = self.memory.agent(agent_id)
        self.deltas.rebase("mem.", self.memory.counters)  # its counters start afresh
        self.deltas.rebase(memory_policies.PREFIX, memory_policies.totals(self.memory))
