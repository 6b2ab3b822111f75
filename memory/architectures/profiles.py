"""Memory profiles per agent: the architecture each agent runs, chosen by its agent type."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, model_validator

from societas.memory.architectures.cognitive import CognitiveConfig
from societas.memory.policies.forgetting import (
    LAYERS,
    ForgettingPolicy,
    LayerPolicy,
    finmem_forgetting,
)

if TYPE_CHECKING:
    from societas.memory.model.config import GroupMemoryConfig

ProfileName = Literal["default", "finmem", "cognitive"]
DEFAULT_TYPE = "citizen"  # the built-in `type` attribute's default


class AgentTypeMemory(BaseModel, extra="forbid"):
    """The memory profile of one agent type and its config (unset: the scenario's)."""

    profile: ProfileName = Field(description="Memory architecture of agents of this type.")
    cognitive: CognitiveConfig | None = Field(
        None, description="Cognitive layers' knobs (profile cognitive); unset: memory.cognitive."
    )
    forgetting: ForgettingPolicy | None = Field(
        None,
        description="Forgetting policy of this type; unset: FinMem's for finmem, else the "
        "scenario's memory.policies.forgetting when the scenario's profile is not finmem.",
    )

    @model_validator(mode="after")
    def _knobs_fit(self) -> AgentTypeMemory:
        if self.cognitive is not None and self.profile != "cognitive":
            raise ValueError(
                f"cognitive: only a type with profile 'cognitive' takes it, got profile "
                f"{self.profile!r}"
            )
        return self


@dataclass(frozen=True, slots=True)
class Resolved:
    """What one agent type runs: profile name, forgetting policy, cognitive config."""

    profile: str
    forgetting: ForgettingPolicy
    cognitive: CognitiveConfig


def natural_decay(config: CognitiveConfig) -> ForgettingPolicy:
    """The cognitive profile's natural decay in every layer; nothing is ever moved or dropped."""
    if config.decay_per_day is None:
        return _OFF
    layer = LayerPolicy(
        importance_decay_per_day=config.decay_per_day, recency_tau_days=config.recency_days
    )
    never = 2**62  # no pass is ever due: nothing to move or clean up
    return ForgettingPolicy(
        enabled=True, layers=dict.fromkeys(LAYERS, layer), access_boost=0.0, run_every_ticks=never
    )


def resolve(config: GroupMemoryConfig, agent_type: str) -> Resolved:
    """The profile of `agent_type` under `config` (the scenario's when the type has none)."""
    own = config.agent_types.get(agent_type)
    if own is None:
        return _decaying(Resolved(config.profile, config.policies.forgetting, config.cognitive))
    if own.forgetting is not None:
        forgetting = own.forgetting
    elif (own.profile == "finmem") == (config.profile == "finmem"):
        forgetting = config.policies.forgetting  # both FinMem or neither: the scenario's
    else:  # FinMem's own for a finmem type, none for another type in a FinMem scenario
        forgetting = finmem_forgetting() if own.profile == "finmem" else _OFF
    return _decaying(Resolved(own.profile, forgetting, own.cognitive or config.cognitive))


def _decaying(r: Resolved) -> Resolved:
    if r.profile != "cognitive" or r.forgetting.enabled:
        return r
    return replace(r, forgetting=natural_decay(r.cognitive))


_OFF = ForgettingPolicy()


class AgentProfiles:
    """Each agent's resolved profile in one group (assigned when the agent is registered)."""

    def __init__(self, config: GroupMemoryConfig) -> None:
        self.config = config
        names = [DEFAULT_TYPE, *config.agent_types]
        self.by_type: dict[str, Resolved] = {name: resolve(config, name) for name in names}
        self.scenario = resolve(config, "\0")  # agents of a type not listed
        self.type_of: dict[int, str] = {}
        self._refresh()

    def _refresh(self) -> None:
        """Figures every search reads, computed once (the config does not change)."""
        possible = [self.scenario, *self.by_type.values()]
        self.uses_cognitive = any(r.profile == "cognitive" for r in possible)
        self.any_forgetting = any(r.forgetting.enabled for r in possible)

    def assign(self, agent_id: int, agent_type: Any) -> None:
        """Record an agent's type (its KV `type`; the default type when unset)."""
        name = agent_type if isinstance(agent_type, str) and agent_type else DEFAULT_TYPE
        self.type_of[agent_id] = name

    def quiet(self) -> AgentProfiles:
        """A view with every forgetting policy off, for searches that must not count as reads."""
        other = copy.copy(self)
        other.by_type = {k: replace(r, forgetting=_OFF) for k, r in self.by_type.items()}
        other.scenario = replace(self.scenario, forgetting=_OFF)
        other._refresh()
        return other

    def assign_from_kv(self, kv: Mapping[str, Mapping[int, Any]], agents: set[int]) -> None:
        """Every agent's profile from the group's KV columns (after a restore)."""
        types = kv.get("type", {})
        for agent_id in sorted(agents):
            self.assign(agent_id, types.get(agent_id))

    def _of(self, agent_id: int) -> Resolved:
        name = self.type_of.get(agent_id)
        return self.scenario if name is None else self.by_type.get(name, self.scenario)

    def profile(self, agent_id: int) -> str:
        return self._of(agent_id).profile

    def forgetting(self, agent_id: int) -> ForgettingPolicy:
        return self._of(agent_id).forgetting

    def cognitive(self, agent_id: int) -> CognitiveConfig:
        return self._of(agent_id).cognitive

    def _per_layer(self, agent_id: int, knob: str) -> dict[str, float] | None:
        policy = self._of(agent_id).forgetting
        return {n: getattr(p, knob) for n, p in policy.layers.items()} if policy.enabled else None

    def layer_decay(self, agent_id: int) -> dict[str, float] | None:
        """The agent's daily importance decay per layer for the engine's formula (None: off)."""
        return self._per_layer(agent_id, "importance_decay_per_day")

    def layer_recency(self, agent_id: int) -> dict[str, float] | None:
        """The agent's recency constant Q in days per layer (FinMem's e^(−Δ/Q); None: off)."""
        return self._per_layer(agent_id, "recency_tau_days")

    def is_cognitive(self, agent_id: int) -> bool:
        return self._of(agent_id).profile == "cognitive"

    def due_forgetting(self, ticks: int) -> list[ForgettingPolicy]:
        """Enabled forgetting policies whose cadence falls on `ticks` (distinct objects)."""
        policies = [r.forgetting for r in [self.scenario, *self.by_type.values()]]
        due = {id(f): f for f in policies if f.enabled and ticks % f.run_every_ticks == 0}
        return list(due.values())

    def rows(self) -> list[tuple[int, str, str]]:
        """(agent_id, agent type, profile) of every registered agent, by id."""
        return [(a, self.type_of[a], self._of(a).profile) for a in sorted(self.type_of)]
