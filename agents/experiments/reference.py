"""The experiment reference page (configs/REFERENCE.md), generated from the pydantic models so
it never drifts: every intervention kind, field and selector, surveys, custom attributes and
blocks, arms, branch patches, the built-in status attributes `set` accepts, every
top-level scenario field and every field of every model nested in a scenario (map, network,
needs, ..., memory, llm), each with its type, default and meaning. Regenerate with
`python -m societas.agents.experiments.reference` (tests/experiments/test_reference.py fails
when the page is out of date)."""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from societas.agents.experiments.profiles import PROFILE_FIELDS
from societas.agents.experiments.schema import (
    ArmConfig,
    AttributeSpec,
    BlockSpec,
    ExperimentPatch,
    Intervention,
    Question,
    Selector,
    SurveyConfig,
)

PAGE = Path(__file__).resolve().parents[2] / "configs" / "REFERENCE.md"
KIND_FIELDS = {
    "event": "text (required), importance, danger, all_clear, trust_gated",
    "fact": "fact (required: an id from `facts:`)",
    "policy": "policy (required: `ubi`), amount (required, >= 0: monthly basic income)",
    "set": "values (required: status attribute -> value, checked against the schema)",
}


# What a field means where its model gives no `description` (the models live in modules other
# engineers own; a `description=` added there wins over the text here).
DESCRIPTIONS: dict[str, dict[str, str]] = {
    "ScenarioConfig": {
        "name": "The scenario's name (run.json, the report's title).",
        "description": "Free text shown on the report's run card.",
        "seed": "Seed of every random draw (population, network, encounters, the rules "
        "policy); the same seed reproduces a run.",
        "ticks": "Ticks to simulate.",
        "tick_minutes": "Simulated minutes per tick.",
        "start_hour": "Simulated hour of the first tick.",
        "groups": "Agent groups (one per process or Ray actor); `--groups` overrides it.",
        "agents": "The population: how many agents and how their profiles are drawn or read.",
        "map": "Places of the town.",
        "network": "The social network (friends, tie strengths).",
        "needs": "Needs and how fast they decay.",
        "social": "Encounters, conversations and messages.",
        "economy": "Work, income and spending.",
        "cognition": "When reflection, planning, thoughts and attitude updates run.",
        "topics": "Attitude topics (polarization); empty: agents hold no attitudes.",
        "exposure": "Posts and who reads them (echo chamber).",
        "facts": "Pieces of information whose spread is tracked (`knowledge` table); given to "
        "agents by `fact` interventions.",
        "interventions": "What happens to whom and when.",
        "memory": "The group memory: embedder, vector store, retrieval score, tiers, policies, "
        "memory profiles.",
        "llm": "The LLM gateway: provider, endpoints, routes, limits, cache, budget. The default "
        "is the rules policy, which is not a language model.",
        "results": "How the Parquet results are written.",
        "surveys": "Questions put to agents during the run (`surveys` table).",
    },
    "PopulationConfig": {
        "age_mean": "Mean age (normal draw, clipped to `age_min`..`age_max`).",
        "age_sd": "Standard deviation of age.",
        "age_min": "Youngest age drawn.",
        "age_max": "Oldest age drawn.",
        "retirement_age": "Agents this old or older are retired (no workplace).",
    },
    "MapConfig": {
        "size_km": "Side of the square town; places are spread over it.",
        "workplaces": "Workplaces (employed agents are assigned one).",
        "shops": "Shops.",
        "cafes": "Cafes.",
        "parks": "Parks.",
        "shelters": "Shelters (where agents go in danger, e.g. the hurricane).",
    },
    "NetworkConfig": {
        "kind": "`small_world`: Watts-Strogatz; `random`: as many ties placed at random; "
        "`none`: no friends.",
        "rewire_p": "Watts-Strogatz rewiring probability.",
        "homophily_on": "The trait agents are ordered by when `homophily` > 0 (attitude: the "
        "first topic).",
    },
    "NeedsConfig": {
        "hunger_decay": "Hunger satisfaction lost per simulated hour.",
        "energy_decay": "Energy lost per simulated hour awake.",
        "social_decay": "Social satisfaction lost per simulated hour.",
        "threshold": "Below this a need is urgent and drives the next action.",
    },
    "SocialConfig": {
        "encounters": "Agents at the same place in the same tick may meet.",
        "share_facts": "Agents pass on every fact they know with each line or message they "
        "say, whatever its words (a language model's line need not mention it); a listener "
        "believes it as far as it trusts the speaker. The `knowledge` table counts contact, "
        "not what was said.",
        "max_pairs_per_place": "Most encounter pairs per place and tick.",
    },
    "EconomyConfig": {
        "work_hours": "Hours of a working day.",
        "consumption_propensity": "Share of monthly income spent.",
        "meal_cost": "Price of a meal out.",
    },
    "CognitionConfig": {
        "reflection": "Reflect at all.",
        "remember_activities": "Store each activity as a memory.",
    },
    "TopicConfig": {
        "name": "The topic's name (the `attitudes` table, `attitude.<topic>` in profiles).",
        "initial": "Shape of the initial attitudes.",
        "mean": "Mean initial attitude (0..10).",
        "sd": "Spread of the initial attitudes.",
    },
    "ExposureConfig": {
        "enabled": "Agents post their stance and others read it (needs `topics`).",
        "echo_chamber": "Readers ignore posts further than `tolerance` from their own attitude.",
    },
    "FactConfig": {
        "id": "The fact's id (letters, digits, `_`, `-`), named by `fact` interventions.",
        "text": "What the fact says.",
    },
    "ResultsConfig": {"compression": "Parquet compression."},
    "Intervention": {"select": "Which agents it reaches; empty: everyone."},
    "SurveyConfig": {
        "select": "Which agents are asked; empty: everyone.",
        "questions": "The questions, asked in order.",
    },
    "AttributeSpec": {
        "type": "The value's type; a value of another type is an error.",
        "description": "What the attribute means (shown to the model in prompts).",
    },
    "GroupMemoryConfig": {
        "embedding": "How texts become vectors.",
        "vector_store": "Where the warm tier lives.",
        "retrieval": "The retrieval score: recency, importance, relevance.",
        "tiers": "Hot, warm and cold tiers and when memories move between them.",
        "policies": "Memory policies, all off by default.",
        "default_importance": "Importance (0..1) of a memory stored without one.",
        "cognitive": "Knobs of the `cognitive` memory profile.",
    },
    "EmbeddingConfig": {
        "kind": "`bm25` sparse (default, no weights), `minilm` dense int8, `openai` an "
        "OpenAI-compatible /v1/embeddings endpoint, `hybrid` minilm + bm25 fused by RRF.",
        "openai": "The endpoint, for `kind: openai`.",
        "batch_size": "Texts per embedding call.",
    },
    "LocalDenseModel": {
        "pooling": "How token vectors become one sentence vector.",
        "normalize": "Scale vectors to unit length.",
        "model_file": "The ONNX file's name in the folder.",
    },
    "OpenAIEmbeddingConfig": {
        "base_url": "The endpoint, e.g. `http://HOST:8000/v1`.",
        "model": "The served embedding model's name.",
        "dimensions": "Vector size the model returns.",
        "timeout_s": "Seconds before a call is retried.",
        "max_batch": "Most texts per request.",
    },
    "VectorStoreConfig": {
        "backend": "`edge`: a Qdrant Edge shard per group in the run folder (embedded); "
        "`qdrant`: a shared collection on a Qdrant server or cluster.",
        "collection": "Collection name on a Qdrant server (`<name>` and `<name>_kv`).",
        "timeout_s": "Seconds before a Qdrant server call fails.",
    },
    "RetrievalConfig": {
        "saturation_k": "k of the `saturate` normalisation of BM25 relevance, s / (s + k).",
        "rrf_k": "k of reciprocal rank fusion (hybrid embeddings).",
    },
    "MemoryPolicies": {
        "forgetting": "FinMem layers: importance decay, promotion, demotion, clean-up.",
        "consolidation": "Similar memories summarised into one pattern memory.",
        "associations": "Spreading activation along links on retrieval (`expand=True`).",
        "temporal": "Memories of one episode linked in order.",
        "contradiction": "Contradictory memory pairs found by a judge and linked.",
        "habits": "Repeated actions become procedural memories.",
        "importance": "Importance recomputed from age, reads, feedback, links and content.",
        "sessions": "Short-term session and task memories that expire after a TTL.",
        "preferences": "Preference timelines (confidence, stability, trend) from attitudes.",
    },
    "ForgettingPolicy": {
        "enabled": "Run the policy.",
        "layers": "Each layer's decay and thresholds (short, mid, long, reflection).",
        "run_every_ticks": "Ticks between promotion, demotion and clean-up passes.",
    },
    "LayerPolicy": {
        "importance_decay_per_day": "Importance is multiplied by this per simulated day.",
        "recency_tau_days": "Recency time constant in days (FinMem's layer recency).",
        "promote_at": "Importance at which a memory moves up a layer; null: never.",
        "demote_below": "Recency below which a memory moves down a layer; null: never.",
        "cleanup_below": "Importance below which a memory leaves the store (to cold, or "
        "forgotten); null: never.",
        "demote_importance_below": "Importance below which a memory moves down a layer; null: off.",
        "cleanup_recency_below": "Layer recency below which a memory is cleaned up; null: off.",
    },
    "ConsolidationPolicy": {
        "enabled": "Run the policy.",
        "min_group": "Fewest similar memories that make a pattern memory.",
        "run_every_ticks": "Ticks between passes.",
    },
    "AssociationPolicy": {
        "decay": "Share of a hit's score passed along each link.",
        "max_hops": "Links followed from a hit.",
    },
    "TemporalPolicy": {"enabled": "Run the policy."},
    "ContradictionPolicy": {
        "enabled": "Run the policy.",
        "strength": "Strength of a `contradictory` association.",
        "run_every_ticks": "Ticks between passes.",
    },
    "HabitPolicy": {
        "enabled": "Run the policy.",
        "min_repeats": "Repeats of an action at a similar time that make a habit.",
        "tag": "Tag of habit memories.",
    },
    "ImportanceRecompute": {
        "enabled": "Run the policy.",
        "run_every_ticks": "Ticks between recomputations.",
        "age_weight": "Weight of age (recency - 1).",
        "access_weight": "Weight of reads.",
        "feedback_weight": "Weight of feedback given with `give_feedback`.",
        "association_weight": "Weight of association strength.",
        "formula": "additive (rating plus adjustments) or seed (seed 001's weighted sum).",
        "content_weight": "Weight of content richness.",
    },
    "SessionPolicy": {"enabled": "Write session and task memories with these TTLs."},
    "PreferencePolicy": {"enabled": "Keep a timeline per attitude topic (KV `preferences`)."},
    "LLMConfig": {
        "endpoints": "OpenAI-compatible servers, with weights and limits; least-loaded "
        "dispatch across them.",
        "retry": "Retries with exponential backoff and jitter.",
        "cache": "The response cache (replay, branches).",
        "temperature": "Sampling temperature of every call (a call site may set its own).",
        "fallback_stop": "Stop the run when too many answers fall back.",
    },
    "Price": {
        "input_per_mtok": "USD per million prompt tokens.",
        "output_per_mtok": "USD per million completion tokens.",
    },
}


