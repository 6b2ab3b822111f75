"""Agent, Block and the per-tick agent context.

An `Agent` is its profile, its memory views (`memory.status`, `memory.stream`), the blocks
that make up its behaviour, and a seeded RNG of its own (so its draws do not depend on which
group runs it). Blocks are stateless and shared by all agents of a group; what changes lives
in the agent's memory. Hot state the blocks touch every tick (the keys each block declares,
agents/blocks/state.py) is read once at setup into `agent.state` and written back to the KV
memory in one batched `update_many` per group and tick (`dirty` keys) instead of a call per
value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from societas.agents.environment import EnvironmentView, SimTime
from societas.agents.rng import AgentRandom
from societas.agents.runtime.protocol import Message
from societas.memory import AgentMemory

if TYPE_CHECKING:
    from societas.agents.cognition import MemoryWriter, Reflector
    from societas.agents.llm import LLMGateway
    from societas.agents.population import Population, Profile
    from societas.agents.runtime.results import ResultsWriter
    from societas.agents.scenario import Intervention, ScenarioConfig


@runtime_checkable
class Block(Protocol):
    """One part of an agent's behaviour, run once per tick in the agent's block order."""

    name: str

    async def forward(self, ctx: AgentContext) -> None: ...


class Agent:
    """An agent: id, profile, memory views, blocks, own RNG and cached hot state."""

    __slots__ = ("blocks", "dirty", "id", "kept", "memory", "profile", "rng", "state")

    def __init__(
        self,
        profile: Profile,
        memory: AgentMemory,
        blocks: list[Block],
        rng: AgentRandom,
        state: dict[str, Any],
        kept: frozenset[str] = frozenset(),
    ) -> None:
        self.id = profile.id
        self.profile = profile
        self.memory = memory
        self.blocks = blocks
        self.rng = rng
        self.state = state
        self.kept = kept  # scratch keys ("_...") the blocks keep across ticks
        self.dirty: set[str] = set()

    def get_state(self) -> dict[str, Any]:
        """What a checkpoint keeps of this agent (JSON): hot state, the scratch keys that
        live across ticks (`kept`), and the RNG's exact position."""
        position, gauss = self.rng.getstate()
        state = {k: v for k, v in self.state.items() if not k.startswith("_") or k in self.kept}
        return {"state": state, "rng": position, "rng_gauss": gauss}

    def set_state(self, data: dict[str, Any]) -> None:
        """Back to what `get_state` returned; hot keys are marked for the KV write-back."""
        self.state.update(data["state"])
        self.dirty.update(k for k in data["state"] if not k.startswith("_"))
        self.rng.setstate((data["rng"], data["rng_gauss"]))

    def set(self, key: str, value: Any) -> None:
        """Change a hot state value; written to the KV memory at the end of the tick."""
        self.state[key] = value
        self.dirty.add(key)

    async def refresh(self, *keys: str) -> None:
        """Re-read keys a cognition function wrote straight into the KV memory."""
        for key in keys:
            self.state[key] = await self.memory.status.get(key)

    async def step(self, ctx: AgentContext) -> None:
        """Run every block once, in order."""
        for block in self.blocks:
            await block.forward(ctx)


@dataclass(slots=True)
class AgentContext:
    """What a block sees for one agent in one tick."""

    agent: Agent
    time: SimTime
    env: EnvironmentView
    llm: LLMGateway
    scenario: ScenarioConfig
    population: Population
    results: ResultsWriter
    reflector: Reflector
    outbox: list[Message]
    inbox: list[Message] = field(default_factory=list)
    events: list[Intervention] = field(default_factory=list)
    writer: MemoryWriter | None = None  # None: rate and store at once (unit use)

    @property
    def rng(self) -> AgentRandom:
        return self.agent.rng

    @property
    def state(self) -> dict[str, Any]:
        return self.agent.state

    @property
    def tick_hours(self) -> float:
        return self.scenario.tick_minutes / 60.0

    def send(self, recipient: int, kind: str, payload: dict[str, Any]) -> None:
        """Queue a message for another agent (delivered at the next tick, any group)."""
        self.outbox.append(
            Message(
                tick=self.time.tick,
                sender=self.agent.id,
                recipient=recipient,
                kind=kind,
                payload=payload,
            )
        )

    def event(self, kind: str, detail: str = "", source: str = "") -> None:
        """Record a row in the `events` results table; `source` is the answer_source of a
        model's decision ("" for an event that is no model answer)."""
        self.results.add("events", (self.time.tick, self.agent.id, kind, detail, source))

    def memory_writer(self) -> MemoryWriter:
        """The group's writer (memories rated in one batch per tick), or an immediate one."""
        if self.writer is None:
            from societas.agents.cognition import ImmediateWriter

            self.writer = ImmediateWriter(self.llm, self.reflector)
        return self.writer

    async def remember(
        self,
        topic: str,
        text: str,
        importance: float | None = None,
        location: str | None = None,
    ) -> int | None:
        """Add to the agent's stream, importance rated (unless given), counted towards
        reflection; the group's writer stores it at the end of the tick (then: None)."""
        return await self.memory_writer().add(
            self.agent.memory, topic, text, location=location, importance=importance
        )
