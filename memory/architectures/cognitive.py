"""The `cognitive` memory profile: sensory buffer, attention, working memory, semantic facts
as a graph, meta-cognition on a schedule and reconsolidation on recall, per agent in RAM.

Every `attention_every` raw events become one observation memory; working memory keeps at
most `working_memory_capacity` items (`prompt_block` is what enters a prompt); facts are
(subject, relation, object) edges with a graph query; a reflection on the agent's own memory
is due every `metacognition_every` observations; a recalled memory is rewritten with its
recall context (`reconsolidate`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class CognitiveConfig(BaseModel):
    """Knobs of the cognitive profile (all in raw events or items, per agent)."""

    model_config = ConfigDict(extra="forbid")

    sensory_buffer_size: int = Field(8, ge=1, le=10_000, description="N raw observations kept.")
    perceived_topics: list[str] = Field(
        default_factory=lambda: ["event", "dialogue", "post", "activity", "fact", "observation"],
        description="Memory topics that are raw perception in a run: they enter the sensory "
        "buffer and reach the stream only as attention's observations.",
    )
    attention_every: int = Field(4, ge=1, description="Raw events summarised into one memory.")
    working_memory_capacity: int = Field(7, ge=1, le=100, description="Items a prompt holds.")
    consolidate_every: int = Field(8, ge=1, description="Observations per semantic pass (M).")
    metacognition_every: int = Field(16, ge=1, description="Observations per meta pass (K).")
    reconsolidation_boost: float = Field(
        0.05, ge=0.0, le=1.0, description="Importance a memory gains each time it is recalled."
    )


@dataclass(order=True)
class WorkingItem:
    """One item of working memory: ordered by priority, then recency."""

    priority: float
    time: float
    text: str = field(compare=False)
    kind: str = field(default="thought", compare=False)  # task | thought | memory
    hit: Any = field(default=None, compare=False)  # the recalled MemoryHit (kind memory)


def novelty_metacognition(state: CognitiveState) -> int | None:
    """Meta-cognition by novelty of what the agent perceives: a sensory buffer of mostly
    repeated events makes it attend less often (interval + 1, at most 4× the configured
    one); one of all-new events more often (interval − 1, at least 1). None: no change."""
    events = list(state.sensory)
    if len(events) < 2:
        return None
    novelty = len(set(events)) / len(events)
    every, base = state.attention_every, state.config.attention_every
    if novelty < 0.5 and every < 4 * base:
        return every + 1
    if novelty >= 0.9 and every > 1:
        return every - 1
    return None


def default_attention(events: list[str]) -> str:
    """Rule-based observation of a batch of raw events (an LLM summary can replace it)."""
    return "; ".join(dict.fromkeys(e.strip().rstrip(".") for e in events)) + "."


class CognitiveState:
    """One agent's cognitive layers."""

    def __init__(self, config: CognitiveConfig) -> None:
        self.config = config
        self.sensory: deque[str] = deque(maxlen=config.sensory_buffer_size)
        self.unattended: list[str] = []  # raw events since the last observation
        self.working: list[WorkingItem] = []
        self.fact_graph: Any = None  # a networkx MultiDiGraph, made at the first fact
        self.observations = 0
        self.attention_every = config.attention_every

    def perceive(self, event: str) -> list[str] | None:
        """Take one raw event; returns the batch to attend to when N events have gathered."""
        self.sensory.append(event)
        self.unattended.append(event)
        if len(self.unattended) >= self.attention_every:
            batch, self.unattended = self.unattended, []
            self.observations += 1
            return batch
        return None

    def hold(
        self, text: str, priority: float, time: float, kind: str = "thought", hit: Any = None
    ) -> None:
        """Put an item in working memory; beyond capacity the weakest (then oldest) goes."""
        self.working = [w for w in self.working if w.text != text]
        self.working.append(WorkingItem(priority, time, text, kind, hit))
        self.working.sort(reverse=True)
        del self.working[self.config.working_memory_capacity :]

    def prompt_block(self) -> list[str]:
        """What working memory puts into a prompt: at most `working_memory_capacity` lines."""
        return [f"[{w.kind}] {w.text}" for w in self.working]

    @property
    def facts(self) -> Any:
        """The agent's fact graph (networkx is imported only by agents that learn facts)."""
        if self.fact_graph is None:
            import networkx as nx

            self.fact_graph = nx.MultiDiGraph()
        return self.fact_graph

    def learn(self, subject: str, relation: str, obj: str, time: float) -> None:
        """Add a (subject, relation, object) fact; a repeated fact is refreshed, not doubled."""
        for key, data in self.facts.get_edge_data(subject, obj, default={}).items():
            if data["relation"] == relation:
                self.facts.edges[subject, obj, key]["time"] = time
                return
        self.facts.add_edge(subject, obj, relation=relation, time=time)

    def query(self, subject: str, relation: str | None = None, hops: int = 1) -> list[tuple]:
        """Facts reachable from `subject` within `hops` edges (optionally one relation)."""
        import networkx as nx

        if self.fact_graph is None or subject not in self.fact_graph:
            return []
        reach = nx.single_source_shortest_path_length(self.facts, subject, cutoff=hops - 1)
        out = []
        for node in sorted(reach, key=str):
            for _, obj, data in self.facts.out_edges(node, data=True):
                if relation is None or data["relation"] == relation:
                    out.append((node, data["relation"], obj))
        return sorted(set(out))

    def due_consolidation(self) -> bool:
        return self.observations > 0 and self.observations % self.config.consolidate_every == 0

    def due_metacognition(self) -> bool:
        return self.observations > 0 and self.observations % self.config.metacognition_every == 0

    def adjust_attention(self, every: int) -> None:
        """Meta-cognition's lever: attend more (smaller) or less (larger) often."""
        if every < 1:
            raise ValueError(f"attention_every must be >= 1, got {every}")
        self.attention_every = every

    def reconsolidate(self, importance: float, context: str, metadata: dict) -> tuple[float, dict]:
        """A recalled memory's new importance and metadata (the recall context appended)."""
        recalls = [*metadata.get("recalls", []), context][-5:]
        boosted = min(1.0, importance + self.config.reconsolidation_boost)
        return boosted, {**metadata, "recalls": recalls}


class CognitiveLayers:
    """The cognitive state of every agent of a group."""

    def __init__(
        self,
        config: CognitiveConfig,
        summarise: Callable[[list[str]], str] = default_attention,
        config_of: Callable[[int], CognitiveConfig] | None = None,
    ) -> None:
        self.config = config
        self.summarise = summarise
        self.config_of = config_of  # per agent (agent types' own knobs), else `config`
        self.agents: dict[int, CognitiveState] = {}

    def of(self, agent_id: int) -> CognitiveState:
        state = self.agents.get(agent_id)
        if state is None:
            config = self.config_of(agent_id) if self.config_of is not None else self.config
            state = self.agents[agent_id] = CognitiveState(config)
        return state

    def perceive_many(self, events: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
        """Raw events of many agents; returns (agent, observation text) to store as memories."""
        out = []
        for agent_id, event in events:
            batch = self.of(agent_id).perceive(event)
            if batch is not None:
                out.append((agent_id, self.summarise(batch)))
        return out
