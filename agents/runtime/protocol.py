"""The contract between a group of agents and whatever drives it (in-process or a Ray actor).

A driver calls `step(tick, inbox)` on every group once per tick, runs the tick's
conversation sub-rounds (`converse_round`), then `finish_tick(tick)` on every group for the
tick's complete stats (LLM calls and memories of the rounds included), routes messages and
cross-group encounters in a deterministic order, and hands each group its inbox on the next
tick. Group state never crosses this boundary except
as checkpoints and results, so the same code runs under `--local` and on a Ray cluster.
"""

from __future__ import annotations

import bisect
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class Message(BaseModel):
    """Something one agent sends another across a tick boundary (dialogue, info, encounter)."""

    model_config = ConfigDict(frozen=True)

    tick: int = Field(ge=0, description="Tick at which it was sent.")
    sender: int = Field(ge=0)
    recipient: int = Field(ge=0)
    kind: str = Field(min_length=1, description="e.g. 'chat', 'info', 'encounter'.")
    payload: dict[str, Any] = Field(default_factory=dict)

    def sort_key(self) -> tuple[int, int, int, str]:
        """Deterministic routing order."""
        return (self.recipient, self.sender, self.tick, self.kind)

    @classmethod
    def trusted(
        cls, tick: int, sender: int, recipient: int, kind: str, payload: dict[str, Any]
    ) -> Message:
        """A message from values the engine made itself, unvalidated and sharing one set of
        field names, a fraction of a validated one's size (a driver makes one encounter message
        per agent and tick). `payload` may be shared between messages: never mutate it."""
        return cls.model_construct(
            _ALL_FIELDS, tick=tick, sender=sender, recipient=recipient, kind=kind, payload=payload
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its five values and rebuilt by `trusted` (Ray ships a group's inbox):
        small on the wire, and rebuilt as small in the receiving group."""
        return (
            Message.trusted,
            (self.tick, self.sender, self.recipient, self.kind, self.payload),
        )


_ALL_FIELDS = set(Message.model_fields)


# Histogram bounds (upper, seconds) shared by the groups that count and the metrics that
# expose: LLM calls from the rules policy (tens of µs) to a slow remote model (a minute),
# event-loop lag from a millisecond to seconds.
LLM_LATENCY_BUCKETS = (
    0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
)  # fmt: skip
LOOP_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)


class BucketCounts(BaseModel):
    """Samples of one histogram as counts per bucket (not cumulative; +Inf last) and their
    sum: a group sends counts, not samples, so a tick of 100k LLM calls stays small."""

    le: tuple[float, ...] = Field(description="Upper bounds of the finite buckets, ascending.")
    counts: list[int] = Field(description="len(le) + 1 counts; the last one is +Inf.")
    sum: float = 0.0

    @classmethod
    def empty(cls, le: tuple[float, ...]) -> BucketCounts:
        """No samples yet."""
        return cls(le=le, counts=[0] * (len(le) + 1))

    def observe(self, value: float) -> None:
        """Count one sample."""
        self.counts[bisect.bisect_left(self.le, value)] += 1
        self.sum += value

    @property
    def count(self) -> int:
        """Samples counted."""
        return sum(self.counts)


class LLMCalls(BaseModel):
    """One tick's LLM calls of a group to one model at one endpoint (cache hits excluded)."""

    model: str = Field(min_length=1)
    endpoint: str = Field(min_length=1, description="Base URL, or 'rules' in process.")
    requests: int = Field(0, ge=0, description="Calls answered.")
    tokens: int = Field(0, ge=0, description="Prompt + completion tokens of those calls.")
    errors: int = Field(0, ge=0, description="Attempts that failed (HTTP error, timeout).")
    latency: BucketCounts = Field(default_factory=lambda: BucketCounts.empty(LLM_LATENCY_BUCKETS))


class GroupStats(BaseModel):
    """What a group reports per tick (at `finish_tick`, after the tick's conversation rounds);
    the driver turns these into metrics, progress and run.json.

    Every count is this tick's delta (never a running total), reported once per tick."""

    group_id: int
    tick: int
    agent_steps: int = 0
    step_seconds: float = 0.0
    llm_requests: int = 0
    llm_tokens: int = 0
    llm_errors: int = 0
    embeddings: int = 0
    vector_upserts: int = 0
    vector_queries: int = 0
    memories_by_tier: dict[str, int] = Field(default_factory=dict)
    messages_out: int = 0
    rss_bytes: int = 0
    extra: dict[str, float] = Field(default_factory=dict)
    llm_calls: list[LLMCalls] = Field(
        default_factory=list, description="Per model and endpoint; sums equal the llm_* totals."
    )
    loop_lag: BucketCounts | None = Field(
        None, description="Event-loop lag of the group's process since the previous tick."
    )
    llm_tasks: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="This tick's LLM calls, tokens and json outcomes per task (deltas).",
    )
    llm_models: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="This tick's requests, tokens, cache hits and cost per model (deltas).",
    )
    llm_stop: dict[str, str] | None = Field(
        None, description="Set when the gateway asks the run to stop (LLMRunStop.info())."
    )


