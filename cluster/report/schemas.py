"""The results' documented schemas: one entry per Parquet table, column types from the writer.

Types come from `societas.agents.runtime.results.SCHEMAS` (the one place the writer fixes
them), or from the files themselves for a table another module writes; the words come from
`TABLE_DOCS` here. `write_schemas_json` puts them beside a run's results for programs, and
`python -m societas.cluster.report.examples` regenerates the Markdown page SCHEMAS.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from societas.agents.runtime.memory_policies import COLUMNS as POLICY_COLUMNS
from societas.agents.runtime.results import SCHEMAS

SCHEMAS_FILE = "schemas.json"
PATHS = {
    "profiles": "results/profiles/profiles.parquet",
    "agent_profiles": "results/agent_profiles/group-*.parquet",
}
_TICK = "Simulated time step (0-based; the run's `tick_minutes` apart, from `start_hour`)."
_AGENT = "Agent id (0..agents-1), the same in every table and in `report --agent ID`."
_SOURCE = (
    "Where the text or decision came from: first_try (the model's first answer, passing the "
    "meaning checks), repaired (its JSON mended), re_asked (accepted after a correction), "
    "fallback (a default written in code: not the model's), rules (the rules policy, not a "
    "language model); an answer replayed from the LLM cache keeps the source it was recorded "
    "with (replayed: reserved for replayed text whose source is unknown)."
)

# table -> (what one row is, {column: meaning}); a column the writer adds without a line
# here is listed as undocumented, and tests/report/test_schemas.py fails on it.
TABLE_DOCS: dict[str, tuple[str, dict[str, str]]] = {
    "agent_state": (
        "One row per agent per tick: where the agent is, what it does, its money and mood.",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "place": "Place id (`home-3`, `work-1`, `shelter-0`, ...).",
            "place_kind": "Kind of place: home, work, shop, cafe, park or shelter.",
            "activity": "What the agent is doing, in words.",
            "category": "Activity kind: sleep, home, eat, work, shop, leisure, social, evacuate.",
            "current_need": "The most pressing need (hunger, energy, safety, social, none).",
            "currency": "Money held (currency units).",
            "income": "Monthly income (currency units), transfers included.",
            "consumption": "Monthly consumption (currency units).",
            "work_hours": "Planned work hours per day.",
            "worked_today": "Hours worked so far today.",
            "transfers": "Monthly transfer received from a policy (0 when none).",
            "evacuating": "True while the agent heads to or stays at a shelter.",
            "emotion": "Dominant emotion: one of the 21 OCC words of AgentSociety (Joy, "
            "Distress, Fear, Relief, ...; agents.cognition.emotions).",
        },
    ),
    "needs": (
        "One row per agent per tick: satisfaction of each need (1 = satisfied, 0 = urgent).",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "hunger": "Hunger satisfaction, 0..1.",
            "energy": "Energy (rest) satisfaction, 0..1.",
            "safety": "Safety satisfaction, 0..1.",
            "social": "Social satisfaction, 0..1.",
            "current_need": "The need the agent acts on this tick.",
        },
    ),
    "events": (
        "One row per thing that happened to an agent: interventions received, reactions.",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "kind": "Event kind (reaction, ignored, policy, all_clear, ...).",
            "detail": "The event's text or what the agent decided.",
            "answer_source": "For a model's decision (reaction, replan): "
            + _SOURCE[0].lower()
            + _SOURCE[1:]
            + " Empty for an event that is no model answer.",
        },
    ),
    "thoughts": (
        "One row per update of an agent's inner thought and dominant emotion; a fallback row "
        "changes nothing and shows the thought and emotion in force.",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "thought": "The agent's inner thought.",
            "emotion": "Its dominant emotion, one of the 21 OCC words (agents.cognition.emotions);"
            " empty in a fallback row before the agent's first.",
            "intensity": "The emotion's intensity, 0..1.",
            "answer_source": _SOURCE,
        },
    ),
    "importance": (
        "One row per memory whose importance was rated (memories with a given or configured "
        "importance have none).",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "memory_id": "Id of the memory in the agent's memory stream.",
            "topic": "The memory's topic (event, activity, dialogue, cognition, ...).",
            "importance": "Rated importance, 0..1 (the 1..10 poignancy over 10).",
            "answer_source": _SOURCE,
        },
    ),
    "dialogues": (
        "One row per utterance: who said what to whom, where, through which channel.",
        {
            "tick": _TICK,
            "speaker": "Agent id of the speaker.",
            "listener": "Agent id of the listener.",
            "place": "Place of a face-to-face encounter (empty for messages and posts).",
            "channel": "encounter (same place), message (to a friend) or post (feed).",
            "text": "What was said.",
            "facts": "Ids of seeded facts passed on, comma-separated (empty when none).",
            "conversation_id": "Conversation this turn belongs to (empty for a one-line "
            "message to a friend).",
            "turn": "Turn number within the conversation (0-based).",
            "answer_source": _SOURCE,
        },
    ),
    "attitudes": (
        "One row per agent per topic per tick: the agent's attitude (0 against .. 10 for).",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "topic": "Topic name from the scenario's `topics`.",
            "value": "Attitude, 0 (against) .. 10 (for).",
            "answer_source": "Of the update that set the attitude in force: "
            + _SOURCE[0].lower()
            + _SOURCE[1:]
            + " Empty while the attitude is the agent's initial one.",
        },
    ),
    "knowledge": (
        "One row when an agent first learns a seeded fact.",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "fact": "Fact id from the scenario's `facts`.",
            "source": "Agent id it was learned from (-1: seeded or from an intervention).",
        },
    ),
    "llm": (
        "One row per group per tick: language-model work (estimated for the rules policy).",
        {
            "tick": _TICK,
            "group_id": "Agent group (engine) that made the calls.",
            "requests": "LLM requests (or rules-policy decisions) this tick.",
            "prompt_tokens": "Prompt tokens (the prompts' estimated size for rules).",
            "completion_tokens": "Completion tokens.",
            "memories_added": "Stream memories written this tick.",
        },
    ),
    "memory_policies": (
        "One row per group per tick: what each memory mechanism did this tick (counts, each "
        "event counted once; a mechanism that is off stays 0).",
        {
            "tick": _TICK,
            "group_id": "Agent group (engine) whose memory it is.",
            **POLICY_COLUMNS,
        },
    ),
    "profiles": (
        "One row per agent: who it is at the start (written by `report`/`export`).",
        {
            "agent_id": _AGENT,
            "name": "Agent name.",
            "age": "Age in years.",
            "age_group": "Age band: 18-29, 30-44, 45-64, 65+.",
            "gender": "Gender.",
            "occupation": "Occupation (`retired` above the retirement age, `unemployed`).",
            "income": "Monthly income at the start (currency units).",
            "personality": "Personality in words (enters the prompts).",
            "home": "Home place id.",
            "work": "Workplace id (empty without one).",
            "shelter": "Nearest shelter place id.",
            "trust": "Trust in government, 0..1 (gates heeding warnings).",
            "stubbornness": "Resistance to attitude change, 0..1.",
            "sociability": "Propensity to start conversations, 0..1.",
        },
    ),
    "agent_profiles": (
        "One row per agent: its agent type and the memory profile it ran (written at setup).",
        {
            "agent_id": _AGENT,
            "group_id": "Agent group (engine) that ran it.",
            "agent_type": "The agent's `type` attribute (agents.types or the profiles file).",
            "memory_profile": "Memory architecture: default, finmem or cognitive "
            "(memory.profile, or memory.agent_types.<type>.profile).",
        },
    ),
    "relationships": (
        "One row per agent and other agent after each conversation between them: the "
        "relationship of `agent_id` towards `other_id`.",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "other_id": "The other agent.",
            "closeness": "Closeness to the other, 0..1.",
            "sentiment": "Sentiment toward the other, -1..1.",
            "talks": "Conversations with the other so far.",
            "conversation_id": "The conversation that changed it.",
        },
    ),
    "plans": (
        "One row per planned item: the day plan, re-plans after a reaction, and 5-15 minute "
        "actions of an hour.",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "level": "day (broad strokes), replan (rest of the day) or action (within an hour).",
            "hour": "Hour of day the item starts.",
            "minute": "Minute the action starts (0 for day-level items).",
            "duration_min": "Duration in minutes (0 for day-level items).",
            "activity": "What the agent plans to do.",
            "location": "Where (place id).",
            "answer_source": _SOURCE,
        },
    ),
    "reflections": (
        "One row per reflection insight, with the memories it rests on.",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "memory_id": "Id of the insight in the agent's memory stream.",
            "text": "The insight.",
            "evidence_ids": "Memory ids of its evidence, comma-separated.",
            "answer_source": _SOURCE,
        },
    ),
    "outcomes": (
        "One row per agent and outcome named under the scenario's `outcomes:`, every "
        "`outcomes.every` ticks and at the last tick (long format).",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "variable": "The outcome's name (a status attribute, a need, a topic or a derived "
            "expression, as named in the scenario).",
            "value": "Its value at the end of the tick (booleans 0/1; NaN when an expression "
            "has no number for the agent).",
        },
    ),
    "baseline": (
        "One row per agent and scalar status attribute at the start of the baseline tick, "
        "before any intervention applies (`analysis.baseline_tick`; default the first "
        "intervention's tick over all arms): what subgroups are defined on.",
        {
            "tick": "The baseline tick.",
            "agent_id": _AGENT,
            "variable": "Status attribute name.",
            "value": "Its value when a number or boolean (0/1), else null.",
            "text": "Its value when text, else empty.",
        },
    ),
    "treated": (
        "One row per agent an intervention reached, at the intervention's tick (the built-in "
        "subgroup `treated`).",
        {
            "tick": _TICK,
            "agent_id": _AGENT,
            "intervention": "Index of the intervention in the scenario's (or arm's) list.",
            "kind": "Its kind: event, fact, policy or set.",
        },
    ),
    "surveys": (
        "One row per answer to a scheduled survey question.",
        {
            "tick": _TICK,
            "day": "Simulated day of the survey (0-based).",
            "time": "Simulated time of day the question was asked (HH:MM).",
            "survey": "Survey name.",
            "agent_id": _AGENT,
            "question_id": "Question id within the survey.",
            "answer_text": "The answer in words.",
            "value": "The answer as a number (Likert point, option index, number; null for "
            "open questions).",
            "answer_source": _SOURCE,
            "fallback_reason": "For a fallback, why the model's replies were refused (its last "
            "problem: `not the asked JSON (...)`, `meaning check <kind>: ...`, `no reply`); "
            "null for an answer that is the model's or the rules', and for rows written "
            "before the column existed.",
        },
    ),
}


class ColumnDoc(BaseModel):
    """One documented column: name, Arrow type, meaning."""

    name: str
    type: str
    description: str


class TableDoc(BaseModel):
    """One documented table: what a row is, where its files are, its columns."""

    table: str
    row: str
    path: str
    columns: list[ColumnDoc]


def _arrow_schema(table: str, run_dir: Path | None) -> pa.Schema | None:
    if table in SCHEMAS:
        return SCHEMAS[table]
    if table == "profiles":
        from societas.cluster.report.profiles import PROFILE_SCHEMA

        return PROFILE_SCHEMA
    if table == "agent_profiles":
        from societas.agents.experiments.memory_profiles import SCHEMA

        return SCHEMA
    if run_dir is not None:
        files = sorted((run_dir / "results" / table).glob("**/*.parquet"))
        if files:
            return pq.read_schema(files[0])
    return None


def table_doc(table: str, run_dir: Path | None = None) -> TableDoc | None:
    """The documented schema of one table (None when neither the writer nor the run has it)."""
    schema = _arrow_schema(table, run_dir)
    if schema is None:
        return None
    row, words = TABLE_DOCS.get(table, ("(undocumented table)", {}))
    cols = [
        ColumnDoc(name=f.name, type=str(f.type), description=words.get(f.name, "(undocumented)"))
        for f in schema
    ]
    path = PATHS.get(table, f"results/{table}/group-*/ticks-*.parquet")
    return TableDoc(table=table, row=row, path=path, columns=cols)


def parquet_sql(run_dir: Path, table: str) -> str:
    """DuckDB SQL reading all of a run's files of `table` as one table, columns matched by
    name: a file written before a column was added (a run resumed by a newer version holds
    both) reads it as null, whichever file the glob lists first."""
    glob = str(Path(run_dir) / "results" / table / "**" / "*.parquet").replace("'", "''")
    return f"read_parquet('{glob}', union_by_name = true)"


def present_tables(run_dir: Path) -> list[str]:
    """Tables with at least one Parquet file in this run, in documentation order."""
    root = Path(run_dir) / "results"
    found = {p.relative_to(root).parts[0] for p in root.glob("*/**/*.parquet")}
    order = list(TABLE_DOCS) + sorted(found - set(TABLE_DOCS))
    return [t for t in order if t in found]


def all_docs(run_dir: Path | None = None) -> list[TableDoc]:
    """Every table the writer knows plus any other table this run has."""
    names = [*SCHEMAS, "profiles", "agent_profiles"]
    if run_dir is not None:
        names += [t for t in present_tables(run_dir) if t not in names]
    docs = [table_doc(t, run_dir) for t in names]
    return [d for d in docs if d is not None]


def schemas_json(run_dir: Path | None = None) -> dict[str, Any]:
    """The schemas as one JSON-ready dict: {"version": 1, "tables": {name: TableDoc}}."""
    return {
        "version": 1,
        "tables": {d.table: d.model_dump(exclude={"table"}) for d in all_docs(run_dir)},
    }


def write_schemas_json(run_dir: str | Path) -> Path:
    """Write RUN_DIR/results/schemas.json (for programs reading the results)."""
    run_dir = Path(run_dir)
    path = run_dir / "results" / SCHEMAS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(schemas_json(run_dir), indent=1) + "\n")
    return path


def duckdb_type(arrow_type: str) -> str:
    """The DuckDB SQL type of an Arrow type name as written in the schemas."""
    return {
        "int64": "BIGINT",
        "int32": "INTEGER",
        "double": "DOUBLE",
        "float": "FLOAT",
        "string": "VARCHAR",
        "large_string": "VARCHAR",
        "bool": "BOOLEAN",
    }.get(arrow_type, "VARCHAR")


def markdown_tables() -> str:
    """The schema part of SCHEMAS.md: one Markdown table per results table."""
    out = []
    for d in all_docs():
        out.append(f"### `{d.table}`\n\n{d.row}  \nFiles: `RUN/{d.path}`\n")
        out.append("| column | type | meaning |\n|---|---|---|")
        out += [f"| `{c.name}` | {c.type} | {c.description} |" for c in d.columns]
        out.append("")
    return "\n".join(out)
