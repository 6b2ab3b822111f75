"""Writing memories with a rated importance (Generative Agents' 1..10 poignancy, stored /10).

Cognition functions hand what they want remembered to a `MemoryWriter`:
- `ImmediateWriter` rates one call's texts in one batch and stores them at once (standalone
  use, tests);
- `PendingMemories` (the engine's) collects every memory of every agent of the group during a
  tick (or a conversation round) and rates all of them in ONE batched LLM call per
  `batch_size` items, then stores them in a deterministic order (agent id, then the order the
  agent wrote them), links evidence, and counts the importance towards reflection.

A topic in `fixed` keeps a configured importance instead of a rating. Each rating's
answer_source goes to `on_rated(agent_id, memory_id, topic, importance, source)` when set
(the engine writes them to the `importance` results table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from societas.agents.cognition.importance import rate_with_source
from societas.agents.cognition.short_term import count_typed
from societas.memory import AgentMemory
from societas.memory.model.records import AddRequest

if TYPE_CHECKING:
    from societas.agents.cognition.reflection import Reflector
    from societas.agents.llm.gateway import LLMGateway
    from societas.memory import GroupMemory

OnStored = Callable[[int, float], None]
# (agent_id, memory_id, topic, importance, answer_source) of a rated memory, once stored.
OnRated = Callable[[int, int, str, float, str], None]


class MemoryWriter(Protocol):
    """Where cognition puts memories; the importance is rated unless given or configured;
    `record` holds typed-record fields (type, tags, metadata, expires_at)."""

    async def add(
        self,
        mem: AgentMemory,
        topic: str,
        text: str,
        *,
        location: str | None = None,
        importance: float | None = None,
        evidence: Sequence[int] = (),
        on_stored: OnStored | None = None,
        record: Mapping[str, Any] | None = None,
    ) -> int | None: ...


class ImmediateWriter:
    """Rate (one batched call per text) and store right away; returns the memory id."""

    def __init__(
        self,
        llm: LLMGateway,
        reflector: Reflector | None = None,
        fixed: Mapping[str, float] | None = None,
    ) -> None:
        self.llm = llm
        self.reflector = reflector
        self.fixed = dict(fixed or {})
        self.on_rated: OnRated | None = None

    async def add(
        self,
        mem: AgentMemory,
        topic: str,
        text: str,
        *,
        location: str | None = None,
        importance: float | None = None,
        evidence: Sequence[int] = (),
        on_stored: OnStored | None = None,
        record: Mapping[str, Any] | None = None,
    ) -> int | None:
        """Rate `text` (unless fixed), add it, link `evidence` to it; returns its id."""
        imp = importance if importance is not None else self.fixed.get(topic)
        source = None
        if imp is None:
            ((imp, source),) = await rate_with_source(self.llm, [text], seed=mem.agent_id)
        mid = await mem.stream.add(topic, text, importance=imp, location=location, **(record or {}))
        if source is not None and self.on_rated is not None:
            self.on_rated(mem.agent_id, mid, topic, imp, source)
        if evidence:
            await mem.stream.add_cognition_to_memory(list(evidence), mid)
        if self.reflector is not None:
            self.reflector.note(mem.agent_id, imp)
        if on_stored is not None:
            on_stored(mid, imp)
        return mid


@dataclass(slots=True)
class _Pending:
    agent_id: int
    seq: int
    topic: str
    text: str
    location: str | None
    importance: float | None
    evidence: tuple[int, ...]
    on_stored: OnStored | None = field(default=None)
    observed: bool = False  # an attention observation of the cognitive profile
    source: str | None = None  # answer_source of a rated importance (None: given)
    record: Mapping[str, Any] | None = None  # typed-record fields


class PendingMemories:
    """A group's memories of one tick (or round), rated in batches across agents at `flush`."""

    def __init__(
        self,
        llm: LLMGateway,
        reflector: Reflector | None = None,
        fixed: Mapping[str, float] | None = None,
        seed: int = 0,
    ) -> None:
        self.llm = llm
        self.reflector = reflector
        self.fixed = dict(fixed or {})
        self.seed = seed
        self.items: list[_Pending] = []
        self._seq: dict[int, int] = {}
        self.rated = 0
        self.stored = 0
        self.on_rated: OnRated | None = None

    @property
    def size(self) -> int:
        """Memories waiting for the next flush."""
        return len(self.items)

    async def add(
        self,
        mem: AgentMemory,
        topic: str,
        text: str,
        *,
        location: str | None = None,
        importance: float | None = None,
        evidence: Sequence[int] = (),
        on_stored: OnStored | None = None,
        record: Mapping[str, Any] | None = None,
    ) -> int | None:
        """Queue a memory (stored at the next `flush`); returns None (no id yet)."""
        seq = self._seq.get(mem.agent_id, 0)
        self._seq[mem.agent_id] = seq + 1
        imp = importance if importance is not None else self.fixed.get(topic)
        pending = _Pending(
            mem.agent_id, seq, topic, text, location, imp, tuple(evidence), on_stored
        )
        pending.record = record
        self.items.append(pending)
        return None

    async def flush(self, group: GroupMemory, salt: int = 0) -> list[int]:
        """Rate the unrated items in batched calls, store all in (agent, order) order, link
        evidence, note importance for reflection; returns the new memory ids."""
        items = sorted(self.items, key=lambda p: (p.agent_id, p.seq))
        self.items, self._seq = [], {}
        if group.cognition is not None:  # cognitive agents: raw perception → attention
            items = await self._attend(group, items)
        if not items:
            return []
        unrated = [p for p in items if p.importance is None]
        if unrated:
            scores = await rate_with_source(
                self.llm,
                [p.text for p in unrated],
                "the person whose memory it is",
                seed=self.seed * 1_000_003 + salt,
            )
            for p, (score, source) in zip(unrated, scores, strict=True):
                p.importance, p.source = score, source
            self.rated += len(unrated)
        ids = await group.add_many(
            [
                AddRequest(
                    agent_id=p.agent_id,
                    topic=p.topic,
                    description=p.text,
                    importance=p.importance,
                    location=p.location,
                    **({"type": "episodic"} if p.observed else {}),
                    **(p.record or {}),
                )
                for p in items
            ]
        )
        self.stored += len(ids)
        count_typed(group, [str((p.record or {}).get("type", "")) for p in items])
        if group.cognition is not None:
            observed = [(p.agent_id, p.text) for p in items if p.observed]
            if observed:
                await group.cognition.observed(observed)
        pairs = zip(items, ids, strict=True)
        links = [(p.agent_id, list(p.evidence), mid) for p, mid in pairs if p.evidence]
        if links:
            await group.link_cognitions(links, skip_cold=True)
        for p, mid in zip(items, ids, strict=True):
            imp = float(p.importance or 0.0)
            if self.reflector is not None:
                self.reflector.note(p.agent_id, imp)
            if p.on_stored is not None:
                p.on_stored(mid, imp)
            if p.source is not None and self.on_rated is not None:
                self.on_rated(p.agent_id, mid, p.topic, imp, p.source)
        return ids

    async def _attend(self, group: GroupMemory, items: list[_Pending]) -> list[_Pending]:
        """Cognitive profile: what its agents perceived this tick (topics in the agent's
        `perceived_topics`, no evidence) enters their sensory buffers instead of the stream, with
        its place and its importance when given or fixed; when attention's trigger fires, the
        buffer becomes one `observation` memory (batched summaries), stored and rated with the
        rest, involving the agents that the raw events given with it involve (kept per flush, so
        a resumed run tags alike). Other agents' items pass unchanged."""
        cognition = group.cognition
        assert cognition is not None
        profiles = group.profiles
        raw: list[_Pending] = []
        kept: list[_Pending] = []
        for p in items:
            perceived = (
                cognition.runs(p.agent_id)
                and not p.evidence
                and p.topic in profiles.cognitive(p.agent_id).perceived_topics
            )
            (raw if perceived else kept).append(p)
        if not raw:
            return items
        # (agent, text, place, importance): a given importance fires the important-event trigger
        events = [(p.agent_id, p.text, p.location, p.importance) for p in raw]
        involved: dict[int, dict[int, None]] = {}
        for p in raw:
            people = (p.record or {}).get("related_agents") or ()
            involved.setdefault(p.agent_id, {}).update(dict.fromkeys(people))
        observations = await cognition.attend_many(events)
        last_place = {p.agent_id: p.location for p in raw}
        for n, (agent_id, text) in enumerate(observations):  # after the agent's own items
            place = last_place[agent_id]
            kept.append(_Pending(agent_id, (1 << 30) + n, "observation", text, place, None, ()))
            kept[-1].observed = True
            kept[-1].record = {"related_agents": list(involved[agent_id])}
        return sorted(kept, key=lambda p: (p.agent_id, p.seq))