def type_text(annotation: Any) -> str:
    """A readable type: `int | None`, `list[Selector]`, `one of: a, b`."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of: " + ", ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_text(a) for a in args)
    if origin is typing.Annotated:
        return type_text(args[0])
    if origin is not None:
        inner = ", ".join(type_text(a) for a in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    if annotation is type(None):
        return "null"
    return getattr(annotation, "__name__", str(annotation).replace("typing.", ""))


def default_text(field: Any) -> str:
    """The default as YAML would spell it (factories shown by what they build)."""
    if field.default_factory is not None:
        value = field.default_factory()
        if isinstance(value, BaseModel):
            given = value.model_dump(exclude_defaults=True)
            return f"`{given}`" if given else "defaults"
        return f"`{value!r}`" if value not in ([], {}) else f"`{value!r}` (empty)"
    if isinstance(field.default, Path):  # an absolute default lies inside the install
        return "the bundled folder" if field.default.is_absolute() else f"`{field.default}`"
    if field.default is PydanticUndefined:
        return "**required**"
    return f"`{field.default!r}`" if field.default is not None else "null"


_LIMITS = {
    "gt": ">",
    "ge": ">=",
    "lt": "<",
    "le": "<=",
    "min_length": "min length",
    "max_length": "max length",
    "pattern": "pattern",
}


def limit_text(meta: Any) -> str:
    """`>= 0`, `max length 10`, ... for one constraint of a field ('' if none known)."""
    for attr, sign in _LIMITS.items():
        value = getattr(meta, attr, None)
        if value is not None:
            return f"{sign} `{value}`" if attr == "pattern" else f"{sign} {value}"
    return ""


def describe(model: type[BaseModel], name: str, field: Any) -> str:
    """A field's meaning: its own `description`, else this page's text for it."""
    text = field.description or DESCRIPTIONS.get(model.__name__, {}).get(name, "")
    return " ".join(text.split()).replace("|", "\\|")


def table(model: type[BaseModel], see: dict[type[BaseModel], str] | None = None) -> str:
    """A field table of one model: name, type, default, what it means; a field holding a
    model gets a pointer to the section (in `see`) that lists that model's fields."""
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        desc = describe(model, name, field)
        for sub in models_in(field.annotation):
            if see and sub in see:
                desc = f"{desc} Fields: {see[sub]}.".strip()
        limits = [limit_text(m) for m in field.metadata if limit_text(m)]
        extra = f" ({', '.join(limits)})" if limits else ""
        rows.append(
            f"| `{name}` | {type_text(field.annotation)}{extra} | {default_text(field)} | {desc} |"
        )
    return "\n".join(rows)


