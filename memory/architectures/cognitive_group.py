"""The `cognitive` profile over a group's memory: perception into stream memories, recall into
working memory with reconsolidation, facts and meta-cognition on their schedules, each
batched across the group's agents (see memory.architectures.cognitive for the layers).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from societas.memory.architectures.cognitive import CognitiveLayers, CognitiveState, WorkingItem
from societas.memory.model.records import AddRequest, MemoryHit, SearchRequest

if TYPE_CHECKING:
    from societas.memory.group import GroupMemory

Fact = tuple[str, str, str]
FactExtractor = Callable[[list[str]], list[Fact] | Awaitable[list[Fact]]]
BatchSummariser = Callable[[list[list[str]]], list[str] | Awaitable[list[str]]]
MetaCognition = Callable[[CognitiveState], int | None]


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _no_facts(texts: list[str]) -> list[Fact]:
    return []


def _keep_attention(state: CognitiveState) -> int | None:
    return None


class CognitiveMemory:
    """The cognitive layers of one group, driving its stream memory."""

    def __init__(
        self,
        group: GroupMemory,
        summarise: BatchSummariser | None = None,
        extract_facts: FactExtractor = _no_facts,
        metacognition: MetaCognition = _keep_attention,
    ) -> None:
        self.group = group
        self.layers = CognitiveLayers(group.config.cognitive, config_of=group.profiles.cognitive)
        # Summaries of many agents' event batches in one call (an LLM batch), rule-based default.
        self.summarise = summarise or (lambda batches: [self.layers.summarise(b) for b in batches])
        self.extract_facts = extract_facts
        self.metacognition = metacognition
        self.recent_observations: dict[int, list[str]] = {}
        self.counters = {"raw_events": 0, "observations": 0, "facts": 0, "meta": 0}

    def state(self, agent_id: int) -> CognitiveState:
        """The agent's cognitive layers; ValueError naming it when its profile is another."""
        self.group.require_agent(agent_id)
        if not self.group.profiles.is_cognitive(agent_id):
            profile = self.group.profiles.profile(agent_id)
            raise ValueError(f"agent {agent_id} runs memory profile {profile!r}, not 'cognitive'")
        return self.layers.of(agent_id)

    def runs(self, agent_id: int) -> bool:
        """Whether `agent_id` runs the cognitive profile."""
        return self.group.profiles.is_cognitive(agent_id)

    async def attend_many(self, events: Sequence[tuple[Any, ...]]) -> list[tuple[int, str]]:
        """Raw events (agent, text[, place]) into the sensory buffers; every N per agent become
        one observation (summaries of all due batches in one call). Returns (agent,
        observation), unstored. Without a place, habits take the agent's KV `position`."""
        due: list[tuple[int, list[str]]] = []
        for agent_id, text, *_ in events:
            batch = self.state(agent_id).perceive(text)
            if batch is not None:
                due.append((agent_id, batch))
        self.counters["raw_events"] += len(events)
        habits = self.group.policy_state.habits  # repeated actions → procedural memories
        if habits.policy.enabled:
            habits.observe((e[0], e[1], e[2] if len(e) > 2 else self._place(e[0])) for e in events)
        if not due:
            return []
        texts = list(await _maybe(self.summarise([b for _, b in due])))
        if len(texts) != len(due):
            raise ValueError(f"summarise returned {len(texts)} texts for {len(due)} batches")
        return [(a, t) for (a, _), t in zip(due, texts, strict=True)]

    def _place(self, agent_id: int) -> str | None:
        """Where the agent is now (its KV `position`, when the memory config has one)."""
        if "position" not in self.group.memory_config.attributes:
            return None
        return self.group.kv_peek(agent_id, "position", None) or None

    async def observed(self, observations: Sequence[tuple[int, str]]) -> None:
        """Observations now stored: count them, then semantic and meta passes when due."""
        self.counters["observations"] += len(observations)
        for agent_id, text in observations:
            self.recent_observations.setdefault(agent_id, []).append(text)
        await self._schedules([a for a, _ in observations])

    async def perceive_many(self, events: Sequence[tuple[Any, ...]]) -> list[int]:
        """Raw events into the sensory buffers; every N per agent become one observation
        memory (batched summary, one add_many). Returns the new memory ids."""
        observations = await self.attend_many(events)
        if not observations:
            return []
        ids = await self.group.add_many(
            [
                AddRequest(agent_id=a, topic="observation", description=t, type="episodic")
                for a, t in observations
            ]
        )
        await self.observed(observations)
        return ids

    async def _schedules(self, agents: list[int]) -> None:
        """Semantic consolidation every M observations; meta-cognition every K."""
        for agent_id in dict.fromkeys(agents):
            state = self.layers.of(agent_id)
            if state.due_consolidation():
                texts = self.recent_observations.pop(agent_id, [])
                facts = list(await _maybe(self.extract_facts(texts)))
                await self.learn(agent_id, facts)
            if state.due_metacognition():
                self.counters["meta"] += 1
                every = self.metacognition(state)
                if every is not None:
                    state.adjust_attention(every)

    async def learn(self, agent_id: int, facts: Sequence[Fact]) -> list[int]:
        """Semantic knowledge: facts into the agent's graph and as semantic memories."""
        if not facts:
            return []
        state, now = self.state(agent_id), self.group.clock.abs_seconds
        for subject, relation, obj in facts:
            for name, value in (("subject", subject), ("relation", relation), ("object", obj)):
                if not isinstance(value, str) or not value.strip():
                    raise ValueError(f"fact {name} must be a non-empty string, got {value!r}")
            state.learn(subject, relation, obj, now)
        self.counters["facts"] += len(facts)
        return await self.group.add_many(
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

    async def recall_many(
        self, requests: Sequence[SearchRequest], context: str = "recall"
    ) -> list[list[MemoryHit]]:
        """Search, put the hits into each agent's working memory (capacity-bounded) and
        reconsolidate them: importance nudged up, the recall context kept in metadata."""
        results = await self.group.search_many(requests)
        await self.absorb(requests, results, context)
        return results

    async def absorb(
        self, requests: Sequence[SearchRequest], results: Sequence[list[MemoryHit]], context: str
    ) -> None:
        """Recalled hits into working memory, reconsolidated (see `recall_many`)."""
        now = self.group.clock.abs_seconds
        ledger = self.group.boosts  # store writes on the tier schedule, not per recall
        for r, hits in zip(requests, results, strict=True):
            state = self.state(r.agent_id)
            for h in hits:
                state.hold(h.text, h.score, now, "memory", h)
                if h.tier != "cold":
                    before = ledger.value(h.id, "importance", h.importance)
                    meta = ledger.value(h.id, "metadata", None)
                    meta = json.loads(meta) if meta is not None else h.metadata
                    importance, metadata = state.reconsolidate(before, context, meta)
                    fields = {"importance": importance, "metadata": _json(metadata)}
                    ledger.patch(self.group, r.agent_id, h.id, fields)
                    layer = ledger.value(h.id, "layer", h.layer)
                    since = ledger.value(h.id, "layer_since", h.layer_since)
                    self.group.hot.set_layer(h.id, layer, importance, since)
                    if h.id in self.group.hot:
                        self.group.hot.metadata[h.id] = metadata
                    agent_max = self.group.max_importance
                    if importance > agent_max.get(r.agent_id, -1.0):
                        agent_max[r.agent_id] = importance  # keeps the ranker's bound valid

    async def hold_hits(
        self, agent_id: int, hits: Sequence[MemoryHit], context: str
    ) -> list[MemoryHit]:
        """One agent's recall into working memory (see `absorb`); returns the memories working
        memory now holds, strongest first: what a prompt may show (at most its capacity)."""
        request = SearchRequest(
            agent_id=agent_id, query=context or "recall", top_k=max(1, len(hits))
        )
        await self.absorb([request], [list(hits)], context)
        return [w.hit for w in self.state(agent_id).working if w.hit is not None]

    def get_state(self) -> dict[str, Any]:
        """Every agent's layers as JSON (checkpoints): buffers, working memory, facts."""
        agents = {}
        for agent_id, st in sorted(self.layers.agents.items()):
            facts = st.fact_graph.edges(data=True) if st.fact_graph is not None else []
            agents[str(agent_id)] = {
                "sensory": list(st.sensory),
                "unattended": list(st.unattended),
                "working": [[w.priority, w.time, w.text, w.kind, _dump(w.hit)] for w in st.working],
                "observations": st.observations,
                "attention_every": st.attention_every,
                "facts": [[a, d["relation"], b, d["time"]] for a, b, d in facts],
            }
        return {
            "version": 1,
            "agents": agents,
            "recent_observations": {str(a): t for a, t in self.recent_observations.items()},
            "counters": dict(self.counters),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Layers as `get_state` wrote them (a resumed run continues where it stopped)."""
        if state.get("version") != 1:
            raise ValueError(f"cognitive state version {state.get('version')!r} is not 1")
        self.layers.agents.clear()
        for key, entry in state["agents"].items():
            st = self.layers.of(int(key))
            st.sensory.extend(entry["sensory"])
            st.unattended = list(entry["unattended"])
            st.working = [
                WorkingItem(p, t, text, kind, MemoryHit.model_validate(h) if h else None)
                for p, t, text, kind, h in entry["working"]
            ]
            st.observations = int(entry["observations"])
            st.attention_every = int(entry["attention_every"])
            for subject, relation, obj, time in entry["facts"]:
                st.learn(subject, relation, obj, time)
        self.recent_observations = {
            int(a): list(t) for a, t in state["recent_observations"].items()
        }
        self.counters.update(state["counters"])

    def prompt_block(self, agent_id: int) -> str:
        """The working-memory lines a prompt holds (never more than its capacity)."""
        return "\n".join(self.state(agent_id).prompt_block())


def _json(metadata: dict) -> str:
    return json.dumps(metadata, sort_keys=True)


def _dump(hit: MemoryHit | None) -> dict[str, Any] | None:
    return hit.model_dump(mode="json") if hit is not None else None
