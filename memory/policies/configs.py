"""Configs of the memory policies: temporal links, contradiction check, procedural
habits and importance recomputation (each off by default, each switchable on its own)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TemporalPolicy(BaseModel):
    """Memories written from one episode (a conversation) linked in order by `temporal`
    associations: each to the previous `span` ones, `strength` × `decay` per step back."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    strength: float = Field(0.9, gt=0.0, le=1.0, description="Link to the previous memory.")
    span: int = Field(1, ge=1, le=16, description="How many earlier memories each links to.")
    decay: float = Field(0.5, gt=0.0, le=1.0, description="Strength factor per step back.")
    remember_turns: bool = Field(
        True,
        description="Runs: each participant also remembers the other's lines of a routed "
        "conversation (topic dialogue), so the summary has an ordered episode to link to.",
    )
    max_open_episodes: int = Field(
        100_000, ge=1, description="Episodes whose last memories are kept (oldest dropped)."
    )


class ContradictionPolicy(BaseModel):
    """New memories compared with their most similar memories of the same agent by a judge
    (rules, or the LLM in runs), one judge call per `batch_size` pairs, on the tier schedule."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    candidates: int = Field(3, ge=1, le=50, description="Most similar memories per new one.")
    min_similarity: float = Field(
        0.3, ge=0.0, le=1.0, description="Cosine below which a pair is not judged."
    )
    batch_size: int = Field(20, ge=1, le=500, description="Pairs per judge call.")
    strength: float = Field(1.0, gt=0.0, le=1.0)
    run_every_ticks: int = Field(1, ge=1)


class HabitPolicy(BaseModel):
    """Cognitive profile: actions repeated `min_repeats` times at a similar time of day (and
    place) become one procedural memory, re-strengthened when repeated again."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    min_repeats: int = Field(3, ge=2, le=1000)
    time_window_minutes: int = Field(60, ge=1, le=1440, description="Time-of-day bucket.")
    same_place: bool = Field(True, description="Count repeats per place, not only per time.")
    distinct_days: bool = Field(True, description="Count at most one repeat a day.")
    markers: list[str] = Field(
        default_factory=lambda: [" is going to ", " am going to "],
        min_length=1,
        description="A perceived text is an action when it holds one; the action (a verb "
        "phrase: 'work at the bakery') follows it.",
    )
    importance: float = Field(0.5, ge=0.0, le=1.0, description="Importance of a new habit.")
    strengthen_by: float = Field(0.05, ge=0.0, le=1.0, description="Added per later repeat.")
    tag: str = Field("habit", min_length=1, max_length=64)


class ImportanceRecompute(BaseModel):
    """Importance recomputed in batch on the tier schedule from the rated (base) importance:
    base + w_age·(recency−1) + w_access·access + w_feedback·feedback + w_association·links,
    clamped to [0, 1] and quantised so the vector store gets one write per distinct value."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    run_every_ticks: int = Field(48, ge=1)
    age_weight: float = Field(0.2, ge=0.0, le=1.0)
    age_tau_days: float = Field(7.0, gt=0.0, description="Recency exp(-age/τ).")
    access_weight: float = Field(0.2, ge=0.0, le=1.0)
    access_saturation: float = Field(5.0, gt=0.0, description="1-exp(-reads/s).")
    access_tau_days: float = Field(
        7.0, gt=0.0, description="Reads count less as the last one ages: exp(-Δ/τ)."
    )
    feedback_weight: float = Field(0.3, ge=0.0, le=1.0)
    feedback_scale: float = Field(2.0, gt=0.0, description="tanh(feedback/scale).")
    association_weight: float = Field(0.1, ge=0.0, le=1.0)
    association_saturation: float = Field(3.0, gt=0.0, description="1-exp(-Σstrength/s).")
    quantum: float = Field(0.01, gt=0.0, le=0.1, description="Importance rounded to this.")

    @model_validator(mode="after")
    def _some_weight(self) -> ImportanceRecompute:
        weights = (
            self.age_weight,
            self.access_weight,
            self.feedback_weight,
            self.association_weight,
        )
        if self.enabled and not any(weights):
            raise ValueError("importance recompute is enabled but every weight is 0")
        return self
