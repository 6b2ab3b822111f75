"""The `profiles` table: one row per agent with who it is (age, job, trust, ...), written
beside the results so analyses can group outcomes by the population's attributes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

PROFILE_SCHEMA = pa.schema(
    [
        ("agent_id", pa.int64()),
        ("name", pa.string()),
        ("age", pa.int64()),
        ("age_group", pa.string()),
        ("gender", pa.string()),
        ("occupation", pa.string()),
        ("income", pa.float64()),
        ("personality", pa.string()),
        ("home", pa.string()),
        ("work", pa.string()),
        ("shelter", pa.string()),
        ("trust", pa.float64()),
        ("stubbornness", pa.float64()),
        ("sociability", pa.float64()),
    ]
)
PROFILES_PATH = Path("results") / "profiles" / "profiles.parquet"


def age_group(age: int) -> str:
    """Age bands used across the report and the examples."""
    for hi, name in ((29, "18-29"), (44, "30-44"), (64, "45-64")):
        if age <= hi:
            return name
    return "65+"


def profiles_table(population: Any) -> pa.Table:
    """The population's profiles as an Arrow table (sorted by agent_id)."""
    ps = sorted(population.profiles, key=lambda p: p.id)
    rows = [{**{f.name: getattr(p, f.name, None) for f in PROFILE_SCHEMA},
             "agent_id": p.id, "age_group": age_group(p.age)} for p in ps]  # fmt: skip
    return pa.Table.from_pylist(rows, schema=PROFILE_SCHEMA)


def write_profiles(run_dir: Path, population: Any) -> Path | None:
    """Write RUN/results/profiles/profiles.parquet (None when the population is unknown)."""
    if population is None:
        return None
    path = Path(run_dir) / PROFILES_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(profiles_table(population), path, compression="zstd")
    return path
