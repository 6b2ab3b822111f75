"""Messages in and out of the memory: validated requests and typed results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from societas.memory.model.clock import format_time_of_day
from societas.memory.model.content import check_content
from societas.memory.model.records_meta import MemoryType, check_metadata, check_tags, meta_of

Importance = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


def _check_text(value: Any, info: ValidationInfo) -> str:
    """A request's text must be a non-empty string (the error names the field)."""
    field = info.field_name
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a string, got {type(value).__name__} {value!r:.80}")
    if not value.strip():
        raise ValueError(f"{field} must be a non-empty string, got {value!r}")
    return value


Text = Annotated[str, BeforeValidator(_check_text)]
AGENT_TAG = "agent:"  # reserved tag form `agent:<id>`: the agents a memory involves


def check_agents(value: Any, field: str) -> tuple[int, ...]:
    """Agent ids (ints >= 0), order kept, duplicates dropped (the error names the field)."""
    ids = tuple(value) if isinstance(value, list | tuple) else (value,)
    if bad := [i for i in ids if type(i) is not int or i < 0]:
        raise ValueError(f"{field} must be agent ids (ints >= 0), got {bad!r:.80}")
    return tuple(dict.fromkeys(ids))


class AddRequest(BaseModel, frozen=True, extra="forbid"):
    """One stream memory to write for one agent."""

    agent_id: int
    topic: str = Field(min_length=1, max_length=64)
    description: Text
    importance: Importance | None = None
    location: str | None = None
    type: MemoryType = "episodic"
    tags: tuple[str, ...] = ()
    related_agents: tuple[int, ...] = Field((), description="Stored as `agent:<id>` tags.")
    metadata: dict[str, Any] | None = None
    expires_at: float | None = Field(
        None, allow_inf_nan=False, description="Simulated seconds after which it is gone."
    )

    @model_validator(mode="before")
    @classmethod
    def _related(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("related_agents") is not None:
            ids = check_agents(data["related_agents"], "related_agents")
            tags = (*check_tags(data.get("tags")), *(f"{AGENT_TAG}{i}" for i in ids))
            data = {**data, "related_agents": ids, "tags": tags}
        return data

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> tuple[str, ...]:
        return check_tags(value)

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> dict[str, Any]:
        return check_metadata(value)

    @model_validator(mode="after")
    def _content(self) -> AddRequest:
        if self.metadata and "content" in self.metadata:
            check_content(self.type, self.metadata["content"])
        return self


def _ordered_range(value: tuple[float, float] | None, name: str) -> None:
    if value is not None and value[0] > value[1]:
        raise ValueError(f"{name} start must be <= end, got {value!r}")


class SearchRequest(BaseModel, frozen=True, extra="forbid"):
    """One relevance + recency + importance search over one agent's stream."""

    agent_id: int
    query: Text
    topic: str | None = None
    top_k: int = Field(3, ge=1, le=1000)
    day_range: tuple[int, int] | None = None
    time_range: tuple[float, float] | None = None
    location: str | None = None
    tiers: tuple[Literal["hot", "warm", "cold"], ...] = Field(
        ("hot", "warm", "cold"),
        min_length=1,
        description="Unset: no cold with tiers.search_cold off.",
    )
    expand: bool = Field(False, description="Spread activation along links (associations).")
    types: tuple[MemoryType, ...] | None = Field(None, min_length=1)
    tags: tuple[str, ...] | None = Field(None, description="Memories with any of these tags.")
    involving: int | None = Field(None, description="Memories whose related_agents hold it.")
    layers: tuple[Literal["short", "mid", "long", "reflection"], ...] | None = Field(
        None, min_length=1, description="FinMem layers to search (forgetting on)."
    )

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> tuple[str, ...] | None:
        return None if value is None else check_tags(value) or None

    @model_validator(mode="before")
    @classmethod
    def _involving(cls, data: Any) -> Any:
        """`involving` is a filter on its reserved tag (every tier filters by tags)."""
        if isinstance(data, dict) and data.get("involving") is not None:
            agent = data["involving"]
            if type(agent) is not int or agent < 0:
                raise ValueError(f"involving must be an agent id (int >= 0), got {agent!r:.80}")
            tag = (f"{AGENT_TAG}{agent}",)
            if data.get("tags") and check_tags(data["tags"]) != tag:
                raise ValueError("involving cannot be combined with tags (tags match any)")
            data = {**data, "tags": tag}
        return data

    @model_validator(mode="after")
    def _ranges(self) -> SearchRequest:
        _ordered_range(self.day_range, "day_range")
        _ordered_range(self.time_range, "time_range")
        return self


class KVSearchRequest(BaseModel, frozen=True, extra="forbid"):
    """A search over one agent's embedded KV attributes."""

    agent_id: int
    query: Text
    top_k: int = Field(3, ge=1, le=1000)
    keys: tuple[str, ...] | None = None


class MemoryRecord(BaseModel, frozen=True):
    """A stored memory with its links; `importance` as stored at `layer_since` (layers decay it)."""

    id: int
    agent_id: int
    text: str
    topic: str
    day: int
    t: float
    time: float
    location: str | None
    importance: float
    cognition_ids: tuple[int, ...] = ()
    evidence_ids: tuple[int, ...] = ()
    layer: str = "short"
    layer_since: float = 0.0
    type: str = "episodic"
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    access_count: int = 0
    last_accessed: float | None = None
    expires_at: float | None = None

    @property
    def related_agents(self) -> tuple[int, ...]:
        """The agents this memory involves: its `agent:<id>` tags (kept in `tags` too)."""
        n = len(AGENT_TAG)
        return tuple(int(t[n:]) for t in self.tags if t[:n] == AGENT_TAG and t[n:].isdecimal())


def record_from_payload(memory_id: int, payload: dict[str, Any]) -> MemoryRecord:
    """A record from a vector-store payload or a cold Parquet row (same field names)."""
    time = payload["time"]
    return MemoryRecord(
        id=memory_id,
        agent_id=payload["agent_id"],
        text=payload["text"],
        topic=payload["topic"],
        day=int(time // 86_400),
        t=payload["t"],
        time=time,
        location=payload.get("location"),
        importance=payload["importance"],
        cognition_ids=tuple(payload.get("links") or ()),
        evidence_ids=tuple(payload.get("evidence") or ()),
        layer=payload.get("layer") or "short",
        layer_since=payload.get("layer_since", time),
        **meta_of(payload),
    )


class MemoryHit(MemoryRecord):
    """A search result: the memory, its retrieval score and the tier it came from."""

    score: float
    tier: str = "warm"


class KVHit(BaseModel, frozen=True):
    """A KV search result: which attribute matched, its current value and the score."""

    key: str
    value: Any
    text: str
    score: float


def format_memories(hits: Sequence[MemoryHit | MemoryRecord]) -> str:
    """The seed's text format, one memory a line, as fed into prompts."""
    return "\n".join(
        f"- {h.text} [day: {h.day}, time: {format_time_of_day(h.t)}, "
        f"location: {h.location or 'unknown'}]"
        for h in hits
    )
