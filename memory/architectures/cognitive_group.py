"""The `cognitive` profile over a group's memory, batched across the group's agents."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from societas.memory.architectures.cognitive import (
    LAYER_NAMES,
    CognitiveState,
    LayerClock,
    MetaReport,
    Strategy,
    Trigger,
    WorkingItem,
    default_attention,
    rules_metacognition,
)
from societas.memory.model.clock import format_time_of_day
from societas.memory.model.records import AddRequest, MemoryHit, SearchRequest
from societas.memory.store.fsutil import write_bytes_atomic

if TYPE_CHECKING:
    from societas.memory.architectures.finmem import BoostLedger
    from societas.memory.architectures.profiles import AgentProfiles
    from societas.memory.model.clock import SimClock
    from societas.memory.policies.habits import HabitTracker
    from societas.memory.store.group_kv import GroupKV
    from societas.memory.store.hot_store import HotStore

Fact = tuple[str, str, str]
FactExtractor = Callable[[list[str]], list[Fact] | Awaitable[list[Fact]]]
BatchSummariser = Callable[[list[list[str]]], list[str] | Awaitable[list[str]]]
# Meta-cognition: the rules version by default; an LLM reflection returns the same Strategy.
MetaCognition = Callable[[MetaReport], Strategy | dict | Awaitable[Strategy | dict]]
TITLES = {"attention": "L2 observations", "consolidation": "L3 consolidation"}
TITLES["metacognition"] = "L4 meta-cognition"


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _when(time: float) -> str:
    return f"day {int(time // 86_400)} {format_time_of_day(time % 86_400)}"


class CognitiveMemory:
    """The cognitive layers of one group, driving its stream memory."""

    def __init__(
        self,
        *,
        clock: SimClock,
        profiles: Callable[[], AgentProfiles],
        kv: GroupKV,
        hot: HotStore,
        boosts: BoostLedger,
        habits: HabitTracker,
        add_many: Callable[[Sequence[AddRequest]], Awaitable[list[int]]],
        summarise: BatchSummariser | None = None,
        extract_facts: FactExtractor = lambda texts: [],
        metacognition: MetaCognition = rules_metacognition,
    ) -> None:
        self.clock = clock
        self.profiles = profiles  # the group's current profiles (a survey swaps them)
        self.kv = kv  # KV values: an agent's `position` for its habits
        self.hot, self.boosts, self.habits = hot, boosts, habits
        self.add_many = add_many
        self.agents: dict[int, CognitiveState] = {}  # each with its agent type's config
        # Summaries of many agents' event batches in one call (an LLM batch), rule-based default.
        self.summarise = summarise or (lambda batches: [default_attention(b) for b in batches])
        self.extract_facts = extract_facts
        self.metacognition = metacognition
        self.recent_observations: dict[int, list[str]] = {}
        self.counters = dict.fromkeys(
            ("raw_events", "observations", "consolidations", "facts", "meta", "meta_fallbacks"), 0
        )

    def state(self, agent_id: int) -> CognitiveState:
        """The agent's cognitive layers; ValueError naming it when its profile is another."""
        self.kv.require_agent(agent_id)
        profiles = self.profiles()
        if not profiles.is_cognitive(agent_id):
            profile = profiles.profile(agent_id)
            raise ValueError(f"agent {agent_id} runs memory profile {profile!r}, not 'cognitive'")
        return self._of(agent_id)

    def _of(self, agent_id: int) -> CognitiveState:
        state = self.agents.get(agent_id)
        if state is None:
            state = self.agents[agent_id] = CognitiveState(self.profiles().cognitive(agent_id))
        return state

    def runs(self, agent_id: int) -> bool:
        """Whether `agent_id` runs the cognitive profile."""
        return self.profiles().is_cognitive(agent_id)

    async def attend_many(self, events: Sequence[tuple[Any, ...]]) -> list[tuple[int, str]]:
        """Raw events (agent, text[, place[, importance]]) in; returns (agent, observation)."""
        now = self.clock.abs_seconds
        due: list[tuple[int, list[str], str]] = []
        for agent_id, text, *rest in events:
            importance = rest[1] if len(rest) > 1 else None
            fired = self.state(agent_id).perceive(text, now, importance)
            if fired is not None:
                due.append((agent_id, *fired))
        self.counters["raw_events"] += len(events)
        habits = self.habits  # repeated actions → procedural memories
        if habits.policy.enabled:
            habits.observe((e[0], e[1], e[2] if len(e) > 2 else self._place(e[0])) for e in events)
        if not due:
            return []
        texts = list(await _maybe(self.summarise([b for _, b, _ in due])))
        if len(texts) != len(due):
            raise ValueError(f"summarise returned {len(texts)} texts for {len(due)} batches")
        for (agent_id, batch, trigger), text in zip(due, texts, strict=True):
            state = self._of(agent_id)
            state.note("attention", now, f"{trigger}, {len(batch)} events", text)
            state.think(text)
        return [(a, t) for (a, _, _), t in zip(due, texts, strict=True)]

    def _place(self, agent_id: int) -> str | None:
        """Where the agent is now (its KV `position`, when the memory config has one)."""
        if "position" not in self.kv.memory_config.attributes:
            return None
        return self.kv.kv_peek(agent_id, "position", None) or None

    async def observed(self, observations: Sequence[tuple[int, str]]) -> None:
        """Count observations now stored, then run each agent's due consolidation and reflection."""
        self.counters["observations"] += len(observations)
        for agent_id, text in observations:
            self.recent_observations.setdefault(agent_id, []).append(text)
        await self._schedules([a for a, _ in observations])

    async def perceive_many(self, events: Sequence[tuple[Any, ...]]) -> list[int]:
        """`attend_many`, then its observations stored in one add_many; returns their memory ids."""
        observations = await self.attend_many(events)
        if not observations:
            return []
        ids = await self.add_many(
            [
                AddRequest(agent_id=a, topic="observation", description=t, type="episodic")
                for a, t in observations
            ]
        )
        await self.observed(observations)
        return ids

    async def _schedules(self, agents: list[int]) -> None:
        """L3 and L4 of each agent, when one of their triggers fires."""
        now = self.clock.abs_seconds
        for agent_id in dict.fromkeys(agents):
            state = self._of(agent_id)
            trigger = state.due("consolidation", now)
            if trigger is not None:
                texts = self.recent_observations.pop(agent_id, [])
                facts = list(await _maybe(self.extract_facts(texts)))
                await self.learn(agent_id, facts)
                state.clocks["consolidation"].ran(now)
                state.consolidations += 1
                self.counters["consolidations"] += 1
                learnt = "; ".join(f"{s} {r} {o}" for s, r, o in facts)
                note = f"{len(facts)} facts from {len(texts)} observations"
                state.note("consolidation", now, trigger, f"{note}: {learnt}" if facts else note)
            trigger = state.due("metacognition", now)
            if trigger is not None:
                await self.reflect(agent_id, trigger)

    async def reflect(self, agent_id: int, trigger: str = "request") -> Strategy:
        """Meta-cognition now: its strategy retunes the agent's attention and consolidation."""
        state, now = self.state(agent_id), self.clock.abs_seconds
        report = state.report(agent_id)
        answer = await _maybe(self.metacognition(report))
        try:
            strategy = answer if isinstance(answer, Strategy) else Strategy.model_validate(answer)
        except ValidationError:  # a model's answer out of bounds: the rules decide (counted)
            strategy = rules_metacognition(report)
            self.counters["meta_fallbacks"] += 1
        changes = state.adopt(strategy)
        state.clocks["metacognition"].ran(now)
        self.counters["meta"] += 1
        plan = "; ".join(changes) if changes else "unchanged"
        state.note("metacognition", now, trigger, f"{strategy.reflection} Strategy: {plan}.")
        return strategy

    async def learn(self, agent_id: int, facts: Sequence[Fact]) -> list[int]:
        """Semantic knowledge: facts as semantic memories and edges of the agent's graph."""
        if not facts:
            return []
        state, now = self.state(agent_id), self.clock.abs_seconds
        for fact in facts:
            for name, value in zip(("subject", "relation", "object"), fact, strict=True):
                if not isinstance(value, str) or not value.strip():
                    raise ValueError(f"fact {name} must be a non-empty string, got {value!r}")
        ids = await self.add_many(
            [
                AddRequest(
                    agent_id=agent_id,
                    topic="fact",
                    description=f"{s} {r} {o}",
                    type="semantic",
                    metadata={"subject": s, "relation": r, "object": o},
                )
                for s, r, o in facts
            ]
        )
        for (subject, relation, obj), memory_id in zip(facts, ids, strict=True):
            state.learn(subject, relation, obj, now, memory_id)
        state.new_facts += len(facts)
        self.counters["facts"] += len(facts)
        return ids

    async def absorb(
        self, requests: Sequence[SearchRequest], results: Sequence[list[MemoryHit]], context: str
    ) -> list[list[MemoryHit]]:
        """Recalled hits into working memory, reconsolidated, with the facts about each query."""
        now = self.clock.abs_seconds
        ledger = self.boosts  # store writes on the tier schedule, not per recall
        out = []
        for r, hits in zip(requests, results, strict=True):
            state = self.state(r.agent_id)
            for h in hits:
                state.hold(h.text, h.score, now, "memory", h)
                if h.tier != "cold":
                    before = ledger.value(h.id, "importance", h.importance)
                    meta = ledger.value(h.id, "metadata", None)
                    meta = json.loads(meta) if meta is not None else h.metadata
                    importance, metadata = state.reconsolidate(before, context, meta)
                    as_json = json.dumps(metadata, sort_keys=True)
                    fields = {"importance": importance, "metadata": as_json}
                    ledger.apply(r.agent_id, h, fields)  # the hot columns and the ranker's bound
                    if h.id in self.hot:
                        self.hot.metadata[h.id] = metadata
            top = max((h.score for h in hits), default=0.0)
            seen = {h.id for h in hits}
            facts = [
                _fact_hit(r.agent_id, f, top)
                for f in state.facts_about(r.query, state.config.facts_per_recall)
                if f[4] not in seen
            ]
            for f in facts:
                state.hold(f.text, top, now, "fact", f)
            out.append([*hits, *facts])
        return out

    async def hold_hits(
        self, agent_id: int, hits: Sequence[MemoryHit], context: str
    ) -> list[MemoryHit]:
        """One agent's recall into working memory; returns what it now holds, strongest first."""
        request = SearchRequest(
            agent_id=agent_id, query=context or "recall", top_k=max(1, len(hits))
        )
        await self.absorb([request], [list(hits)], context)
        return [w.hit for w in self.state(agent_id).working if w.hit is not None]

    def prompt_block(self, agent_id: int) -> str:
        """The working-memory lines a prompt holds (never more than its capacity)."""
        return "\n".join(self.state(agent_id).prompt_block())

    def log_markdown(self, agent_id: int) -> str:
        """The agent's layer logs, strategy and working memory as one Markdown document."""
        state = self.state(agent_id)
        lines = [f"# Cognitive memory of agent {agent_id}", ""]
        for layer in LAYER_NAMES:
            trig = state.triggers[layer].model_dump(exclude_none=True)
            lines += [f"## {TITLES[layer]}", "", f"Trigger now: {trig}", ""]
            entries = [f"- **{_when(t)}** ({why}) {text}" for t, why, text in state.log[layer]]
            lines += [*(entries or ["(none yet)"]), ""]
        lines += ["## Working memory", "", *(f"- {x}" for x in state.prompt_block()), ""]
        return "\n".join(lines)

    def write_logs(self, folder: str | Path) -> list[Path]:
        """Each cognitive agent's `log_markdown` as folder/agent-<id>.md (atomic writes)."""
        paths = []
        for agent_id in sorted(self.agents):
            path = Path(folder) / f"agent-{agent_id}.md"
            write_bytes_atomic(path, self.log_markdown(agent_id).encode())
            paths.append(path)
        return paths

    def get_state(self) -> dict[str, Any]:
        """Every agent's layers as JSON for checkpoints (triggers as retuned, logs, facts)."""
        agents = {}
        for agent_id, st in sorted(self.agents.items()):
            facts = st.fact_graph.edges(data=True) if st.fact_graph is not None else []
            agents[str(agent_id)] = {
                "sensory": list(st.sensory),
                "unattended": list(st.unattended),
                "task": st.task,
                "thoughts": list(st.thoughts),
                "working": [[w.priority, w.time, w.text, w.kind, _dump(w.hit)] for w in st.working],
                "observations": st.observations,
                "counts": [st.new_facts, st.consolidations, st.evictions],
                "triggers": {k: t.model_dump() for k, t in st.triggers.items()},
                "clocks": {k: [c.events, c.inputs, c.peak, c.last] for k, c in st.clocks.items()},
                "log": {k: [list(e) for e in entries] for k, entries in st.log.items()},
                "facts": [[a, d["relation"], b, d["time"], d["memory_id"]] for a, b, d in facts],
            }
        return {
            "version": 2,
            "agents": agents,
            "recent_observations": {str(a): t for a, t in self.recent_observations.items()},
            "counters": dict(self.counters),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Layers as `get_state` wrote them (a resumed run continues where it stopped)."""
        if state.get("version") != 2:
            raise ValueError(f"cognitive state version {state.get('version')!r} is not 2")
        self.agents.clear()
        for key, entry in state["agents"].items():
            st = self._of(int(key))
            st.sensory.extend(entry["sensory"])
            st.unattended.extend(entry["unattended"])
            st.task = entry["task"]
            st.thoughts.extend(entry["thoughts"])
            st.working = [
                WorkingItem(p, t, text, kind, MemoryHit.model_validate(h) if h else None)
                for p, t, text, kind, h in entry["working"]
            ]
            st.observations = int(entry["observations"])
            st.new_facts, st.consolidations, st.evictions = entry["counts"]
            st.triggers = {k: Trigger.model_validate(t) for k, t in entry["triggers"].items()}
            st.clocks = {k: LayerClock(*clock) for k, clock in entry["clocks"].items()}
            for name, entries in entry["log"].items():
                st.log[name].extend(tuple(e) for e in entries)
            for subject, relation, obj, time, memory_id in entry["facts"]:
                st.learn(subject, relation, obj, time, memory_id)
        self.recent_observations = {
            int(a): list(t) for a, t in state["recent_observations"].items()
        }
        self.counters.update(state["counters"])


def _fact_hit(agent_id: int, fact: tuple[str, str, str, float, int], score: float) -> MemoryHit:
    """A fact of the graph as a recalled semantic memory (its stored memory's id)."""
    subject, relation, obj, time, memory_id = fact
    return MemoryHit(
        id=memory_id,
        agent_id=agent_id,
        text=f"{subject} {relation} {obj}",
        topic="fact",
        day=int(time // 86_400),
        t=time % 86_400,
        time=time,
        location=None,
        importance=0.5,
        type="semantic",
        metadata={"subject": subject, "relation": relation, "object": obj},
        score=score,
        tier="graph",
    )


def _dump(hit: MemoryHit | None) -> dict[str, Any] | None:
    return hit.model_dump(mode="json") if hit is not None else None
