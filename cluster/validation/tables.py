"""A finished run's result tables, read from its Parquet folders."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.dataset as ds

from societas.agents.scenario import ScenarioConfig


class RunTables:
    """One run folder and the scenario it ran: tables as pandas frames, read once."""

    def __init__(self, folder: Path, scenario: ScenarioConfig) -> None:
        self.folder = folder
        self.scenario = scenario
        self._cache: dict[str, pd.DataFrame] = {}

    def table(self, name: str) -> pd.DataFrame:
        """The table's rows (an empty frame when the run wrote none)."""
        if name not in self._cache:
            path = self.folder / "results" / name
            if not path.exists() or not any(path.rglob("*.parquet")):
                self._cache[name] = pd.DataFrame()
            else:
                self._cache[name] = ds.dataset(path, format="parquet").to_table().to_pandas()
        return self._cache[name]

    @cached_property
    def population(self) -> Any:
        """The generated society (profiles, friend network, town) of this scenario."""
        from societas.agents.population import population_for

        return population_for(self.scenario)

    @property
    def n_agents(self) -> int:
        return self.scenario.agents.count

    def tick_of(self, day: int, hour: float) -> int:
        """The tick at `hour` o'clock on simulated day `day` (0 = the first)."""
        minutes = (day * 24 + hour - self.scenario.start_hour) * 60
        return round(minutes / self.scenario.tick_minutes)
