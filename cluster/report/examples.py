"""Analysis examples in DuckDB and pandas; the same text makes SCHEMAS.md and is run by the
tests against a real run (tests/report/test_schemas.py), so the page never goes stale.

In every example `RUN` is the run folder (a string). Each DuckDB query and each pandas
snippet leaves its answer in `result`.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

from societas.cluster.report.schemas import markdown_tables


@dataclass(frozen=True)
class Example:
    """One question answered twice: DuckDB SQL and pandas code (which sets `result`)."""

    title: str
    question: str
    sql: str
    pandas: str


EXAMPLES: tuple[Example, ...] = (
    Example(
        "Evacuation by age group",
        "Share of each age group at a shelter, per tick (hurricane).",
        """SELECT p.age_group, s.tick, avg((s.place_kind = 'shelter')::INT) AS share_at_shelter
FROM read_parquet(RUN || '/results/agent_state/**/*.parquet') s
JOIN read_parquet(RUN || '/results/profiles/*.parquet') p USING (agent_id)
GROUP BY ALL ORDER BY p.age_group, s.tick""",
        """import pandas as pd

state = pd.read_parquet(f"{RUN}/results/agent_state")
profiles = pd.read_parquet(f"{RUN}/results/profiles")
df = state.merge(profiles[["agent_id", "age_group"]], on="agent_id")
df["at_shelter"] = df["place_kind"].eq("shelter")
result = df.groupby(["age_group", "tick"])["at_shelter"].mean().unstack("age_group")""",
    ),
    Example(
        "Opinion change of agents who talked to a treated agent",
        "Mean attitude change (first to last tick) of agents who heard from an agent that an "
        "intervention reached at tick 4, against everyone else (polarization).",
        """WITH treated AS (
  SELECT DISTINCT agent_id FROM read_parquet(RUN || '/results/events/**/*.parquet')
  WHERE tick = 4),
contacts AS (
  SELECT DISTINCT listener AS agent_id FROM read_parquet(RUN || '/results/dialogues/**/*.parquet')
  WHERE speaker IN (SELECT agent_id FROM treated)
    AND listener NOT IN (SELECT agent_id FROM treated)),
att AS (SELECT * FROM read_parquet(RUN || '/results/attitudes/**/*.parquet')),
change AS (
  SELECT agent_id, topic,
         last(value ORDER BY tick) - first(value ORDER BY tick) AS change
  FROM att GROUP BY agent_id, topic)
SELECT topic, agent_id IN (SELECT agent_id FROM contacts) AS talked_to_treated,
       count(*) AS agents, avg(change) AS mean_change, stddev_samp(change) AS sd_change
FROM change WHERE agent_id NOT IN (SELECT agent_id FROM treated)
GROUP BY ALL ORDER BY ALL""",
        """import pandas as pd

events = pd.read_parquet(f"{RUN}/results/events")
dialogues = pd.read_parquet(f"{RUN}/results/dialogues")
att = pd.read_parquet(f"{RUN}/results/attitudes").sort_values("tick")
treated = set(events.loc[events["tick"] == 4, "agent_id"])
heard = set(dialogues.loc[dialogues["speaker"].isin(treated), "listener"]) - treated
g = att.groupby(["agent_id", "topic"])["value"]
change = (g.last() - g.first()).rename("change").reset_index()
change = change[~change["agent_id"].isin(treated)]
change["talked_to_treated"] = change["agent_id"].isin(heard)
result = change.groupby(["topic", "talked_to_treated"])["change"].agg(["count", "mean", "std"])""",
    ),
    Example(
        "Who knows a fact, by occupation",
        "Share of each occupation that learned each seeded fact (diffusion).",
        """SELECT k.fact, p.occupation, count(DISTINCT k.agent_id) AS knowers,
       count(DISTINCT k.agent_id) / any_value(n.agents) AS share
FROM read_parquet(RUN || '/results/knowledge/**/*.parquet') k
JOIN read_parquet(RUN || '/results/profiles/*.parquet') p USING (agent_id)
JOIN (SELECT occupation, count(*) AS agents
      FROM read_parquet(RUN || '/results/profiles/*.parquet') GROUP BY occupation) n
  USING (occupation)
GROUP BY ALL ORDER BY ALL""",
        """import pandas as pd

