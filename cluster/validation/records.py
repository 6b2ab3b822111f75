"""The validation records: published values with their source, and one metric per comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

DATA = Path(__file__).resolve().parent / "data"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PublishedValue(_Strict):
    """One published figure: what it measures, the number and where it is printed."""

    name: str
    published: float | None
    kind: Literal["share", "ratio"]
    section: str
    detail: str
    low: float | None = None
    high: float | None = None


class SuiteData(_Strict):
    """A suite's published values and the paper they come from."""

    suite: str
    paper: str
    verification: str
    values: list[PublishedValue] = Field(min_length=1)

    def source(self, value: PublishedValue) -> str:
        """Paper, section and how the figure was checked, in one line."""
        return f"{self.paper}, {value.section}: {value.detail} ({self.verification})"


class Metric(_Strict):
    """One published figure beside ours: mean and 95 % interval over seeds."""

    name: str
    published: float
    source: str
    ours_mean: float | None
    ours_ci: list[float | None] = Field(min_length=2, max_length=2)
    n_seeds: int
    provider: str
    model: str
    kind: Literal["share", "ratio"]
    per_seed: list[float | None]
    interval_method: str
    note: str = ""


class Unpublished(_Strict):
    """A measurement with no published figure to compare with (reported, not compared)."""

    name: str
    source: str
    ours_mean: float | None
    ours_ci: list[float | None]
    per_seed: list[float | None]
    note: str = ""


class Report(_Strict):
    """validation.json: the suite, how it ran, and its metrics."""

    suite: str
    provider: str
    model: str
    rules_policy: bool
    seeds: list[int]
    agents: int
    hours: float
    elapsed_s: float
    caveat: str
    metrics: list[Metric]
    unpublished: list[Unpublished] = Field(default_factory=list)
    runs: list[str] = Field(default_factory=list)


def load_suite_data(suite: str) -> SuiteData:
    """The suite's published values from cluster/validation/data/<suite>.yaml."""
    raw = yaml.safe_load((DATA / f"{suite}.yaml").read_text(encoding="utf-8"))
    return SuiteData.model_validate(raw)