class DialogueLine(BaseModel):
    """One utterance of a conversation, with the fact ids the speaker shared in it."""

    model_config = ConfigDict(frozen=True)

    speaker: int = Field(ge=0)
    name: str
    text: str
    facts: list[str] = Field(default_factory=list)
    attitudes: dict[str, float] = Field(
        default_factory=dict, description="The speaker's stances (topic -> 0..10) as voiced."
    )


class TurnRequest(BaseModel):
    """One step of a conversation, routed by the driver to the group owning `speaker`:
    'invite' (does `speaker` accept talking to `listener`?), 'turn' (say the next line) or
    'conclude' (remember it, update the relationship, believe what was heard)."""

    model_config = ConfigDict(frozen=True)

    conversation_id: str = Field(min_length=1)
    tick: int = Field(ge=0)
    kind: Literal["invite", "turn", "conclude"]
    speaker: int = Field(ge=0, description="The agent acting in this step.")
    listener: int = Field(ge=0, description="The other participant.")
    initiator: int = Field(ge=0)
    turn: int = Field(0, ge=0, description="Index of the line `speaker` says ('turn').")
    max_turns: int = Field(8, ge=1)
    topic: str = ""
    place: str = ""
    history: list[DialogueLine] = Field(default_factory=list)

    def sort_key(self) -> tuple[int, int, int, str]:
        """Deterministic order: by initiator, then the other side, then the acting agent."""
        other = self.listener if self.speaker == self.initiator else self.speaker
        return (self.initiator, other, self.speaker, self.kind)


class TurnReply(BaseModel):
    """What the speaker's group answers: a line (or a refusal / an end), or an ack."""

    conversation_id: str
    speaker: int
    kind: Literal["invite", "turn", "conclude"]
    line: DialogueLine | None = None
    end: bool = False


class StepResult(BaseModel):
    """The outcome of one group's tick."""

    outbox: list[Message] = Field(default_factory=list)
    positions: dict[int, str] = Field(
        default_factory=dict, description="agent id -> place id after this tick."
    )
    stats: GroupStats | None = Field(
        None, description="None: the group reports the tick's stats at `finish_tick`."
    )
    conversations: list[TurnRequest] = Field(
        default_factory=list, description="Invitations to talk started this tick."
    )


@runtime_checkable
class GroupHandle(Protocol):
    """A group of agents as the driver sees it: in-process engine or Ray actor adapter."""

    group_id: int

    async def setup(self) -> None: ...

    async def step(self, tick: int, inbox: list[Message]) -> StepResult: ...

    async def converse_round(self, requests: list[TurnRequest]) -> list[TurnReply]: ...

    async def finish_tick(self, tick: int) -> GroupStats: ...

    async def checkpoint(self, directory: str) -> dict[str, Any]: ...

    async def restore(self, directory: str) -> None: ...

    async def close(self) -> None: ...
