"""The `cognitive` memory profile in RAM: sensory buffer, working memory, layers L2–L4."""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, model_validator

LAYER_NAMES = ("attention", "consolidation", "metacognition")


class Trigger(BaseModel, extra="forbid"):
    """When a layer runs: first of `every` events, `every_hours`, `importance_at`, `capacity`."""

    every: int | None = Field(None, ge=1)
    every_hours: float | None = Field(None, gt=0.0)
    importance_at: float | None = Field(None, ge=0.0, le=1.0)
    capacity: int | None = Field(None, ge=1)

    def due(self, clock: LayerClock, now: float) -> str | None:
        """The condition that fires now (count, capacity, importance, interval), else None."""
        if clock.inputs == 0:
            return None
        if self.every is not None and clock.events >= self.every:
            return "count"
        if self.capacity is not None and clock.inputs >= self.capacity:
            return "capacity"
        if self.importance_at is not None and clock.peak >= self.importance_at:
            return "importance"
        since = now - clock.last if clock.last is not None else 0.0
        if self.every_hours is not None and since >= self.every_hours * 3600.0:
            return "interval"
        return None


class CognitiveConfig(BaseModel, extra="forbid"):
    """Knobs of the cognitive profile, per agent; the seed's cadences 10 / 50 / 100."""

    sensory_buffer_size: int = Field(16, ge=1, le=10_000, description="N raw events kept.")
    perceived_topics: list[str] = Field(
        default_factory=lambda: ["event", "dialogue", "post", "activity", "fact", "observation"],
        description="Memory topics that are raw perception in a run: they enter the sensory "
        "buffer and reach the stream only as attention's observations.",
    )
    attention: Trigger = Field(
        default_factory=lambda: Trigger(every=10, importance_at=0.8),
        description="L2: raw events into one observation. Trigger keys: every (raw events), "
        "every_hours, importance_at (a raw event's), capacity (inputs waiting); any fires.",
    )
    consolidation: Trigger = Field(
        default_factory=lambda: Trigger(every=50, every_hours=24.0),
        description="L3: observations into facts (graph and semantic memories).",
    )
    metacognition: Trigger = Field(
        default_factory=lambda: Trigger(every=100, capacity=20),
        description="L4: a reflection on the agent's memory that retunes L2 and L3.",
    )
    working_memory_capacity: int = Field(7, ge=1, le=100, description="Items a prompt holds.")
    active_thoughts: int = Field(2, ge=0, le=99, description="Newest thoughts held (< capacity).")
    facts_per_recall: int = Field(
        3, ge=0, le=100, description="Facts about the query's entities joined to a recall."
    )
    reconsolidation_boost: float = Field(
        0.05, ge=0.0, le=1.0, description="Importance a memory gains each time it is recalled."
    )
    decay_per_day: float | None = Field(
        0.99, gt=0.0, le=1.0, description="Natural decay of importance per day (None: off)."
    )
    recency_days: float = Field(
        3.0, gt=0.0, description="Natural decay: recency e^(-days/this) since stored/recalled."
    )
    log_entries: int = Field(50, ge=0, le=10_000, description="Log lines kept per layer.")

    @model_validator(mode="after")
    def _fits(self) -> CognitiveConfig:
        if self.attention.every is None and self.attention.capacity is None:
            raise ValueError("attention: needs `every` or `capacity`, or perception never lands")
        if (self.attention.capacity or 0) > self.sensory_buffer_size:
            raise ValueError(
                f"attention.capacity ({self.attention.capacity}) must not exceed "
                f"sensory_buffer_size ({self.sensory_buffer_size}): the buffer never holds more"
            )
        return self


@dataclass(slots=True)
class LayerClock:
    """What a layer has seen since it last ran: events, inputs, peak importance, last run."""

    events: int = 0
    inputs: int = 0
    peak: float = -1.0
    last: float | None = None

    def ran(self, now: float) -> None:
        self.events, self.inputs, self.peak, self.last = 0, 0, -1.0, now


class Strategy(BaseModel, extra="forbid"):
    """Meta-cognition's answer: its reflection and new layer parameters (None: unchanged)."""

    reflection: str = Field("", max_length=4000)
    attention_every: int | None = Field(None, ge=1, le=10_000)
    attention_importance: float | None = Field(None, ge=0.0, le=1.0)
    consolidation_every: int | None = Field(None, ge=1, le=100_000)


