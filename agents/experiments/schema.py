"""Pydantic models of the experiment parts of a scenario: selectors, interventions, custom
status attributes, custom blocks, surveys, arms and branch patches.

They live apart from `agents.scenario` (which composes them) so the reference page
(configs/REFERENCE.md) can be generated from one place and `scenario.py` stays small.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from societas.memory import MemoryAttribute
from societas.memory.model.config import check_value

NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
IMPORT_PATH = r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"
# What an arm or a branch patch may not change: the population and the clock are shared.
SHARED_FIELDS = ("seed", "agents", "map", "network", "topics", "tick_minutes", "start_hour")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Selector(_Strict):
    """Which agents an intervention or survey reaches (all given conditions must hold)."""

    all: bool = Field(False, description="Every agent (the default when nothing else is given).")
    ids: list[int] | None = Field(None, description="These agent ids.")
    fraction: float | None = Field(None, gt=0, le=1, description="Seeded share of agents.")
    count: int | None = Field(None, ge=1, description="Seeded sample of exactly N agents.")
    share: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Seeded sample of this share of all agents (rounded, at least 1): "
        "scales with the population, unlike count.",
    )
    occupation: list[str] | None = Field(None, description="Agents with one of these jobs.")
    income_below: float | None = Field(None, description="Monthly income strictly below.")
    income_above: float | None = Field(None, description="Monthly income strictly above.")
    age_min: int | None = Field(None, description="Age at least.")
    age_max: int | None = Field(None, description="Age at most.")


class Intervention(_Strict):
    """Something that happens at `tick` to the selected agents."""

    tick: int = Field(ge=0, description="Tick it happens at (0-based, < ticks).")
    kind: Literal["event", "fact", "policy", "set"] = Field(
        description="event: the agents observe `text`; fact: they learn fact `fact`; "
        "policy: `policy` with `amount` (ubi: a monthly basic income); set: status `values`."
    )
    select: Selector = Field(default_factory=lambda: Selector(all=True))
    text: str | None = Field(None, description="event: what the agents observe.")
    importance: float | None = Field(None, ge=0, le=1, description="event: 0..1 poignancy.")
    danger: bool = Field(False, description="event: marks the town as dangerous.")
    all_clear: bool = Field(False, description="event: ends the danger and evacuations.")
    trust_gated: bool = Field(
        False, description="event: each agent attends with probability = its trust."
    )
    fact: str | None = Field(None, description="fact: the fact id given.")
    policy: Literal["ubi"] | None = Field(None, description="policy: which policy.")
    amount: float | None = Field(None, description="policy: monthly amount (ubi: >= 0).")
    values: dict[str, Any] | None = Field(
        None, description="set: status attributes to set (built-in or declared in attributes)."
    )
    every: Annotated[int, Field(ge=1)] | Literal["day"] | None = Field(
        None, description="Fire again every N ticks (or every simulated day) from `tick`."
    )
    until: int | None = Field(None, ge=0, description="With every: the last tick it may fire.")
    when: str | None = Field(
        None,
        description="Only the selected agents whose status satisfies this expression when it "
        "fires, e.g. `income < 1500` (evaluated before the tick's interventions).",
    )

    @model_validator(mode="after")
    def _fields_for_kind(self) -> Intervention:
        need = {
            "event": ("text",),
            "fact": ("fact",),
            "policy": ("policy", "amount"),
            "set": ("values",),
        }[self.kind]
        missing = [n for n in need if getattr(self, n) is None]
        if missing:
            raise ValueError(f"kind {self.kind!r} needs {', '.join(missing)}")
        if self.kind == "policy" and self.amount is not None and self.amount < 0:
            raise ValueError(f"amount: a basic income cannot be negative, got {self.amount!r}")
        if self.kind == "set" and not self.values:
            raise ValueError("kind 'set' needs at least one entry in values")
        return self


class AttributeSpec(_Strict):
    """A custom status attribute every agent gets (AgentSociety's MemoryConfig entry)."""

    name: str = Field(pattern=NAME, description="Status key, e.g. mood or ubi_benefit.")
    type: Literal["str", "int", "float", "bool", "list", "dict"]
    default: Any = Field(None, description="Initial value unless the profiles file has one.")
    description: str = ""
    embedded: bool = Field(False, description="Index its text for status.search.")
    embedding_template: str | None = Field(None, description="Text indexed; '{}' = the value.")

    @model_validator(mode="after")
    def _default_fits(self) -> AttributeSpec:
        if self.default is not None:
            try:
                check_value(self.name, self.type, self.default)
            except TypeError as err:
                raise ValueError(f"default: {err}") from None
        return self

    def memory_attribute(self) -> MemoryAttribute:
        """The memory layer's attribute for this spec."""
        return MemoryAttribute(
            name=self.name,
            type=self.type,
            default_or_value=self.default,
            description=self.description,
            whether_embedding=self.embedded,
            embedding_template=self.embedding_template,
        )


class BlockSpec(_Strict):
    """A block of your own, by import path `module:Class`, run after the built-in blocks."""

    path: str = Field(pattern=IMPORT_PATH, description="e.g. lab_blocks:MoodBlock")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments for the class (besides scenario)."
    )