def section(
    title: str,
    model: type[BaseModel],
    intro: str = "",
    see: dict[type[BaseModel], str] | None = None,
    level: str = "##",
) -> str:
    doc = " ".join((model.__doc__ or "").split())
    return "\n\n".join(p for p in (f"{level} {title}", doc, intro, table(model, see)) if p)


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models a field holds: itself, or inside list[...], dict[..., ...], `| None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in models_in(arg)]


def item_path(path: str, annotation: Any) -> str:
    """How YAML reaches a nested model: `topics[]` for a list item, `layers.<key>` for a dict's."""
    origin = typing.get_origin(annotation)
    if origin is list:
        return f"{path}[]"
    if origin is dict:
        return f"{path}.<key>"
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return item_path(path, inner[0]) if len(inner) == 1 else path
    return path


def nested_models(
    model: type[BaseModel], path: str, see: dict[type[BaseModel], str]
) -> list[tuple[str, type[BaseModel]]]:
    """Every model nested under `model`, depth first, each once, with the YAML path that
    reaches it; `see` gains a pointer to each (a model already in `see` is not listed again)."""
    found: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        for sub in models_in(field.annotation):
            if sub not in see:
                where = item_path(f"{path}{name}", field.annotation)
                see[sub] = f"`{where}:` below"
                found.append((where, sub))
    out = []
    for where, sub in found:
        out.append((where, sub))
        out += nested_models(sub, f"{where.removesuffix('[]')}.", see)
    return out


def render() -> str:
    """The whole page."""
    from societas.agents.blocks.state import attributes_of
    from societas.agents.scenario import ScenarioConfig

    # The models reached through the scenario's own fields, wherever their modules live.
    population_model = models_in(ScenarioConfig.model_fields["agents"].annotation)[0]
    memory_fields = models_in(ScenarioConfig.model_fields["memory"].annotation)[0].model_fields
    cognitive_model = models_in(memory_fields["cognitive"].annotation)[0]
    agent_type_model = models_in(memory_fields["agent_types"].annotation)[0]
    see: dict[type[BaseModel], str] = {
        Intervention: "Interventions above",
        Selector: "Selectors above",
        AttributeSpec: "Custom status attributes above",
        BlockSpec: "Custom blocks above",
        SurveyConfig: "Surveys above",
        Question: "Survey questions above",
        ArmConfig: "Arms above",
        ExperimentPatch: "Branch patches above",
        population_model: "Population above",
        agent_type_model: "Memory profiles per agent type above",
        cognitive_model: "Cognitive layers above",
    }
    nested = nested_models(ScenarioConfig, "", see)
    for listed in (Intervention, SurveyConfig, ArmConfig, ExperimentPatch, agent_type_model):
        nested += nested_models(listed, f"{see[listed]}: ", see)

    kinds = "\n".join(f"- `{k}`: {v}" for k, v in KIND_FIELDS.items())
    builtin = ["| attribute | type | default | meaning |", "|---|---|---|---|"]
    builtin += [
        f"| `{a.name}` | {a.type} | `{a.default_or_value!r}` | {a.description} |"
        for a in attributes_of()
    ]
    columns = ", ".join(f"`{k}` ({t})" for k, t in PROFILE_FIELDS.items())

    def part(title: str, model: type[BaseModel], intro: str = "") -> str:
        return section(title, model, intro, see=see)

    parts = [
        "# Experiment reference\n\nGenerated from the pydantic models by "
        "`python -m societas.agents.experiments.reference`; do not edit by hand. Every "
        "field below is checked when a scenario loads: an unknown or misspelt field, a value "
        "of the wrong type or range, a `set` key that is not a status attribute, a selector "
        "that matches no agent, a negative basic income and a tick beyond the run are errors "
        "naming the field and the value, before anything starts. The worked example is "
        "`configs/examples/lab/`.",
        part(
            "Interventions (`interventions:`)", Intervention, "Kinds and their fields:\n\n" + kinds
        ),
        part(
            "Selectors (`select:` of interventions and surveys)",
            Selector,
            "All given conditions must hold; no condition selects everyone. `fraction` "
            "and `count` are seeded by the scenario's seed and the item's position.",
        ),
        "## Status attributes `set` can change\n\nThe built-in ones below, plus those the "
        "scenario declares under `attributes:`.\n\n" + "\n".join(builtin),
        part("Custom status attributes (`attributes:`)", AttributeSpec),
        part(
            "Custom blocks (`blocks:`)",
            BlockSpec,
            "A block is any class with a `name` and `async def forward(self, ctx)` "
            "(`societas.agents.agent.Block`); a constructor parameter `scenario` gets the "
            "scenario, `params` the rest. The module is imported from the scenario's "
            "folder (`code_dirs`), on Ray too; never from a run folder.",
        ),
        part(
            "Surveys (`surveys:`)",
            SurveyConfig,
            "Answers go to the `surveys` results table (tick, day, time, survey, "
            "agent_id, question_id, answer_text, value, answer_source, fallback_reason).",
        ),
        part("Survey questions", Question),
        part("Arms (`arms:`)", ArmConfig),
        part(
            "Branch patches (`societas branch RUN --at DAY:HOUR --patch FILE`)",
            ExperimentPatch,
            "Interventions of a branch patch must be at or after the branch point.",
        ),
        part(
            "Population (`agents:`)",
            population_model,
            f"Columns of a profiles file: {columns}, `attitude.<topic>`, `id` (the row "
            "number from 0, optional) and the custom attributes.",
        ),
        part(
            "Memory profiles per agent type (`memory.agent_types.<type>:`)",
            agent_type_model,
            "`memory.profile` (default | finmem | cognitive) is the scenario's; a type listed "
            "here runs its own. Agent types come from `agents.types` or a `type` column of "
            "the profiles file; a listed type no agent has is an error. Which profile each "
            "agent ran: `RUN/results/agent_profiles/`.",
        ),
        part(
            "Cognitive layers (`memory.cognitive:` and `cognitive:` of an agent type)",
            cognitive_model,
        ),
        section("Scenario (top level)", ScenarioConfig, see=see),
        "## Scenario sections\n\nEvery model nested in a scenario, by the YAML path that "
        "reaches it (`[]`: each item of a list; `<key>`: each value of a mapping).",
        *(section(f"`{where}:`", model, see=see, level="###") for where, model in nested),
    ]
    return "\n\n".join(parts).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the page (to PAGE, or the path given)."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else PAGE
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