@dataclass(frozen=True, slots=True)
class MetaReport:
    """What meta-cognition reflects on: the agent's own memory since its last reflection."""

    agent_id: int
    novelty: float  # distinct share of the sensory buffer (1: all new)
    events: int  # raw events in the sensory buffer
    observations: list[str]
    consolidations: int
    new_facts: int
    known_facts: int
    evictions: int  # working memory items pushed out
    attention: Trigger
    consolidation: Trigger
    base: CognitiveConfig


def rules_metacognition(report: MetaReport) -> Strategy:
    """The rules reflection: cadences follow novelty and facts found, within ¼–4× the config."""

    def within(value: float, base: int | None) -> int | None:
        return None if base is None else max(1, math.ceil(base / 4), min(4 * base, round(value)))

    att, con = report.attention.every, report.consolidation.every
    every = consolidate = None
    if att is not None and report.events >= 2 and not 0.5 <= report.novelty < 0.9:
        scaled = math.ceil(att * 1.25) if report.novelty < 0.5 else math.floor(att * 0.8)
        every = within(scaled, report.base.attention.every)
    if con is not None and report.consolidations and report.new_facts == 0:
        consolidate = within(con * 2, report.base.consolidation.every)
    elif con is not None and report.new_facts >= 2 * report.consolidations > 0:
        consolidate = within(con / 2, report.base.consolidation.every)
    mood = "repetitive" if report.novelty < 0.5 else "varied" if report.novelty < 0.9 else "new"
    text = (
        f"What I perceive is {mood} (novelty {report.novelty:.2f} over {report.events} events). "
        f"{report.consolidations} consolidation passes found {report.new_facts} facts "
        f"({report.known_facts} known); working memory let go of {report.evictions} items."
    )
    return Strategy(reflection=text, attention_every=every, consolidation_every=consolidate)


novelty_metacognition = rules_metacognition  # the name run wiring has used


def default_attention(events: list[str]) -> str:
    """Rule-based observation of a batch of raw events (an LLM summary can replace it)."""
    return "; ".join(dict.fromkeys(e.strip().rstrip(".") for e in events)) + "."


@dataclass(order=True)
class WorkingItem:
    """A recalled memory or fact in working memory: by priority, then recency."""

    priority: float
    time: float
    text: str = field(compare=False)
    kind: str = field(default="memory", compare=False)  # memory | fact
    hit: Any = field(default=None, compare=False)  # the MemoryHit behind it


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


