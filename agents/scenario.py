"""The scenario schema: one pydantic model for every experiment YAML under `configs/`.

`load_scenario(path_or_dict)` validates everything and raises ONE `ScenarioConfigError` that
lists every bad field by its dotted path (`agents.count: ...`, `interventions.0.tick: ...`),
including cross-field problems (an intervention after the last tick, an unknown fact id).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from societas.agents.experiments.loading import apply_profiles, did_you_mean, resolve_paths
from societas.agents.experiments.outcomes import AnalysisConfig, OutcomesConfig, outcome_problems
from societas.agents.experiments.schema import (
    ArmConfig,
    AttributeSpec,
    BlockSpec,
    Intervention,
    Selector,
    SurveyConfig,
)
from societas.agents.llm.config import LLMConfig
from societas.memory import GroupMemoryConfig

__all__ = [
    "ArmConfig",
    "AttributeSpec",
    "BlockSpec",
    "Intervention",
    "ScenarioConfig",
    "ScenarioConfigError",
    "Selector",
    "SurveyConfig",
    "load_scenario",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScenarioConfigError(ValueError):
    """A scenario config with problems; `problems` holds (path, message) for each."""

    def __init__(self, problems: list[tuple[str, str]], source: str = "scenario") -> None:
        self.problems = problems
        lines = "\n".join(f"  {path}: {msg}" for path, msg in problems)
        super().__init__(f"{source}: {len(problems)} invalid field(s):\n{lines}")


def _default_occupations() -> dict[str, float]:
    """Occupations and their weights when a scenario names none."""
    return {
        "teacher": 1,
        "nurse": 1,
        "baker": 1,
        "clerk": 2,
        "engineer": 1,
        "shop assistant": 2,
        "driver": 1,
        "unemployed": 1,
    }


class PopulationConfig(_Strict):
    """Seeded distributions the agents' profiles are drawn from."""

    count: int = Field(100, ge=2, le=10_000_000, description="Number of agents.")
    profiles: Path | None = Field(
        None,
        description="CSV, Parquet or JSONL file, one agent per row (relative to the scenario "
        "file); columns name profile fields or custom attributes; count follows the file.",
    )
    age_mean: float = Field(40.0, gt=0, lt=120)
    age_sd: float = Field(15.0, ge=0)
    age_min: int = Field(18, ge=0)
    age_max: int = Field(90, le=120)
    occupations: dict[str, float] = Field(
        default_factory=_default_occupations,
        description="Occupation -> weight; 'unemployed' and 'retired' have no workplace.",
    )
    retirement_age: int = Field(67, ge=0, le=120)
    income_median: float = Field(2500.0, gt=0, description="Monthly labour income median.")
    income_sigma: float = Field(0.5, ge=0, le=3, description="Lognormal sigma of income.")
    household_size: float = Field(2.2, ge=1, le=10, description="Mean agents per home.")
    trust_government: tuple[float, float] = Field(
        (2.0, 2.0), description="Beta(a, b) of trust in government, 0..1."
    )
    types: dict[str, float] = Field(
        default_factory=dict,
        description="Agent type -> weight (the `type` attribute; seeded draw). Empty: every "
        "agent is a 'citizen' unless the profiles file has a `type` column. "
        "memory.agent_types gives a type its own memory profile.",
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
    edges: Path | None = Field(
        None,
        description="CSV or Parquet edge list (columns source, target, optional weight > 0; "
        "agent ids; relative to the scenario file): the network, instead of a generated one.",
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
    reflection_threshold: float = Field(
        7.0,
        gt=0,
        description="Reflect when the importance an agent accumulated since its last "
        "reflection passes this (stored units: rating/10, so 7 = 70 on GA's 1..10 sum); "
        "chosen with benchmarks/cognition.py so that town agents reflect one to a few times a "
        "day (benchmarks/RESULTS.md#cognition).",
    )
    reflection: bool = True
    attitude_every: int = Field(4, ge=1, description="Ticks between attitude updates.")
    remember_activities: bool = True
    decompose_hours: bool = Field(
        True, description="Decompose each waking hour of the plan into 5-15 minute actions."
    )
    react_to_news: bool = Field(
        True, description="News believed in a conversation goes through a reaction (re-plan)."
    )
    conversation_max_turns: int = Field(8, ge=1, le=40, description="Turn limit per conversation.")
    fixed_importance: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]] = Field(
        default_factory=dict,
        description="Memory topic -> fixed importance 0..1 instead of a rating (e.g. activity).",
    )


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


class ResultsConfig(_Strict):
    """How results are written."""

    flush_every: int = Field(12, ge=1, description="Ticks buffered per Parquet file.")
    compression: Literal["zstd", "snappy", "none"] = "zstd"


