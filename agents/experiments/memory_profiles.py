"""Memory profiles in a run: the cognitive layers wired to the run's LLM gateway, and which
profile each agent ran, written beside the results.

`RUN/results/agent_profiles/group-<g>.parquet` holds one row per agent of the group:
`agent_id`, `group_id`, `agent_type` (the `type` attribute) and `memory_profile` (default,
finmem or cognitive), written at setup; a resumed run rewrites the same rows.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from societas.agents.cognition import metacognition
from societas.agents.cognition.attention import attend, extract_facts
from societas.memory.store.fsutil import write_bytes_atomic

if TYPE_CHECKING:
    from societas.agents.llm.gateway import LLMGateway
    from societas.memory import GroupMemory

SCHEMA = pa.schema(
    [
        ("agent_id", pa.int64()),
        ("group_id", pa.int64()),
        ("agent_type", pa.string()),
        ("memory_profile", pa.string()),
    ]
)
FOLDER = "agent_profiles"


def wire(memory: GroupMemory, llm: LLMGateway, seed: int) -> None:
    """The cognitive profile's steps in a run, each through the run's gateway: attention
    summaries (batched across agents), fact extraction and meta-cognition (the model's
    reflection and strategy; on the rules provider the rules reflection by novelty)."""
    if memory.cognition is not None:
        memory.cognition.summarise = partial(attend, llm, seed=seed)
        memory.cognition.extract_facts = partial(extract_facts, llm, seed=seed)
        memory.cognition.metacognition = partial(metacognition.reflect, llm, seed=seed)


def write_agent_profiles(run_dir: Path, group_id: int, memory: GroupMemory) -> Path:
    """This group's agents with their type and memory profile, as Parquet (atomic)."""
    rows = memory.profiles.rows()
    table = pa.table(
        {
            "agent_id": [a for a, _, _ in rows],
            "group_id": [group_id] * len(rows),
            "agent_type": [t for _, t, _ in rows],
            "memory_profile": [p for _, _, p in rows],
        },
        schema=SCHEMA,
    )
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    path = Path(run_dir) / "results" / FOLDER / f"group-{group_id:04d}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, sink.getvalue().to_pybytes())
    return path


def read_agent_profiles(run_dir: str | Path) -> pa.Table:
    """Every group's rows, by agent id (an empty table when none were written)."""
    files = sorted((Path(run_dir) / "results" / FOLDER).glob("group-*.parquet"))
    if not files:
        return SCHEMA.empty_table()
    table = pa.concat_tables([pq.read_table(f, schema=SCHEMA) for f in files])
    return table.sort_by("agent_id")
