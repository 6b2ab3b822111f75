"""The scenario schema: one pydantic model for every experiment YAML under `configs/`.

`load_scenario(path_or_dict)` validates everything and raises ONE `ScenarioConfigError` that
lists every bad field by its dotted path (`agents.count: ...`, `interventions.0.tick: ...`),
including cross-field problems (an intervention after the last tick, an unknown fact id).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from societas.agents.llm.config import LLMConfig
from societas.memory import GroupMemoryConfig


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScenarioConfigError(ValueError):
    """A scenario config with problems; `problems` holds (path, message) for each."""

    def __init__(self, problems: list[tuple[str, str]], source: str = "scenario") -> None:
        self.problems = problems
        lines = "\n".join(f"  {path}: {msg}" for path, msg in problems)
        super().__init__(f"{source}: {len(problems)} invalid field(s):\n{lines}")


class PopulationConfig(_Strict):
    """Seeded distributions the agents' profiles are drawn from."""

    count: int = Field(100, ge=2, le=10_000_000, description="Number of agents.")
    age_mean: float = Field(40.0, gt=0, lt=120)
    age_sd: float = Field(15.0, ge=0)
    age_min: int = Field(18, ge=0)
    age_max: int = Field(90, le=120)
    occupations: dict[str, float] = Field(
        default_factory=lambda: {
            "teacher": 1,
            "nurse": 1,
            "baker": 1,
            "clerk": 2,
            "engineer": 1,
            "shop assistant": 2,
            "driver": 1,
            "unemployed": 1,
        },
        description="Occupation -> weight; 'unemployed' and 'retired' have no workplace.",
    )
    retirement_age: int = Field(67, ge=0, le=120)
    income_median: float = Field(2500.0, gt=0, description="Monthly labour income median.")
    income_sigma: float = Field(0.5, ge=0, le=3, description="Lognormal sigma of income.")
    household_size: float = Field(2.2, ge=1, le=10, description="Mean agents per home.")
    trust_government: tuple[float, float] = Field(
        (2.0, 2.0), description="Beta(a, b) of trust in government, 0..1."
    )

    @model_validator(mode="after")
    def _ages(self) -> PopulationConfig:
        if self.age_min > self.age_max:
            raise ValueError(f"age_min ({self.age_min}) must be <= age_max ({self.age_max})")
        if not self.occupations or any(w < 0 for w in self.occupations.values()):
            raise ValueError("occupations needs at least one entry with weights >= 0")
        if min(self.trust_government) <= 0:
            raise ValueError("trust_government: both Beta parameters must be > 0")
        return self


class MapConfig(_Strict):
    """Places of the town besides homes (homes follow from the household size)."""

    size_km: float = Field(3.0, gt=0)
    workplaces: int = Field(10, ge=1)
    shops: int = Field(4, ge=1)
    cafes: int = Field(3, ge=1)
    parks: int = Field(2, ge=1)
    shelters: int = Field(2, ge=1)
    per_agents: int | None = Field(
        None, ge=1, description="If set, place counts are per this many agents (scale up)."
    )


class NetworkConfig(_Strict):
    """Social network: Watts-Strogatz small world, optionally ordered by a trait (homophily)."""

    kind: Literal["small_world", "random", "none"] = "small_world"
    k: int = Field(6, ge=2, description="Ties per agent (even).")
    rewire_p: float = Field(0.1, ge=0, le=1)
    homophily: float = Field(0.0, ge=0, le=1, description="0 = random order, 1 = by trait.")
    homophily_on: Literal["attitude", "age", "income"] = "attitude"
    isolated: int = Field(
        0, ge=0, description="The last N agents form their own separate small world."
    )


class NeedsConfig(_Strict):
    """Satisfaction 0..1 decays per simulated hour; below `threshold` a need is urgent."""

    hunger_decay: float = Field(0.06, ge=0, le=1)
    energy_decay: float = Field(0.04, ge=0, le=1)
    social_decay: float = Field(0.02, ge=0, le=1)
    safety_decay: float = Field(0.25, ge=0, le=1, description="Only outside shelter in danger.")
    threshold: float = Field(0.25, ge=0, le=1)


class SocialConfig(_Strict):
    """Encounters, dialogue and messages to friends."""

    encounters: bool = True
    chat_prob: float = Field(0.1, ge=0, le=1, description="Talk when meeting a stranger.")
    friend_chat_prob: float = Field(0.5, ge=0, le=1, description="Talk when meeting a friend.")
    message_prob: float = Field(0.02, ge=0, le=1, description="Message a friend, per tick.")
    share_facts: bool = True
    max_pairs_per_place: int = Field(50, ge=1)


