"""Generated names are plain (no id, no digit), unique at any size and fixed by the seed;
names from a profiles file stay as given."""

from __future__ import annotations

import csv
import re

from societas.agents.cognition.persona import plain_name
from societas.agents.population import generate, unique_names
from societas.agents.scenario import load_scenario
from tests.agents.conftest import SMALL


def test_names_are_unique_digit_free_and_seeded_at_5000() -> None:
    names = unique_names(5000, 0)
    assert len(set(names)) == 5000
    assert not any(re.search(r"\d", n) for n in names)
    assert names == unique_names(5000, 0)
    assert names != unique_names(5000, 1)
    assert all(plain_name(n) == n for n in names)


def test_population_names_follow_the_seed() -> None:
    cfg = load_scenario({**SMALL, "agents": {"count": 600}})
    first = [p.name for p in generate(cfg).profiles]
    assert first == [p.name for p in generate(cfg).profiles] == unique_names(600, cfg.seed)
    assert len(set(first)) == 600


def test_profile_names_stay_as_given_and_generated_ones_avoid_them(tmp_path) -> None:
    taken = unique_names(12, 0)[5]
    rows = [{"name": taken}, {"name": "Pat Lee"}, {"name": "Pat Lee"}] + [{"name": ""}] * 9
    path = tmp_path / "people.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["name"])
        writer.writeheader()
        writer.writerows(rows)
    cfg = load_scenario(
        {
            **SMALL,
            "seed": 0,
            "agents": {"count": 12, "profiles": str(path), "types": {"a": 1, "b": 1}},
        }
    )
    names = [p.name for p in generate(cfg).profiles]
    assert names[:3] == [taken, "Pat Lee", "Pat Lee"]  # duplicates in the file: told apart by id
    assert len(set(names[3:])) == 9 and not set(names[3:]) & {taken, "Pat Lee"}