class CognitiveState:
    """One agent's cognitive layers."""

    def __init__(self, config: CognitiveConfig) -> None:
        self.config = config
        self.sensory: deque[str] = deque(maxlen=config.sensory_buffer_size)
        self.unattended: deque[str] = deque(maxlen=config.sensory_buffer_size)
        self.task: str | None = None
        room = min(config.active_thoughts, config.working_memory_capacity - 1)
        self.thoughts: deque[str] = deque(maxlen=room)
        self.working: list[WorkingItem] = []
        self.evictions = 0
        self.fact_graph: Any = None  # a networkx MultiDiGraph, made at the first fact
        self.observations = 0
        self.triggers = {name: getattr(config, name) for name in LAYER_NAMES}  # L4 retunes
        self.clocks = {name: LayerClock() for name in LAYER_NAMES}
        self.new_facts = self.consolidations = 0  # since the last reflection
        self.log: dict[str, deque[tuple[float, str, str]]] = {
            name: deque(maxlen=config.log_entries) for name in LAYER_NAMES
        }

    def note(self, layer: str, time: float, trigger: str, text: str) -> None:
        """One line of a layer's log (what ran, when, which trigger)."""
        self.log[layer].append((time, trigger, text))

    def perceive(
        self, event: str, now: float = 0.0, importance: float | None = None
    ) -> tuple[list[str], str] | None:
        """Take one raw event; returns (batch, trigger) when attention fires on it."""
        self.sensory.append(event)
        self.unattended.append(event)
        for clock in self.clocks.values():
            clock.events += 1
            clock.last = now if clock.last is None else clock.last
            clock.peak = max(clock.peak, -1.0 if importance is None else importance)
        clock = self.clocks["attention"]
        clock.inputs = len(self.unattended)
        fired = self.triggers["attention"].due(clock, now)
        if fired is None:
            return None
        batch = list(self.unattended)
        self.unattended.clear()
        clock.ran(now)
        self.observations += 1
        for name in ("consolidation", "metacognition"):
            self.clocks[name].inputs += 1
        return batch, fired

    def due(self, layer: str, now: float) -> str | None:
        """Which trigger of `layer` (consolidation, metacognition) fires now, if any."""
        return self.triggers[layer].due(self.clocks[layer], now)

    def set_task(self, task: str | None) -> None:
        """The current task: always first in working memory (None clears it)."""
        self.task = task
        self._fit()

    def think(self, thought: str) -> None:
        """An active thought: the newest `active_thoughts` are kept in working memory."""
        if self.thoughts.maxlen:
            self.thoughts.append(thought)
            self._fit()

    def hold(
        self, text: str, priority: float, time: float, kind: str = "memory", hit: Any = None
    ) -> None:
        """A recalled memory or fact into working memory; the weakest leaves when it is full."""
        self.working = [w for w in self.working if w.text != text]
        self.working.append(WorkingItem(priority, time, text, kind, hit))
        self._fit()

    def _fit(self) -> None:
        room = self.config.working_memory_capacity - (self.task is not None) - len(self.thoughts)
        self.working.sort(reverse=True)
        self.evictions += max(0, len(self.working) - room)
        del self.working[max(0, room) :]

    def prompt_block(self) -> list[str]:
        """What working memory puts into a prompt: task, thoughts (newest first), items."""
        task = [f"[task] {self.task}"] if self.task is not None else []
        thoughts = [f"[thought] {t}" for t in reversed(self.thoughts)]
        return task + thoughts + [f"[{w.kind}] {w.text}" for w in self.working]

    @property
    def facts(self) -> Any:
        """The agent's fact graph (networkx is imported only by agents that learn facts)."""
        if self.fact_graph is None:
            import networkx as nx

            self.fact_graph = nx.MultiDiGraph()
        return self.fact_graph

    def learn(self, subject: str, relation: str, obj: str, time: float, memory_id: int = 0) -> None:
        """Add a (subject, relation, object) fact; a repeated fact is refreshed, not doubled."""
        for key, data in self.facts.get_edge_data(subject, obj, default={}).items():
            if data["relation"] == relation:
                self.facts.edges[subject, obj, key].update(time=time, memory_id=memory_id)
                return
        for node in (subject, obj):  # each entity's words, matched against recall queries
            self.facts.add_node(node, words=_words(node))
        self.facts.add_edge(subject, obj, relation=relation, time=time, memory_id=memory_id)

    def facts_about(self, text: str, limit: int) -> list[tuple[str, str, str, float, int]]:
        """Facts (s, r, o, time, memory id) about the entities of `text`, newest first."""
        if self.fact_graph is None or limit == 0:
            return []
        words = _words(text)
        nodes = self.fact_graph.nodes(data="words")
        named = [n for n, name in nodes if name.strip() and name in words]
        edges = {
            (a, d["relation"], b, d["time"], d["memory_id"])
            for n in named
            for a, b, d in [*self.facts.out_edges(n, data=True), *self.facts.in_edges(n, data=True)]
        }
        return sorted(edges, key=lambda e: (-e[3], e[:3]))[:limit]

    def reconsolidate(self, importance: float, context: str, metadata: dict) -> tuple[float, dict]:
        """A recalled memory's new importance and metadata (the recall context appended)."""
        recalls = [*metadata.get("recalls", []), context][-5:]
        boosted = min(1.0, importance + self.config.reconsolidation_boost)
        return boosted, {**metadata, "recalls": recalls}

    def report(self, agent_id: int) -> MetaReport:
        """The agent's memory since its last reflection, for meta-cognition."""
        events = list(self.sensory)
        since = self.clocks["metacognition"].inputs
        return MetaReport(
            agent_id=agent_id,
            novelty=len(set(events)) / len(events) if events else 1.0,
            events=len(events),
            observations=[t for _, _, t in list(self.log["attention"])[-since:]] if since else [],
            consolidations=self.consolidations,
            new_facts=self.new_facts,
            known_facts=self.fact_graph.number_of_edges() if self.fact_graph is not None else 0,
            evictions=self.evictions,
            attention=self.triggers["attention"],
            consolidation=self.triggers["consolidation"],
            base=self.config,
        )

    def adopt(self, strategy: Strategy) -> list[str]:
        """Apply meta-cognition's strategy to L2 and L3; returns the changes made, as text."""
        changes = []
        for layer, key, value in (
            ("attention", "every", strategy.attention_every),
            ("attention", "importance_at", strategy.attention_importance),
            ("consolidation", "every", strategy.consolidation_every),
        ):
            old = getattr(self.triggers[layer], key)
            if value is not None and value != old:
                self.triggers[layer] = self.triggers[layer].model_copy(update={key: value})
                changes.append(f"{layer} {key} {old} → {value}")
        self.new_facts = self.consolidations = self.evictions = 0
        return changes