class Question(_Strict):
    """One survey question."""

    id: str = Field(pattern=NAME, description="Question name (the question_id column).")
    kind: Literal["likert", "choice", "number", "open"] = Field(
        description="likert: a point 1..scale; choice: one of options; number; open: free text."
    )
    text: str = Field(min_length=1, description="The question as put to the agent.")
    scale: int = Field(5, ge=2, le=11, description="likert: points, 1..scale.")
    options: list[str] | None = Field(
        None,
        description="choice: the possible answers, from most to least (a high status value "
        "picks the first under the rules policy).",
    )
    min: float | None = Field(None, description="number: smallest valid answer.")
    max: float | None = Field(None, description="number: largest valid answer.")
    attribute: str | None = Field(
        None,
        description="Status attribute the question is about: shown first in the prompt, and "
        "the rules policy answers from it.",
    )

    @model_validator(mode="after")
    def _kind_fields(self) -> Question:
        if self.kind == "choice" and (not self.options or len(self.options) < 2):
            raise ValueError("kind 'choice' needs at least two options")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) must be <= max ({self.max})")
        return self


class SurveyConfig(_Strict):
    """Questions put to the selected agents at simulated `day` and `hour` (after that tick)."""

    id: str = Field(pattern=NAME, description="Survey name (the survey column).")
    day: int = Field(ge=0, description="Simulated day, 0 = the first.")
    hour: float = Field(
        ge=0, lt=24, description="Hour of that day; runs at the end of the tick holding it."
    )
    select: Selector = Field(default_factory=lambda: Selector(all=True))
    questions: list[Question] = Field(min_length=1)
    memories: int = Field(3, ge=0, le=20, description="Memories retrieved per question.")
    remember: bool = Field(
        False, description="Store each answer in the agent's memory (topic 'survey')."
    )

    @model_validator(mode="after")
    def _unique(self) -> SurveyConfig:
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"question ids must be unique within a survey, got {ids}")
        return self


class ExperimentPatch(_Strict):
    """Changes to a scenario: `overrides` deep-merged into it (lists replaced) and
    `interventions` appended to its list (existing ones keep their seeded selections)."""

    scenario: str | None = Field(
        None,
        description="branch patch: the experiment YAML (relative to the patch) whose blocks "
        "are imported; code is never imported from a run folder.",
    )
    overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="Scenario fields to change, deep-merged (lists replaced); not "
        + ", ".join(SHARED_FIELDS)
        + ".",
    )
    interventions: list[Intervention] = Field(
        default_factory=list, description="Added after the scenario's own interventions."
    )

    @model_validator(mode="after")
    def _shared(self) -> ExperimentPatch:
        fixed = sorted(set(self.overrides) & {*SHARED_FIELDS, "arms", "name"})
        if fixed:
            raise ValueError(f"overrides cannot change {fixed} (shared by arms and branches)")
        return self


class ArmConfig(ExperimentPatch):
    """One arm of an experiment: the scenario with this patch; all arms share seed and
    population and run in one command, each into OUT/<name>."""

    name: str = Field(pattern=r"^[A-Za-z0-9_\-]+$", description="Arm name and folder name.")


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge `over` into a copy of `base`: dicts merge, everything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