knowledge = pd.read_parquet(f"{RUN}/results/knowledge")
profiles = pd.read_parquet(f"{RUN}/results/profiles")
df = knowledge.merge(profiles[["agent_id", "occupation"]], on="agent_id")
knowers = df.groupby(["fact", "occupation"])["agent_id"].nunique()
result = (knowers / profiles.groupby("occupation").size()).rename("share").reset_index()""",
    ),
)

TIDY = """## One tidy table across arms and seeds

`societas export RUN_OR_FOLDER --tidy --format parquet|csv|duckdb --out T.<ext>` writes one
long table over every arm and seed of a run folder, a folder of arms, or a folder of
`seed-N/<arm>` runs (`run CONFIG --seeds 0,1` of a scenario with arms):

| column | type | meaning |
|---|---|---|
| `arm` | string | The arm (the run's name when it has no arms). |
| `seed` | int64 | The run's seed. |
| `agent_id` | int64 | Agent id, the same across arms of one seed (paired designs). |
| `tick` | int64 | Simulated time step. |
| `variable` | string | Outcome name, `need.<need>`, `attitude.<topic>`, `survey.<id>.<q>`. |
| `value` | double | Its value (a survey's Likert point, option index or number). |
| `source` | string | outcome, need, attitude or survey. |

Beside it: `T.profiles.<ext>` (the `profiles` table with `arm` and `seed` columns; in a
DuckDB file the tables `tidy` and `profiles`) and `T.methods.json`: the societas version, the
scenario's digest per arm and seed, the LLM provider, endpoints (URL and model) and sampling
settings, the sha256 of every prompt template used, the seeds, the share of each
answer_source, the analysis plan and the recorded outcomes. In R:
`tidy <- arrow::read_parquet("T.parquet")` (or `read.csv("T.csv")`).

In these examples `TIDY` is the exported Parquet file.
"""

TIDY_EXAMPLES: tuple[Example, ...] = (
    Example(
        "Paired effect per seed",
        "Mean per-agent difference treatment - control of the outcome `mood` at the last tick, "
        "per seed (the arms share seed and population, so each agent is its own control).",
        """WITH last AS (
  SELECT * FROM read_parquet(TIDY)
  WHERE variable = 'mood' AND tick = (SELECT max(tick) FROM read_parquet(TIDY)
                                      WHERE variable = 'mood'))
SELECT t.seed, avg(t.value - c.value) AS effect, count(*) AS agents
FROM last t JOIN last c USING (seed, agent_id)
WHERE t.arm = 'treatment' AND c.arm = 'control'
GROUP BY t.seed ORDER BY t.seed""",
        """import pandas as pd

tidy = pd.read_parquet(TIDY)
mood = tidy[tidy["variable"].eq("mood")]
last = mood[mood["tick"].eq(mood["tick"].max())]
wide = last.pivot_table(index=["seed", "agent_id"], columns="arm", values="value")
result = (wide["treatment"] - wide["control"]).groupby("seed").mean()""",
    ),
)

# The first tidy example in base R (no packages), on the CSV export; `TIDY_CSV` is its path.
TIDY_R = """tidy <- read.csv(TIDY_CSV)
mood <- tidy[tidy$variable == "mood", ]
last <- mood[mood$tick == max(mood$tick), ]
treated <- last[last$arm == "treatment", c("seed", "agent_id", "value")]
control <- last[last$arm == "control", c("seed", "agent_id", "value")]
paired <- merge(treated, control, by = c("seed", "agent_id"), suffixes = c(".t", ".c"))
paired$effect <- paired$value.t - paired$value.c
result <- aggregate(effect ~ seed, data = paired, FUN = mean)"""

HEADER = """# Results: schemas and analysis examples

A run folder holds its results as Parquet under `RUN/results/<table>/`, one file per agent
group and window of ticks (`group-<g>/ticks-<first>-<last>.parquet`), sorted, with fixed
schemas: the same seed gives byte-identical files. Read a whole table by its folder (pandas,
polars, pyarrow) or with a glob (DuckDB: `RUN/results/<table>/**/*.parquet`). A run written
by an earlier version lacks the columns added since (e.g. `surveys.fallback_reason`), and a
run it resumed with this one holds files with and without them: read such a table with
`read_parquet(..., union_by_name = true)` (DuckDB, as `report` and `export` do) or
`societas.agents.runtime.results.read_table(RUN, table)` (pyarrow, the writer's schema), which
give the older rows nulls.

- `RUN/results/schemas.json` — the schemas below, for programs (written by `societas report`
  and `societas export`; `{"version": 1, "tables": {name: {row, path, columns: [{name, type,
  description}]}}}`).
- `RUN/config.json` — the resolved scenario; `RUN/run.json` — the run's record (status,
  totals, LLM calls/tokens/cost by model, checkpoints, wall time).
- `societas export RUN --format csv` writes one CSV per table; `--format duckdb` one DuckDB
  file with every table and its column comments.
- `societas report RUN` writes the HTML report; `societas report RUN --agent ID` one agent.

Names are the same everywhere: `tick` (0-based step, `tick_minutes` apart from `start_hour`),
`agent_id` (0..agents-1; `speaker`/`listener`/`source`/`other_id` are agent ids too),
`group_id`, `place`/`place_kind`, `topic`, `fact`.

This page is generated (`python -m societas.cluster.report.examples`); a test fails when it
differs from the code.

## Tables

"""


RUN_FIELDS = {
    "status": "Where the run stands.",
    "scenario": "Scenario name.",
    "run_id": "Unique id of this run.",
    "host": "Machine of the driver.",
    "started_at": "UTC start (ISO 8601).",
    "updated_at": "UTC time of the last update.",
    "ended_at": "UTC end (null while running).",
    "ticks_done": "Ticks completed.",
    "resumes": "Times the run was resumed from a checkpoint.",
    "config_digest": "SHA-256 of the resolved scenario (config.json).",
    "versions": "Versions of Python, societas and its main libraries.",
    "totals": "Run totals (agent steps, LLM requests/tokens, embeddings, vector ops...).",
    "progress": "Latest progress figures (steps/s, LLM calls...).",
    "error": "What stopped a failed run.",
}


def run_record_table() -> str:
    """`run.json`'s documented fields, from its pydantic model (cluster.run_folder)."""
    from societas.cluster.observe.run_folder import RunRecord

    lines = [
        "### `run.json`\n",
        "The run's record, rewritten as the run goes (status, progress) and at its end; features"
        " add fields (extra keys are kept). Besides these: `agents`, `groups`, `wall_s`, "
        "`agent_steps`, `agent_steps_per_s`, `llm_requests`, `llm_tokens`, `memories_total`, "
        "`checkpoints` and `llm` (requests, tokens, cost and cache hits by model, of the last "
        "invocation). At the end of a run `llm_requests`, `llm_tokens`, `agent_steps` and "
        "`progress` count the whole run across resumes (from `totals`); `resumed` says whether "
        "it was resumed and `segments` lists each invocation (start_tick, ticks_run or "
        "ticks_done, status, llm_requests, llm_tokens, ended_at).\n",
        "| field | type | meaning |\n|---|---|---|",
    ]
    for name, field in RunRecord.model_fields.items():
        args = typing.get_args(field.annotation)
        if typing.get_origin(field.annotation) is typing.Literal:
            kind = " / ".join(str(a) for a in args)
        else:
            kind = getattr(field.annotation, "__name__", None) or str(field.annotation)
            kind = kind.replace("typing.", "").replace("|", "or")
        meaning = field.description or RUN_FIELDS.get(name, "")
        lines.append(f"| `{name}` | {kind} | {meaning} |")
    return "\n".join(lines) + "\n"


def markdown_page() -> str:
    """The whole SCHEMAS.md page: tables, run.json, then the examples in DuckDB and pandas."""
    parts = [HEADER, markdown_tables(), run_record_table(), "## Examples\n"]
    parts.append(
        "Set `RUN` to a run folder first: in DuckDB `SET VARIABLE run = 'runs/hurricane';` and "
        "replace `RUN` by `getvariable('run')`, or paste the path; in Python "
        "`RUN = 'runs/hurricane'`.\n"
    )
    for ex in EXAMPLES:
        parts.append(f"### {ex.title}\n\n{ex.question}\n")
        parts.append(f"DuckDB:\n\n```sql\n{ex.sql}\n```\n")
        parts.append(f"pandas:\n\n```python\n{ex.pandas}\n```\n")
    parts.append(TIDY)
    for ex in TIDY_EXAMPLES:
        parts.append(f"### {ex.title}\n\n{ex.question}\n")
        parts.append(f"DuckDB:\n\n```sql\n{ex.sql}\n```\n")
        parts.append(f"pandas:\n\n```python\n{ex.pandas}\n```\n")
    parts.append(f"R (base R on the CSV export, `TIDY_CSV` its path):\n\n```r\n{TIDY_R}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    from pathlib import Path

    target = Path(__file__).with_name("SCHEMAS.md")
    target.write_text(markdown_page())
    print(f"wrote {target}")
