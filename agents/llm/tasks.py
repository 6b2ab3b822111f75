"""Output schemas of the cognition call sites (the contract between cognition and the gateway).

Each call site names a task; the gateway validates a model's JSON against the schema here,
and the `rules` policy produces outputs valid for the same schemas.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)

from societas.agents.llm.answer_checks import Answer, Said, is_filler, screen
from societas.agents.llm.plan_checks import is_placeholder, screen_items, screen_steps
from societas.agents.llm.provenance import reason_of, source_of


class Reply(BaseModel):
    """A call site's answer; the gateway notes where it came from (`answer_source`)."""

    model_config = ConfigDict(extra="ignore")
    _answer_source: str | None = PrivateAttr(default=None)
    _fallback_reason: str | None = PrivateAttr(default=None)

    @property
    def answer_source(self) -> str:
        """first_try, repaired, re_asked, fallback, rules or replayed (see provenance)."""
        return source_of(self)

    @property
    def fallback_reason(self) -> str | None:
        """For a fallback, the last problem of the model's answers ("no reply", a failed check)."""
        return reason_of(self)

    def __eq__(self, other: object) -> bool:
        """Equal answers are equal whatever their source (fields and extras compared)."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, BaseModel)
        return self.__dict__ == other.__dict__ and (
            self.__pydantic_extra__ == other.__pydantic_extra__
        )

    __hash__ = None  # type: ignore[assignment]


_Out = Reply


class ImportanceScore(_Out):
    """Poignancy of one memory on the Generative Agents 1..10 scale (stored as score/10)."""

    score: int = Field(ge=1, le=10)


class Screened(_Out):
    """A list answer whose bad entries are dropped and counted in `dropped` (the gateway
    adds it to the task's `dropped_items`)."""

    _dropped: int = PrivateAttr(default=0)

    @property
    def dropped(self) -> int:
        """Entries of the model's answer dropped as filler or out of range."""
        return self._dropped


def screened(
    data: Any, key: str, screen_list: Callable[[Any], tuple[Any, int]], handler: Any
) -> Any:
    """`handler(data)` with the list under `key` screened first; the count dropped is kept."""
    dropped = 0
    if isinstance(data, dict) and key in data:
        kept, dropped = screen_list(data.get(key))
        data = {**data, key: kept}
    out = handler(data)
    out._dropped = dropped
    return out


class ReflectionQuestions(Screened):
    """Salient high-level questions raised by recent memories (filler ones dropped)."""

    questions: list[Said] = Field(min_length=1, max_length=10)

    @model_validator(mode="wrap")
    @classmethod
    def _screen(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        return screened(data, "questions", screen, handler)


class Insight(_Out):
    """One inferred statement and the 1-based indices of the statements it rests on."""

    text: Said = Field(min_length=1)
    evidence: list[int] = Field(default_factory=list)


class ReflectionInsights(Screened):
    """Insights answering one reflection question (filler ones dropped)."""

    insights: list[Insight] = Field(min_length=1, max_length=10)

    @model_validator(mode="wrap")
    @classmethod
    def _screen(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        return screened(data, "insights", lambda v: screen(v, _filler_insight), handler)


def _filler_insight(raw: Any) -> bool:
    return isinstance(raw, dict) and is_filler(raw.get("text"))


# Plan texts repeat across agents and days ("work", "have dinner", a home's name): interned,
# every agent's plan shares one string instead of the copy each parsed answer made.
Interned = Annotated[str, AfterValidator(sys.intern)]


class PlanItem(_Out):
    """One broad stroke of a day: from `start_hour`, do `activity` at `location`."""

    start_hour: int = Field(ge=0, le=23)
    activity: Interned = Field(min_length=1)
    location: Interned = Field(min_length=1)


class DailyPlan(Screened):
    """The day in broad strokes, ordered by start hour, one item an hour; placeholder items
    ("...", "going to ...") are dropped and counted in `dropped` (too many: invalid)."""

    items: list[PlanItem] = Field(min_length=1, max_length=24)

    @model_validator(mode="wrap")
    @classmethod
    def _screen(cls, data: Any, handler: ModelWrapValidatorHandler[DailyPlan]) -> DailyPlan:
        return screened(data, "items", screen_items, handler)

    @field_validator("items")
    @classmethod
    def _sorted(cls, v: list[PlanItem]) -> list[PlanItem]:
        return sorted(v, key=lambda p: p.start_hour)


class PlanStep(_Out):
    """One fine-grained action inside an hour."""

    minute: int = Field(ge=0, le=59)
    duration_min: int = Field(ge=1, le=60)
    action: Interned = Field(min_length=1)


class HourlyPlan(Screened):
    """An hour of the daily plan decomposed into steps in minute order; placeholder steps are
    dropped and counted in `dropped` (too many: invalid). Whether the steps tile the hour is
    a meaning check (an answer that does not is re-asked, never re-tiled)."""

    steps: list[PlanStep] = Field(min_length=1, max_length=12)

    @model_validator(mode="wrap")
    @classmethod
    def _screen(cls, data: Any, handler: ModelWrapValidatorHandler[HourlyPlan]) -> HourlyPlan:
        return screened(data, "steps", screen_steps, handler)

    @field_validator("steps")
    @classmethod
    def _sorted(cls, v: list[PlanStep]) -> list[PlanStep]:
        return sorted(v, key=lambda s: s.minute)


class Reaction(_Out):
    """Whether to react to an observed event, how, and what to do instead (re-plan)."""

    react: bool
    reaction: str = ""
    new_activity: str | None = None
    location: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_placeholders(cls, data: Any) -> Any:
        """Placeholder text ("... or null") counts as not given."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key in ("new_activity", "location"):
            if out.get(key) is not None and is_placeholder(out[key]):
                out[key] = None
        if out.get("reaction") and is_placeholder(out["reaction"]):
            out["reaction"] = ""
        return out


class DialogueTurn(_Out):
    """One utterance in a conversation and whether the speaker ends it."""

    utterance: Said = Field(min_length=1)
    end: bool = False


class ThoughtUpdate(_Out):
    """The agent's current inner thought and emotion (AgentSociety-style)."""

    thought: Said = Field(min_length=1)
    emotion: Said = Field(min_length=1)
    intensity: float = Field(ge=0, le=1)


class AttitudeUpdate(_Out):
    """Stance on a topic, 0 (fully against) .. 10 (fully for) as in the AgentSociety seed."""

    attitude: float = Field(ge=0, le=10)
    reason: str = ""

    @field_validator("reason")
    @classmethod
    def _no_filler(cls, v: str) -> str:
        """A filler reason counts as none given (the attitude still stands)."""
        return "" if v and is_filler(v) else v


class Summary(_Out):
    """A consolidation summary standing for several memories."""

    summary: Said = Field(min_length=1)


class SurveyAnswer(_Out):
    """An agent's answer to one survey or interview question: the words and, for likert,
    choice and number questions, the value (likert point, option index, number)."""

    answer: Answer = Field(min_length=1)
    value: float | None = None


TASK_SCHEMAS: dict[str, type[BaseModel]] = {
    "importance": ImportanceScore,  # batched: {"results": [ImportanceScore, ...]}
    "reflection_questions": ReflectionQuestions,
    "reflection_insights": ReflectionInsights,
    "daily_plan": DailyPlan,
    "hourly_plan": HourlyPlan,
    "reaction": Reaction,
    "dialogue_turn": DialogueTurn,
    "thought_update": ThoughtUpdate,
    "attitude_update": AttitudeUpdate,
    "consolidation": Summary,
    "survey": SurveyAnswer,
}
