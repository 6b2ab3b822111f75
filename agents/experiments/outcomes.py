"""Outcomes the researcher names (recorded per agent every K ticks) and the analysis plan
(primary outcome, subgroups defined on baseline values, covariates split into terciles).

A scenario's `outcomes:` lists status attributes (custom ones included), needs, attitudes
and derived values (a safe expression over status); each becomes rows of the `outcomes`
table (tick, agent_id, variable, value). `analysis:` names the primary outcome, subgroups
(expressions evaluated on the `baseline` table: every agent's status at the start of the
baseline tick, before the first intervention) and covariates whose terciles split effects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from societas.agents.experiments.expressions import Expression, ExpressionError, parse_expression

if TYPE_CHECKING:
    from societas.agents.scenario import ScenarioConfig

NEEDS = {
    "hunger": "hunger_satisfaction",
    "energy": "energy_satisfaction",
    "safety": "safety_satisfaction",
    "social": "social_satisfaction",
}
NUMERIC = ("int", "float", "bool")
SCALAR = ("int", "float", "bool", "str")
LABEL = r"^[A-Za-z_][A-Za-z0-9_ \-]*$"
BUILTIN_SUBGROUPS = ("all", "treated")
Problems = list[tuple[str, str]]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OutcomeSpec(_Strict):
    """One recorded outcome: a status attribute, a need, an attitude or an expression."""

    name: str = Field(pattern=LABEL, description="The `variable` value in the outcomes table.")
    attribute: str | None = Field(None, description="A numeric status attribute.")
    need: str | None = Field(None, description="hunger, energy, safety or social (0..1).")
    attitude: str | None = Field(None, description="A topic name (attitude 0..10).")
    expr: str | None = Field(
        None, description="An expression over status, e.g. `currency + transfers`."
    )

    @model_validator(mode="after")
    def _one_source(self) -> OutcomeSpec:
        given = [k for k in ("attribute", "need", "attitude", "expr") if getattr(self, k)]
        if len(given) > 1:
            raise ValueError(f"give one of attribute, need, attitude, expr; got {given}")
        return self


class OutcomesConfig(_Strict):
    """What is recorded per agent, every `every` ticks (and at the last tick)."""

    every: int = Field(1, ge=1, description="Ticks between records.")
    record: list[OutcomeSpec] = Field(
        default_factory=list,
        description="Outcomes; a bare name is a status attribute, a need or a topic.",
    )

    @field_validator("record", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value


class AnalysisConfig(_Strict):
    """The analysis plan, fixed before the run: primary outcome, subgroups, covariates."""

    primary: str | None = Field(
        None, description="The primary outcome (an outcome name); the others are secondary."
    )
    baseline_tick: int | None = Field(
        None,
        ge=0,
        description="Subgroups are defined on status at the start of this tick (default: "
        "the first intervention's tick over all arms, before it applies).",
    )
    subgroups: dict[str, str] = Field(
        default_factory=dict,
        description="Name -> expression over baseline status, e.g. `income < 2000`; "
        "`all` and `treated` (agents an intervention reached) are built in.",
    )
    terciles: list[str] = Field(
        default_factory=list,
        description="Numeric baseline attributes whose terciles split the effects.",
    )
    arm_base: str | None = Field(
        None, description="Set by `sweep:`: the arm this swept arm was made from."
    )
    sweep_point: dict[str, Any] = Field(
        default_factory=dict, description="Set by `sweep:`: this arm's swept field values."
    )


def baseline_tick(cfg: ScenarioConfig) -> int:
    """The tick whose start state defines subgroups: given, or the first intervention's
    over the scenario and every arm (so arms share it), 0 when there is none."""
    if cfg.analysis.baseline_tick is not None:
        return cfg.analysis.baseline_tick
    ticks = [iv.tick for iv in cfg.interventions]
    ticks += [iv.tick for arm in cfg.arms for iv in arm.interventions]
    return min(ticks, default=0)


def scalar_types(cfg: ScenarioConfig) -> dict[str, str]:
    """Status names an expression may read -> their type (needs by their short name too)."""
    from societas.agents.experiments.checks import memory_config_of

    schema = memory_config_of(cfg)
    out: dict[str, str] = {
        name: a.type for name, a in schema.attributes.items() if a.type in SCALAR
    }
    out.update({short: "float" for short in NEEDS})
    return out


def resolve(spec: OutcomeSpec, cfg: ScenarioConfig) -> tuple[str, str]:
    """(kind, key) of an outcome: attribute/need/attitude/expr; ValueError if unknown."""
    types = scalar_types(cfg)
    topics = {t.name for t in cfg.topics}
    if spec.expr is not None:
        return "expr", spec.expr
    if spec.need is not None:
        if spec.need not in NEEDS:
            raise ValueError(f"unknown need {spec.need!r}; needs are {sorted(NEEDS)}")
        return "need", NEEDS[spec.need]
    if spec.attitude is not None:
        if spec.attitude not in topics:
            raise ValueError(f"unknown topic {spec.attitude!r}; topics are {sorted(topics)}")
        return "attitude", spec.attitude
    key = spec.attribute or spec.name
    if key in NEEDS:
        return "need", NEEDS[key]
    if key in types:
        if types[key] not in NUMERIC:
            raise ValueError(f"status attribute {key!r} is a {types[key]}, not a number")
        return "attribute", key
    if spec.attribute is None and key in topics:
        return "attitude", key
    raise ValueError(
        f"unknown status attribute {key!r}; declare it under attributes:, or name a need "
        f"({', '.join(NEEDS)}) or a topic"
    )


def _expression_problem(text: str, known: set[str]) -> str | None:
    try:
        expr = parse_expression(text)
    except ExpressionError as err:
        return str(err)
    unknown = sorted(expr.names - known)
    if unknown:
        return f"{text!r} reads unknown status attribute(s) {unknown}"
    return None


def outcome_problems(cfg: ScenarioConfig) -> Problems:
    """Unknown outcomes, expressions that do not parse, a primary or covariate not known."""
    problems: Problems = []
    types = scalar_types(cfg)
    known = set(types)
    names = [o.name for o in cfg.outcomes.record]
    for i, spec in enumerate(cfg.outcomes.record):
        where = f"outcomes.record.{i}"
        if names.count(spec.name) > 1:
            problems.append((f"{where}.name", f"outcome {spec.name!r} is named twice"))
        try:
            kind, key = resolve(spec, cfg)
        except ValueError as err:
            field = next((k for k in ("attribute", "need", "attitude") if getattr(spec, k)), "name")
            problems.append((f"{where}.{field}", str(err)))
            continue
        if kind == "expr" and (msg := _expression_problem(key, known)) is not None:
            problems.append((f"{where}.expr", msg))
    plan = cfg.analysis
    if plan.primary is not None and plan.primary not in names:
        problems.append(
            ("analysis.primary", f"{plan.primary!r} is not an outcome; outcomes are {names}")
        )
    for name, text in plan.subgroups.items():
        where = f"analysis.subgroups.{name}"
        if name in BUILTIN_SUBGROUPS:
            problems.append((where, f"{name!r} is a built-in subgroup; choose another name"))
        elif (msg := _expression_problem(text, known)) is not None:
            problems.append((where, msg))
    for i, key in enumerate(plan.terciles):
        if types.get(key) not in NUMERIC:
            problems.append(
                (f"analysis.terciles.{i}", f"{key!r} is not a numeric status attribute")
            )
    if plan.baseline_tick is not None and plan.baseline_tick >= cfg.ticks:
        problems.append(
            ("analysis.baseline_tick", f"{plan.baseline_tick} is not < ticks ({cfg.ticks})")
        )
    return problems


class Status(Mapping[str, Any]):
    """One agent's status as expressions read it: hot state, then the KV memory; needs by
    their short names too."""

    __slots__ = ("_get", "_state")

    def __init__(self, state: Mapping[str, Any], get: Callable[[str], Any]) -> None:
        self._state = state
        self._get = get

    def __getitem__(self, key: str) -> Any:
        key = NEEDS.get(key, key)
        if key in self._state:
            return self._state[key]
        try:
            return self._get(key)
        except KeyError:
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._state)

    def __len__(self) -> int:
        return len(self._state)


def _number(value: Any) -> float | None:
    if isinstance(value, bool | int | float):
        return float(value)
    return None


class OutcomeRecorder:
    """Rows of the `outcomes`, `baseline` and `treated` tables for one group of agents."""

    def __init__(self, cfg: ScenarioConfig) -> None:
        self.every = cfg.outcomes.every
        self.last_tick = cfg.ticks - 1
        self.baseline_tick = baseline_tick(cfg)
        self.record_baseline = bool(cfg.outcomes.record or cfg.analysis != AnalysisConfig())
        self.scalars = sorted(k for k in scalar_types(cfg) if k not in NEEDS)
        self.outcomes: list[tuple[str, str, str | Expression]] = []
        for spec in cfg.outcomes.record:
            kind, key = resolve(spec, cfg)
            self.outcomes.append(
                (spec.name, kind, parse_expression(key) if kind == "expr" else key)
            )

    def due(self, tick: int) -> bool:
        """True when the outcomes are recorded at the end of `tick`."""
        return bool(self.outcomes) and (tick % self.every == 0 or tick == self.last_tick)

    def outcome_rows(self, tick: int, agent_id: int, status: Status) -> Iterator[tuple[Any, ...]]:
        """(tick, agent_id, variable, value) for each outcome (NaN when not a number)."""
        for name, kind, key in self.outcomes:
            if kind == "attitude":
                value: Any = status["attitude"].get(key, 5.0)
            elif isinstance(key, Expression):
                try:
                    value = key(status)
                except (ExpressionError, KeyError, ValueError, OverflowError):
                    value = None
            else:
                value = status[key]
            number = _number(value)
            yield (tick, agent_id, name, float("nan") if number is None else number)

    def baseline_rows(self, tick: int, agent_id: int, status: Status) -> Iterator[tuple[Any, ...]]:
        """(tick, agent_id, variable, value, text) for every scalar status attribute."""
        for key in self.scalars:
            try:
                value = status[key]
            except KeyError:
                continue
            number = _number(value)
            yield (tick, agent_id, key, number, "" if number is not None else str(value))

    def start(self, engine: Any, tick: int, fired: list[tuple[Any, set[int]]]) -> None:
        """At the start of `tick`, before its interventions: the baseline rows (at the
        baseline tick) and one `treated` row per agent each `fired` intervention reaches."""
        add = engine.results.add
        if tick == self.baseline_tick and self.record_baseline:
            for agent_id, agent in engine.agents.items():
                for row in self.baseline_rows(tick, agent_id, _status(engine, agent_id, agent)):
                    add("baseline", row)
        ivs = engine.scenario.interventions
        for iv, selected in fired:
            n = next(k for k, x in enumerate(ivs) if x is iv)
            for agent_id in sorted(selected):
                add("treated", (tick, agent_id, n, iv.kind))

    def end(self, engine: Any, tick: int) -> None:
        """At the end of `tick`: the outcome rows when they are due."""
        if not self.due(tick):
            return
        add = engine.results.add
        for agent_id, agent in engine.agents.items():
            for row in self.outcome_rows(tick, agent_id, _status(engine, agent_id, agent)):
                add("outcomes", row)


def status_of(engine: Any, agent_id: int) -> Status:
    """One of the engine's agents' status as expressions read it."""
    return _status(engine, agent_id, engine.agents[agent_id])


def _status(engine: Any, agent_id: int, agent: Any) -> Status:
    memory = engine.memory
    return Status(agent.state, lambda key: memory.kv_get(agent_id, key))


class BaselineError(RuntimeError):
    """Baseline values asked for before they exist (or in a scenario that records none)."""


def baseline_values(engine: Any) -> dict[int, dict[str, Any]]:
    """agent id -> this group's agents' status at the baseline tick (written or buffered
    rows; needs also by their short names); BaselineError before that tick ran."""
    from societas.agents.runtime.results import read_table

    rec: OutcomeRecorder = engine.outcomes
    now = engine.now.tick + 1 if engine.now is not None else 0  # the next tick to run
    if not rec.record_baseline:
        raise BaselineError(
            "no baseline recorded: add an `analysis:` or `outcomes:` section to the scenario"
        )
    if now <= rec.baseline_tick:
        raise BaselineError(
            f"the baseline is the status at the start of tick {rec.baseline_tick} (before the "
            f"first intervention); the society is at tick {now}: run it past that tick first"
        )
    rows = read_table(engine.run_dir, "baseline").to_pylist()
    names = ("tick", "agent_id", "variable", "value", "text")
    rows += [dict(zip(names, row, strict=True)) for row in engine.results.buffered("baseline")]
    out: dict[int, dict[str, Any]] = {}
    for row in rows:
        if row["agent_id"] in engine.agents:
            value = row["text"] if row["value"] is None else row["value"]
            out.setdefault(row["agent_id"], {})[row["variable"]] = value
    for values in out.values():
        values.update({s: values[k] for s, k in NEEDS.items() if k in values})
    return out
