"""Configs of the memory policies besides forgetting; each off by default, each on its own."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from societas.memory.model.records_meta import MemoryType

# Seed 001's weights: 0.2 base, 0.2 time, 0.2 access, 0.2 feedback, 0.1 links, 0.1 content.
SEED_WEIGHTS = {
    **dict.fromkeys(("base_weight", "age_weight", "access_weight", "feedback_weight"), 0.2),
    **dict.fromkeys(("association_weight", "content_weight"), 0.1),
    "access_saturation": 10.0,
}


class TemporalPolicy(BaseModel, extra="forbid"):
    """Memories of one episode linked in order by `temporal` associations to the previous ones."""

    enabled: bool = False
    strength: float = Field(0.9, gt=0.0, le=1.0, description="Link to the previous memory.")
    span: int = Field(1, ge=1, le=16, description="How many earlier memories each links to.")
    decay: float = Field(0.5, gt=0.0, le=1.0, description="Strength factor per step back.")
    remember_turns: bool = Field(
        True, description="Runs: each participant also remembers the other's conversation lines."
    )
    max_open_episodes: int = Field(
        100_000, ge=1, description="Episodes whose last memories are kept (oldest dropped)."
    )


class ContradictionPolicy(BaseModel, extra="forbid"):
    """New memories judged against the agent's most similar ones (rules, or the LLM in runs)."""

    enabled: bool = False
    candidates: int = Field(3, ge=1, le=50, description="Most similar memories per new one.")
    min_similarity: float = Field(
        0.3, ge=0.0, le=1.0, description="Cosine below which a pair is not judged."
    )
    batch_size: int = Field(20, ge=1, le=500, description="Pairs per judge call.")
    strength: float = Field(1.0, gt=0.0, le=1.0)
    run_every_ticks: int = Field(1, ge=1)


class HabitPolicy(BaseModel, extra="forbid"):
    """Actions repeated at a similar time of day (and place) become one procedural memory."""

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


class ImportanceRecompute(BaseModel, extra="forbid"):
    """Importance recomputed in batch by the additive formula or the seed's weighted sum."""

    enabled: bool = False
    formula: Literal["additive", "seed"] = "additive"
    base_weight: float = Field(
        1.0, ge=0.0, le=1.0, description="Seed formula: weight of the rating."
    )
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
    content_weight: float = Field(0.0, ge=0.0, le=1.0)
    richness_words: int = Field(
        20, ge=1, description="Distinct words of unstructured text at which richness is 1."
    )
    quantum: float = Field(0.01, gt=0.0, le=0.1, description="Importance rounded to this.")

    @model_validator(mode="after")
    def _some_weight(self) -> ImportanceRecompute:
        if self.formula == "seed":
            for name, value in SEED_WEIGHTS.items():
                if name not in self.model_fields_set:
                    setattr(self, name, value)
        weights = ("age", "access", "feedback", "association", "content")
        if self.enabled and not any(getattr(self, f"{w}_weight") for w in weights):
            raise ValueError("importance recompute is enabled but every weight is 0")
        return self


SEED_TTLS: dict[MemoryType, float] = {"session": 3600.0, "task": 7200.0}  # the seed's Redis TTLs


class SessionPolicy(BaseModel, extra="forbid"):
    """Seed 001's short-term memory: memories of these types expire `ttl_seconds` after writing."""

    enabled: bool = False
    ttl_seconds: dict[MemoryType, Annotated[float, Field(gt=0.0)]] = Field(
        default_factory=lambda: dict(SEED_TTLS),
        description="Memory type -> seconds it lives (the seed's session and task TTLs).",
    )


class PreferencePolicy(BaseModel, extra="forbid"):
    """Seed 001's preference evolution: a timeline per attitude, stability and trend over it."""

    enabled: bool = False
    window: int = Field(5, ge=2, le=100, description="Points stability and trend read.")
    trend_threshold: float = Field(
        0.25, ge=0.0, description="Slope (scale units per point) below which the trend is stable."
    )
    max_points: int = Field(20, ge=2, le=1000, description="Timeline points kept.")
