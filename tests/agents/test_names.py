"""Generated names are plain (no id, no digit), unique at any size and fixed by the seed, and
fit the agent's gender; names from a profiles file stay as given."""

from __future__ import annotations

import csv
import re

from societas.agents.cognition.persona import plain_name
from societas.agents.population import FEMALE_NAMES, MALE_NAMES, generate, unique_names
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


def first_name_gender(name: str) -> str | None:
    first = name.split(" ", 1)[0]
    return "female" if first in FEMALE_NAMES else "male" if first in MALE_NAMES else None


def test_a_generated_name_fits_the_gender_and_both_genders_are_drawn() -> None:
    """A persona never reads "Noah Adams, gender: female": a model takes the name as a cue."""
    profiles = generate(load_scenario({**SMALL, "agents": {"count": 600}})).profiles
    assert all(first_name_gender(p.name) in (None, p.gender) for p in profiles)
    women = sum(p.gender == "female" for p in profiles) / len(profiles)
    assert 0.4 < women < 0.6
    neutral = [p.gender for p in profiles if first_name_gender(p.name) is None]
    assert {"female", "male"} <= set(neutral)  # Kim, Quin, Sam: either, by the coin


def test_a_profile_file_gender_renames_a_generated_name_that_does_not_fit(tmp_path) -> None:
    generated = unique_names(40, 0)
    rows = []
    for name in generated:  # every clearly gendered name given the other gender
        read = first_name_gender(name)
        rows.append({"gender": {"female": "male", "male": "female"}.get(read or "", "nonbinary")})
    rows[0] = {"gender": "female", "name": "Pat Lee"}  # a name from the file stays as given
    path = tmp_path / "people.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["gender", "name"])
        writer.writeheader()
        writer.writerows(rows)
    cfg = load_scenario({**SMALL, "seed": 0, "agents": {"count": 40, "profiles": str(path)}})
    profiles = generate(cfg).profiles
    assert profiles[0].name == "Pat Lee"
    assert [p.gender for p in profiles] == [r["gender"] for r in rows]
    assert all(first_name_gender(p.name) in (None, p.gender) for p in profiles[1:])
    renamed = [p for p in profiles[1:] if p.name != generated[p.id]]
    assert len(renamed) == sum(first_name_gender(n) is not None for n in generated[1:])
    names = [p.name for p in profiles]
    assert len(set(names)) == 40