class EconomyConfig(_Strict):
    """Work hours, wages, consumption (monthly amounts; 22 working days a month)."""

    work_hours: float = Field(8.0, gt=0, le=16)
    consumption_propensity: float = Field(0.7, ge=0, le=1.5)
    ubi_work_elasticity: float = Field(
        0.5, ge=0, le=2, description="How much a transfer reduces hours (share of income)."
    )
    meal_cost: float = Field(8.0, ge=0)


class CognitionConfig(_Strict):
    """When the expensive cognition runs (never every tick for every agent)."""

    thought_hour: int | None = Field(21, ge=0, le=23, description="Daily thought; None: off.")
    reflection_threshold: float = Field(15.0, gt=0)
    reflection: bool = True
    attitude_every: int = Field(4, ge=1, description="Ticks between attitude updates.")
    remember_activities: bool = True


class TopicConfig(_Strict):
    """An attitude topic (0 against .. 10 for) and its initial distribution."""

    name: str = Field(min_length=1)
    initial: Literal["normal", "uniform", "bimodal"] = "normal"
    mean: float = Field(5.0, ge=0, le=10)
    sd: float = Field(1.5, ge=0)


class ExposureConfig(_Strict):
    """Information exposure: agents post their stance; who reads it (echo chamber or not)."""

    enabled: bool = False
    post_prob: float = Field(0.3, ge=0, le=1, description="Per agent and tick.")
    audience: int = Field(5, ge=1, description="Readers per post.")
    echo_chamber: bool = False
    tolerance: float = Field(
        2.0, ge=0, le=10, description="With the echo chamber, posts further away are ignored."
    )


