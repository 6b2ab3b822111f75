"""Populations from CSV, Parquet and JSONL files: one agent per row, columns to profile fields
and custom attributes, and errors that name file, row, column and only that row's value."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from societas.agents.population import population_for
from societas.agents.scenario import ScenarioConfigError, load_scenario
from tests.experiments.conftest import scenario

ROWS = [
    {
        "name": f"Person {i}",
        "age": 20 + i,
        "occupation": "nurse" if i % 2 else "unemployed",
        "income": 1000.0 + 100 * i,
        "mood": round(0.1 * (i % 10), 2),
        "attitude.basic income": i % 10,
    }
    for i in range(12)
]


def write(tmp_path, kind: str, rows=ROWS):
    path = tmp_path / f"people.{kind}"
    if kind == "csv":
        cols = list(rows[0])
        lines = [",".join(cols)] + [",".join(str(r[c]) for c in cols) for r in rows]
        path.write_text("\n".join(lines) + "\n")
    elif kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize("kind", ["csv", "parquet", "jsonl"])
def test_profiles_file_sets_count_traits_and_custom_attributes(tmp_path, kind):
    path = write(tmp_path, kind)
    data = scenario(agents={"profiles": str(path)})
    cfg = load_scenario(data)
    assert cfg.agents.count == 12
    pop = population_for(cfg)
    p5 = pop.profiles[5]
    assert (p5.name, p5.age, p5.occupation, p5.income) == ("Person 5", 25, "nurse", 1500.0)
    assert p5.work != "" and pop.profiles[4].work == ""  # the unemployed have no workplace
    assert p5.extra == {"mood": 0.5} and p5.kv()["mood"] == 0.5
    assert p5.attitudes["basic income"] == 5.0
    # what the file leaves out is drawn by the seeded generator, the same every time
    assert p5.personality == population_for(load_scenario(data)).profiles[5].personality


def test_profiles_path_is_relative_to_the_scenario_file_and_count_takes_first_rows(tmp_path):
    write(tmp_path, "csv")
    yaml_path = tmp_path / "exp.yaml"
    yaml_path.write_text(
        "agents: {profiles: people.csv, count: 6}\nnetwork: {k: 2}\n"
        "attributes: [{name: mood, type: float}]\ntopics: [{name: basic income}]\n"
    )
    cfg = load_scenario(yaml_path)
    assert cfg.agents.count == 6 and cfg.agents.profiles == (tmp_path / "people.csv").resolve()
    with pytest.raises(ScenarioConfigError, match="13 is more than the 12 rows"):
        load_scenario(scenario(agents={"profiles": str(tmp_path / "people.csv"), "count": 13}))


def test_bad_row_names_file_row_column_and_only_its_own_value(tmp_path):
    rows = [dict(r) for r in ROWS]
    rows[7]["age"] = "seventy"
    rows[3]["name"] = "Secret Name Of Row 4"
    path = write(tmp_path, "csv", rows)
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(scenario(agents={"profiles": str(path)}))
    msg = str(err.value)
    assert str(path) in msg and "row 8" in msg and "'age'" in msg and "'seventy'" in msg
    assert "Secret" not in msg and "Person" not in msg  # other rows never appear


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("mood", "very", "column 'mood': 'very' is not a valid float"),
        ("income", "-5", "column 'income': -5.0 is outside 0"),
        ("attitude.basic income", "11", "outside 0..10"),
    ],
)
def test_bad_values_by_type_and_range(tmp_path, column, value, expected):
    rows = [dict(r) for r in ROWS]
    rows[2][column] = value
    path = write(tmp_path, "csv", rows)
    with pytest.raises(ScenarioConfigError, match="row 3") as err:
        load_scenario(scenario(agents={"profiles": str(path)}))
    assert expected in str(err.value)


def test_unknown_column_missing_file_and_wrong_format(tmp_path):
    rows = [{**r, "shoe_size": 42} for r in ROWS]
    with pytest.raises(ScenarioConfigError, match="unknown column 'shoe_size'"):
        load_scenario(scenario(agents={"profiles": str(write(tmp_path, "jsonl", rows))}))
    with pytest.raises(ScenarioConfigError, match="profiles file not found"):
        load_scenario(scenario(agents={"profiles": str(tmp_path / "nope.csv")}))
    odd = tmp_path / "people.xlsx"
    odd.write_text("x")
    with pytest.raises(ScenarioConfigError, match=r"use a \.csv, \.parquet or \.jsonl"):
        load_scenario(scenario(agents={"profiles": str(odd)}))


def test_an_edited_profiles_file_is_read_again(tmp_path):
    import os

    path = write(tmp_path, "csv")
    data = scenario(agents={"profiles": str(path)})
    assert population_for(load_scenario(data)).profiles[0].name == "Person 0"
    rows = [dict(r) for r in ROWS]
    rows[0]["name"] = "Renamed"
    write(tmp_path, "csv", rows)
    os.utime(path, ns=(1, 10**18))  # a new modification time, as an editor would leave
    assert population_for(load_scenario(data)).profiles[0].name == "Renamed"