def _prompt_folder(folder: Path | None) -> Path | None:
    """A prompt folder must exist and hold .txt templates."""
    if folder is not None and (not folder.is_dir() or not any(folder.glob("*.txt"))):
        raise ValueError(f"{str(folder)!r} is not a folder of .txt prompt templates")
    return folder


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
    prompts: Annotated[Path | None, AfterValidator(_prompt_folder)] = Field(
        None,
        description="Folder of .txt prompt templates; each replaces the packaged template of "
        "the same name (agents/cognition/prompts/), the others stay the defaults.",
    )
    results: ResultsConfig = Field(default_factory=ResultsConfig)
    cluster: dict[str, Any] = Field(
        default_factory=dict,
        description="Runtime settings (societas.cluster.cluster_config.ClusterConfig: "
        "checkpoint cadence, checkpoints kept, groups, placement); validated by the runtime.",
    )
    attributes: list[AttributeSpec] = Field(
        default_factory=list, description="Custom status attributes every agent gets."
    )
    blocks: list[BlockSpec] = Field(
        default_factory=list, description="Your blocks, `module:Class`, after the built-in ones."
    )
    code_dirs: list[Path] = Field(
        default_factory=list,
        description="Folders put on the import path for `blocks` (default: the scenario's).",
    )
    surveys: list[SurveyConfig] = Field(default_factory=list)
    arms: list[ArmConfig] = Field(
        default_factory=list, description="Arms run by one command, each into OUT/<name>."
    )
    outcomes: OutcomesConfig = Field(
        default_factory=OutcomesConfig,
        description="Per-agent outcomes recorded every K ticks (results table `outcomes`).",
    )
    analysis: AnalysisConfig = Field(
        default_factory=AnalysisConfig,
        description="Primary outcome, subgroups on baseline status, tercile covariates.",
    )
    sweep: dict[str, list[Any]] = Field(
        default_factory=dict,
        description="Field path -> values: a grid expanded into arms at load time (one arm "
        "per point and existing arm), e.g. `arms.treatment.interventions.0.amount: [400, 800]`.",
    )
    keep_llm_cache: bool = Field(
        True, description="Keep every model response in RUN/llm-cache (branches replay it)."
    )

    @field_validator("blocks", mode="before")
    @classmethod
    def _block_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"path": v} if isinstance(v, str) else v for v in value]
        return value

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
    if cfg.network.edges is not None:
        from societas.agents.experiments.edges import edge_problems

        problems += edge_problems(cfg.network.edges, n)
    if cfg.network.isolated >= n:
        problems.append(("network.isolated", f"must be < agents.count ({n})"))
    if cfg.network.kind != "none" and cfg.network.k >= n - cfg.network.isolated:
        connected = n - cfg.network.isolated
        k = cfg.network.k
        problems.append(
            ("network.k", f"{k} ties per agent must be < the connected agents ({connected})")
        )
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
    if not problems:  # before the arms, which would repeat each of these once per arm
        from societas.agents.experiments.schedule import schedule_problems

        with contextlib.suppress(ValueError):  # a broken schema: experiment_problems names it
            problems += outcome_problems(cfg) + schedule_problems(cfg)
    if not problems:
        from societas.agents.experiments.checks import experiment_problems

        problems += experiment_problems(cfg)
    return problems


def paths_relative_to(raw: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A raw scenario's file and folder paths (profiles, code, prompts, edges) resolved against
    the scenario file's folder, as `load_scenario` reads them."""
    return _edges_relative_to(resolve_paths(raw, folder), folder)


def _edges_relative_to(raw: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`network.edges` relative to the scenario file, like the profiles file."""
    net = raw.get("network")
    if isinstance(net, dict) and isinstance(net.get("edges"), str | Path):
        path = Path(net["edges"])
        if not path.is_absolute():
            raw = {**raw, "network": {**net, "edges": str(folder / path)}}
    return raw


def _expanded(raw: dict[str, Any], label: str) -> dict[str, Any]:
    """The scenario with its `sweep:` grid turned into arms; a bad sweep raises, naming the
    path (a base that does not validate is left for the usual error list)."""
    from societas.agents.experiments.sweep import expand_sweep, sweep_problems

    base = {k: v for k, v in raw.items() if k != "sweep"}
    try:
        full = ScenarioConfig.model_validate(base).model_dump(mode="json")
    except ValidationError:
        return raw
    problems = sweep_problems(raw, full)
    if problems:
        raise ScenarioConfigError(problems, label)
    return expand_sweep(raw)


def _with_baseline_tick(cfg: ScenarioConfig) -> ScenarioConfig:
    """The analysis' baseline tick made explicit, so every arm derived from `cfg` keeps it."""
    if cfg.analysis.baseline_tick is not None:
        return cfg
    from societas.agents.experiments.outcomes import baseline_tick

    tick = min(baseline_tick(cfg), cfg.ticks - 1)
    analysis = cfg.analysis.model_copy(update={"baseline_tick": tick})
    return cfg.model_copy(update={"analysis": analysis})


def _problems_from(err: ValidationError) -> list[tuple[str, str]]:
    out = []
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"]) or "<root>"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = f"unknown field {e['loc'][-1]!r}" + did_you_mean(ScenarioConfig, e["loc"])
        elif "input" in e and not isinstance(e["input"], dict | list):
            msg = f"{msg} (got {e['input']!r:.80})"
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
        if isinstance(raw, dict):  # profiles file and code folders relative to the YAML
            raw = paths_relative_to(raw, Path(source).parent)
    else:
        raw = source
    if not isinstance(raw, dict):
        raise ScenarioConfigError([("<root>", "expected a mapping")], label)
    if raw.get("sweep"):
        raw = _expanded(raw, label)
    try:
        cfg = ScenarioConfig.model_validate(raw)
    except ValidationError as err:
        raise ScenarioConfigError(_problems_from(err), label) from None
    try:
        cfg = apply_profiles(cfg)
    except ScenarioConfigError as err:
        raise ScenarioConfigError(err.problems, label) from None
    cfg = _with_baseline_tick(cfg)
    problems = semantic_problems(cfg)
    if problems:
        raise ScenarioConfigError(problems, label)
    return cfg