class FactConfig(_Strict):
    """A piece of information whose spread is tracked."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_\-]+$")
    text: str = Field(min_length=1)


class Selector(_Strict):
    """Which agents an intervention reaches (all given conditions must hold)."""

    all: bool = False
    ids: list[int] | None = None
    fraction: float | None = Field(None, gt=0, le=1, description="Seeded share of agents.")
    count: int | None = Field(None, ge=1, description="Seeded sample of exactly N agents.")
    occupation: list[str] | None = None
    income_below: float | None = None
    income_above: float | None = None
    age_min: int | None = None
    age_max: int | None = None


class Intervention(_Strict):
    """Something that happens at `tick` to the selected agents."""

    tick: int = Field(ge=0)
    kind: Literal["event", "fact", "policy", "set"]
    select: Selector = Field(default_factory=lambda: Selector(all=True))
    text: str | None = Field(None, description="event: what the agents observe.")
    importance: float | None = Field(None, ge=0, le=1)
    danger: bool = Field(False, description="event: marks the town as dangerous.")
    all_clear: bool = Field(False, description="event: ends the danger and evacuations.")
    trust_gated: bool = Field(
        False, description="event: each agent attends with probability = its trust."
    )
    fact: str | None = Field(None, description="fact: the fact id given.")
    policy: Literal["ubi"] | None = None
    amount: float | None = Field(None, description="policy: monthly amount.")
    values: dict[str, Any] | None = Field(None, description="set: KV attributes to set.")

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
        return self


class ResultsConfig(_Strict):
    """How results are written."""

    flush_every: int = Field(12, ge=1, description="Ticks buffered per Parquet file.")
    compression: Literal["zstd", "snappy", "none"] = "zstd"


class ScenarioConfig(_Strict):
    """A whole experiment: population, town, network, behaviour knobs, interventions."""

    name: str = Field("town", min_length=1)
    description: str = ""
    seed: int = Field(0, ge=0)
    ticks: int = Field(48, ge=1)
    tick_minutes: int = Field(30, ge=1, le=1440)
    start_hour: int = Field(6, ge=0, le=23)
    groups: int = Field(1, ge=1, le=4096)
    agents: PopulationConfig = Field(default_factory=PopulationConfig)
    map: MapConfig = Field(default_factory=MapConfig)
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    needs: NeedsConfig = Field(default_factory=NeedsConfig)
    social: SocialConfig = Field(default_factory=SocialConfig)
    economy: EconomyConfig = Field(default_factory=EconomyConfig)
    cognition: CognitionConfig = Field(default_factory=CognitionConfig)
    topics: list[TopicConfig] = Field(default_factory=list)
    exposure: ExposureConfig = Field(default_factory=ExposureConfig)
    facts: list[FactConfig] = Field(default_factory=list)
    interventions: list[Intervention] = Field(default_factory=list)
    memory: GroupMemoryConfig = Field(default_factory=GroupMemoryConfig)
    llm: LLMConfig = Field(default_factory=lambda: LLMConfig(provider="rules"))
    results: ResultsConfig = Field(default_factory=ResultsConfig)
    cluster: dict[str, Any] = Field(
        default_factory=dict,
        description="Runtime settings (societas.cluster.cluster_config.ClusterConfig: "
        "checkpoint cadence, checkpoints kept, groups, placement); validated by the runtime.",
    )

    @property
    def tick_seconds(self) -> float:
        return self.tick_minutes * 60.0

    @property
    def ticks_per_day(self) -> int:
        return max(1, (24 * 60) // self.tick_minutes)

    def with_overrides(self, **over: Any) -> ScenarioConfig:
        """A validated copy with CLI overrides (agents, ticks, seed, groups) applied."""
        data = self.model_dump(mode="python")
        if over.get("agents") is not None:
            data["agents"]["count"] = over["agents"]
        for key in ("ticks", "seed", "groups"):
            if over.get(key) is not None:
                data[key] = over[key]
        return load_scenario(data)


def semantic_problems(cfg: ScenarioConfig) -> list[tuple[str, str]]:
    """Cross-field problems pydantic cannot see field by field."""
    problems: list[tuple[str, str]] = []
    facts = {f.id for f in cfg.facts}
    if len(facts) != len(cfg.facts):
        problems.append(("facts", "fact ids must be unique"))
    if len({t.name for t in cfg.topics}) != len(cfg.topics):
        problems.append(("topics", "topic names must be unique"))
    n = cfg.agents.count
    if cfg.network.isolated >= n:
        problems.append(("network.isolated", f"must be < agents.count ({n})"))
    if cfg.network.kind != "none" and cfg.network.k >= n - cfg.network.isolated:
        connected = n - cfg.network.isolated
        problems.append(("network.k", f"must be < the connected agents ({connected})"))
    if cfg.exposure.enabled and not cfg.topics:
        problems.append(("exposure.enabled", "exposure needs at least one entry in topics"))
    for i, iv in enumerate(cfg.interventions):
        if iv.tick >= cfg.ticks:
            problems.append((f"interventions.{i}.tick", f"{iv.tick} is not < ticks ({cfg.ticks})"))
        if iv.kind == "fact" and iv.fact not in facts:
            problems.append((f"interventions.{i}.fact", f"unknown fact id {iv.fact!r}"))
        for j, agent_id in enumerate(iv.select.ids or []):
            if not 0 <= agent_id < n:
                problems.append(
                    (f"interventions.{i}.select.ids.{j}", f"agent {agent_id} is not in 0..{n - 1}")
                )
        if iv.select.count is not None and iv.select.count > n:
            problems.append((f"interventions.{i}.select.count", f"more than {n} agents"))
    return problems


def _problems_from(err: ValidationError) -> list[tuple[str, str]]:
    out = []
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"]) or "<root>"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown field"
        out.append((path, msg))
    return out


def load_scenario(source: str | Path | dict[str, Any] | ScenarioConfig) -> ScenarioConfig:
    """Validate a YAML path or mapping; raises one ScenarioConfigError listing every problem."""
    if isinstance(source, ScenarioConfig):
        return source
    label = "scenario"
    if isinstance(source, str | Path):
        label = str(source)
        from societas.agents.safe_yaml import UnsafeYAMLError, load_yaml_file

        try:  # size cap, UTF-8 only, alias bombs refused (agents/safe_yaml.py)
            raw = load_yaml_file(source)
        except UnsafeYAMLError as exc:
            raise ScenarioConfigError([("<file>", str(exc))], label) from None
    else:
        raw = source
    if not isinstance(raw, dict):
        raise ScenarioConfigError([("<root>", "expected a mapping")], label)
    try:
        cfg = ScenarioConfig.model_validate(raw)
    except ValidationError as err:
        raise ScenarioConfigError(_problems_from(err), label) from None
    problems = semantic_problems(cfg)
    if problems:
        raise ScenarioConfigError(problems, label)
    return cfg
