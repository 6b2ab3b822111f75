"""Memory policy configs: FinMem forgetting layers, consolidation, associations, and all."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from societas.memory.model.associations import AssociationType
from societas.memory.policies.configs import (
    ContradictionPolicy,
    HabitPolicy,
    ImportanceRecompute,
    PreferencePolicy,
    SessionPolicy,
    TemporalPolicy,
)

LAYERS = ("short", "mid", "long", "reflection")
LayerName = Literal["short", "mid", "long", "reflection"]
_UP: dict[LayerName, LayerName] = {"short": "mid", "mid": "long"}
_DOWN: dict[LayerName, LayerName] = {"long": "mid", "mid": "short"}


class LayerPolicy(BaseModel, extra="forbid"):
    """Decay and thresholds of one FinMem layer."""

    importance_decay_per_day: float = Field(gt=0.0, le=1.0)
    recency_tau_days: float = Field(gt=0.0)
    promote_at: float | None = Field(None, ge=0.0, le=1.0)
    demote_below: float | None = Field(None, gt=0.0, lt=1.0)
    cleanup_below: float | None = Field(None, ge=0.0, le=1.0)
    demote_importance_below: float | None = Field(None, gt=0.0, lt=1.0)
    cleanup_recency_below: float | None = Field(None, gt=0.0, lt=1.0)
    promote_after_accesses: int | None = Field(
        None, ge=1, description="Cumulative reads at which a memory moves up a layer."
    )

    @model_validator(mode="after")
    def _ordered(self) -> LayerPolicy:
        promote, cleanup = self.promote_at, self.cleanup_below
        if promote is not None and cleanup is not None and promote <= cleanup:
            raise ValueError(f"promote_at ({promote}) must be above cleanup_below ({cleanup})")
        return self


def _layer(decay: float, tau_days: float, **rules: Any) -> LayerPolicy:
    """A layer decaying by `decay` a day, with recency time constant `tau_days` and `rules`."""
    return LayerPolicy(importance_decay_per_day=decay, recency_tau_days=tau_days, **rules)


def _default_layers() -> dict[LayerName, LayerPolicy]:
    return {
        "short": _layer(0.9, 3, promote_at=0.8, cleanup_below=0.05),
        "mid": _layer(0.967, 90, promote_at=0.9, demote_below=0.05, cleanup_below=0.02),
        "long": _layer(0.988, 365, demote_below=0.05),
        "reflection": _layer(0.988, 365),
    }


class ForgettingPolicy(BaseModel, extra="forbid"):
    """FinMem-style layers with importance decay, clean-up, promotion and demotion."""

    enabled: bool = False
    layers: dict[LayerName, LayerPolicy] = Field(default_factory=_default_layers)
    access_boost: float = Field(0.05, ge=0.0, le=1.0, description="Importance added per hit.")
    forget: bool = Field(
        False, description="Drop cleaned-up memories (counted) instead of moving them to cold."
    )
    run_every_ticks: int = Field(48, ge=1)
    per_layer_retrieval: bool = Field(
        False, description="FinMem: a search returns its top_k from every layer, merged."
    )

    @model_validator(mode="after")
    def _all_layers(self) -> ForgettingPolicy:
        missing = [name for name in LAYERS if name not in self.layers]
        if missing:
            raise ValueError(f"layers must define {list(LAYERS)}; missing {missing}")
        return self

    def effective_importance(
        self, importance: float, layer: LayerName, since: float, now: float
    ) -> float:
        """Importance decayed per simulated day since it was last set (the engine's formula)."""
        days = max(0.0, now - since) / 86_400.0
        return importance * self.layers[layer].importance_decay_per_day ** days

    def layer_recency(self, layer: LayerName, last_access: float, now: float) -> float:
        return math.exp(
            -max(0.0, now - last_access) / 86_400.0 / self.layers[layer].recency_tau_days
        )

    def _earned(self, layer: LayerName, access_count: int) -> bool:
        """Whether the access counter alone lifted a memory into `layer` (no demotion then)."""
        return _reached(access_count, self.layers[_DOWN[layer]].promote_after_accesses)

    def decide(
        self,
        importance: float,
        layer: LayerName,
        since: float,
        last_access: float,
        now: float,
        access_count: int = 0,
    ) -> tuple[str, float]:
        """('keep'|'cleanup'|'promote'|'demote', effective importance) for one memory."""
        policy = self.layers[layer]
        eff = self.effective_importance(importance, layer, since, now)
        recency = self.layer_recency(layer, last_access, now)
        if _below(eff, policy.cleanup_below) or _below(recency, policy.cleanup_recency_below):
            return "cleanup", eff
        if layer in _UP and (
            _reached(eff, policy.promote_at)
            or _reached(access_count, policy.promote_after_accesses)
        ):
            return "promote", eff
        if layer in _DOWN and (
            (_below(eff, policy.demote_importance_below) and not self._earned(layer, access_count))
            or _below(recency, policy.demote_below)
        ):
            return "demote", eff
        return "keep", eff


def _below(value: float, threshold: float | None) -> bool:
    """Whether a rule is on (`threshold` set) and `value` falls below it."""
    return threshold is not None and value < threshold


def _reached(value: float, threshold: float | None) -> bool:
    """Whether a rule is on (`threshold` set) and `value` reaches it."""
    return threshold is not None and value >= threshold


def finmem_layers() -> dict[LayerName, LayerPolicy]:
    """FinMem's layer settings (Yu et al. 2023, its released config), importance on 0–1."""
    cleanup = {"cleanup_below": 0.05, "cleanup_recency_below": 0.05}
    return {
        "short": _layer(0.9, 3, promote_at=0.6, promote_after_accesses=3, **cleanup),
        "mid": _layer(
            0.967,
            90,
            promote_at=0.8,
            promote_after_accesses=6,
            demote_importance_below=0.6,
            **cleanup,
        ),
        "long": _layer(0.988, 365, demote_importance_below=0.8, **cleanup),
        "reflection": _layer(0.988, 365, **cleanup),
    }


def finmem_forgetting() -> ForgettingPolicy:
    """The `finmem` profile's forgetting: the paper's layers, per-layer retrieval, deletion."""
    return ForgettingPolicy(
        enabled=True,
        layers=finmem_layers(),
        per_layer_retrieval=True,
        access_boost=0.05,
        forget=True,
    )


def initial_layer(topic: str) -> LayerName:
    """Reflections live in their own layer; everything else starts short-term."""
    return "reflection" if topic == "reflection" else "short"


def next_layer(layer: LayerName, action: str) -> LayerName:
    return _UP[layer] if action == "promote" else _DOWN[layer]


class ConsolidationPolicy(BaseModel, extra="forbid"):
    """Similar recent memories of one agent clustered into one linked pattern memory."""

    enabled: bool = False
    similarity: float = Field(0.8, gt=0.0, le=1.0, description="Cosine of the vectors.")
    min_group: int = Field(3, ge=2)
    run_every_ticks: int = Field(48, ge=1)
    window_days: float | None = Field(
        7.0, gt=0.0, description="D: only memories this recent (None: all hot and warm)."
    )
    same_topic: bool = Field(True, description="Cluster only memories of one topic.")
    sources: Literal["mark", "cold"] = Field(
        "mark", description="Originals: tagged `consolidated` (mark) and also moved to cold."
    )


def _default_type_weights() -> dict[AssociationType, float]:
    return {"causal": 1.0, "similar": 0.8, "temporal": 0.6, "contradictory": 0.3}


class AssociationPolicy(BaseModel, extra="forbid"):
    """Spreading activation: hits pass a decaying share of their score along links."""

    decay: float = Field(0.5, gt=0.0, lt=1.0)
    max_hops: int = Field(1, ge=1, le=3)
    type_weights: dict[AssociationType, float] = Field(
        default_factory=_default_type_weights,
        description="Share of activation per association type (untyped links are causal).",
    )

    @model_validator(mode="after")
    def _weights(self) -> AssociationPolicy:
        bad = {k: v for k, v in self.type_weights.items() if not 0.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"type_weights must be in [0, 1], got {bad}")
        return self


class MemoryPolicies(BaseModel, extra="forbid"):
    """All memory policies of a group."""

    forgetting: ForgettingPolicy = Field(default_factory=ForgettingPolicy)
    consolidation: ConsolidationPolicy = Field(default_factory=ConsolidationPolicy)
    associations: AssociationPolicy = Field(default_factory=AssociationPolicy)
    temporal: TemporalPolicy = Field(default_factory=TemporalPolicy)
    contradiction: ContradictionPolicy = Field(default_factory=ContradictionPolicy)
    habits: HabitPolicy = Field(default_factory=HabitPolicy)
    importance: ImportanceRecompute = Field(default_factory=ImportanceRecompute)
    sessions: SessionPolicy = Field(default_factory=SessionPolicy)
    preferences: PreferencePolicy = Field(default_factory=PreferencePolicy)


def default_summary(texts: list[str]) -> str:
    """Rule-based consolidation summary (an LLM callback can replace it)."""
    first = texts[0].rstrip(".")
    return f"{first} (and {len(texts) - 1} similar memories)"
