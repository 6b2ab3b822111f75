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
    """One published figure: what it measures, the number, where it is printed and how it was
    checked against that print (`verified`)."""

    name: str
    published: float | None
    kind: Literal["share", "ratio"]
    section: str
    detail: str
    verified: str = Field(min_length=1)
    low: float | None = None
    high: float | None = None


class SuiteData(_Strict):
    """A suite's published values, the paper they come from, the texts they were checked
    against (`sources`) and how the paper's protocol compares with the suite's."""

    suite: str
    paper: str
    sources: list[str] = Field(min_length=1)
    protocol: str
    values: list[PublishedValue] = Field(min_length=1)

    def source(self, value: PublishedValue) -> str:
        """Paper, section, what the figure is and how it was checked, in one line."""
        return f"{self.paper}, {value.section}: {value.detail}. Checked: {value.verified}"


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
    published_range: list[float] | None = Field(default=None, min_length=2, max_length=2)
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
    protocol: str = ""
    sources: list[str] = Field(default_factory=list)
    metrics: list[Metric]
    unpublished: list[Unpublished] = Field(default_factory=list)
    runs: list[str] = Field(default_factory=list)


def load_suite_data(suite: str) -> SuiteData:
    """The suite's published values from cluster/validation/data/<suite>.yaml."""
    raw = yaml.safe_load((DATA / f"{suite}.yaml").read_text(encoding="utf-8"))
    return SuiteData.model_validate(raw)
