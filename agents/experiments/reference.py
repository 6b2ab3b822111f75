"""The experiment reference page (configs/REFERENCE.md), generated from the pydantic models so
it never drifts: every intervention kind, field and selector, surveys, custom attributes and
blocks, arms, branch patches, the built-in status attributes `set` accepts, and every
top-level scenario field. Regenerate with `python -m societas.agents.experiments.reference`
(tests/experiments/test_reference.py fails when the page is out of date)."""

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


def table(model: type[BaseModel]) -> str:
    """A field table of one model: name, type, default, what it means."""
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        desc = (field.description or "").replace("|", "\\|").replace("\n", " ")
        limits = [limit_text(m) for m in field.metadata if limit_text(m)]
        extra = f" ({', '.join(limits)})" if limits else ""
        rows.append(
            f"| `{name}` | {type_text(field.annotation)}{extra} | {default_text(field)} | {desc} |"
        )
    return "\n".join(rows)


def section(title: str, model: type[BaseModel], intro: str = "") -> str:
    doc = " ".join((model.__doc__ or "").split())
    return "\n\n".join(p for p in (f"## {title}", doc, intro, table(model)) if p)


def render() -> str:
    """The whole page."""
    from societas.agents.blocks.state import attributes_of
    from societas.agents.scenario import PopulationConfig, ScenarioConfig
    from societas.memory.profile_cognitive import CognitiveConfig
    from societas.memory.profiles import AgentTypeMemory

    kinds = "\n".join(f"- `{k}`: {v}" for k, v in KIND_FIELDS.items())
    builtin = ["| attribute | type | default | meaning |", "|---|---|---|---|"]
    builtin += [
        f"| `{a.name}` | {a.type} | `{a.default_or_value!r}` | {a.description} |"
        for a in attributes_of()
    ]
    columns = ", ".join(f"`{k}` ({t})" for k, t in PROFILE_FIELDS.items())
    parts = [
        "# Experiment reference\n\nGenerated from the pydantic models by "
        "`python -m societas.agents.experiments.reference`; do not edit by hand. Every "
        "field below is checked when a scenario loads: an unknown or misspelt field, a value "
        "of the wrong type or range, a `set` key that is not a status attribute, a selector "
        "that matches no agent, a negative basic income and a tick beyond the run are errors "
        "naming the field and the value, before anything starts. The worked example is "
        "`configs/examples/lab/`.",
        section(
            "Interventions (`interventions:`)", Intervention, "Kinds and their fields:\n\n" + kinds
        ),
        section(
            "Selectors (`select:` of interventions and surveys)",
            Selector,
            "All given conditions must hold; no condition selects everyone. `fraction` "
            "and `count` are seeded by the scenario's seed and the item's position.",
        ),
        "## Status attributes `set` can change\n\nThe built-in ones below, plus those the "
        "scenario declares under `attributes:`.\n\n" + "\n".join(builtin),
        section("Custom status attributes (`attributes:`)", AttributeSpec),
        section(
            "Custom blocks (`blocks:`)",
            BlockSpec,
            "A block is any class with a `name` and `async def forward(self, ctx)` "
            "(`societas.agents.agent.Block`); a constructor parameter `scenario` gets the "
            "scenario, `params` the rest. The module is imported from the scenario's "
            "folder (`code_dirs`), on Ray too; never from a run folder.",
        ),
        section(
            "Surveys (`surveys:`)",
            SurveyConfig,
            "Answers go to the `surveys` results table (tick, day, time, survey, "
            "agent_id, question_id, answer_text, value).",
        ),
        section("Survey questions", Question),
        section("Arms (`arms:`)", ArmConfig),
        section(
            "Branch patches (`societas branch RUN --at DAY:HOUR --patch FILE`)",
            ExperimentPatch,
            "Interventions of a branch patch must be at or after the branch point.",
        ),
        section(
            "Population (`agents:`)",
            PopulationConfig,
            f"Columns of a profiles file: {columns}, `attitude.<topic>`, `id` (the row "
            "number from 0, optional) and the custom attributes.",
        ),
        section(
            "Memory profiles per agent type (`memory.agent_types.<type>:`)",
            AgentTypeMemory,
            "`memory.profile` (default | finmem | cognitive) is the scenario's; a type listed "
            "here runs its own. Agent types come from `agents.types` or a `type` column of "
            "the profiles file; a listed type no agent has is an error. Which profile each "
            "agent ran: `RUN/results/agent_profiles/`.",
        ),
        section(
            "Cognitive layers (`memory.cognitive:` and `cognitive:` of an agent type)",
            CognitiveConfig,
        ),
        section("Scenario (top level)", ScenarioConfig),
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
