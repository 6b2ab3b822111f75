"""The contract between a group of agents and whatever drives it (in-process or a Ray actor).

A driver calls `step(tick, inbox)` on every group once per tick, gathers their outboxes and
position reports, routes messages and cross-group encounters in a deterministic order, and
hands each group its inbox on the next tick. Group state never crosses this boundary except
as checkpoints and results, so the same code runs under `--local` and on a Ray cluster.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

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


class GroupStats(BaseModel):
    """What a group reports per tick; the driver turns these into metrics and progress."""

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


class StepResult(BaseModel):
    """The outcome of one group's tick."""

    outbox: list[Message] = Field(default_factory=list)
    positions: dict[int, str] = Field(
        default_factory=dict, description="agent id -> place id after this tick."
    )
    stats: GroupStats


@runtime_checkable
class GroupHandle(Protocol):
    """A group of agents as the driver sees it: in-process engine or Ray actor adapter."""

    group_id: int

    async def setup(self) -> None: ...

    async def step(self, tick: int, inbox: list[Message]) -> StepResult: ...

    async def checkpoint(self, directory: str) -> dict[str, Any]: ...

    async def restore(self, directory: str) -> None: ...

    async def close(self) -> None: ...
