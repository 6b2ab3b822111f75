"""A network from an edge-list file: the agents' ties are the file's; a bad row is one line
naming the file, row, column and value before tick 0."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from societas.agents.population import population_for
from societas.agents.scenario import ScenarioConfigError, load_scenario

from .test_outcomes_recorded import cfg


def _csv(tmp_path, text):
    path = tmp_path / "edges.csv"
    path.write_text(text)
    return path


def test_the_network_is_the_edge_list(tmp_path):
    path = _csv(tmp_path, "source,target,weight\n0,1,0.5\n1,2,\n3,0,2\n")
    pop = population_for(load_scenario(cfg(network={"k": 4, "edges": str(path)})))
    assert list(pop.friends[0]) == [(1, 0.5), (3, 2.0)]
    assert list(pop.friends[1]) == [(0, 0.5), (2, 1.0)]
    assert list(pop.friends[9]) == []
    table = pa.table({"source": [4, 5], "target": [5, 6]})
    pq.write_table(table, tmp_path / "edges.parquet")
    pop = population_for(
        load_scenario(cfg(network={"k": 4, "edges": str(tmp_path / "edges.parquet")}))
    )
    assert list(pop.friends[5]) == [(4, 1.0), (6, 1.0)]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("source,target\n0,1\n2,99\n", "row 2, column 'target': agent 99 does not exist"),
        ("source,target\n0,x\n", "row 1, column 'target': 'x' is not an agent id"),
        ("source,target\n3,3\n", "row 1: agent 3 is tied to itself"),
        ("source,target,weight\n0,1,-2\n", "row 1, column 'weight': -2"),
        ("from,to\n0,1\n", "needs columns source, target"),
    ],
)
def test_a_bad_edge_list_is_one_line(tmp_path, text, words):
    path = _csv(tmp_path, text)
    with pytest.raises(ScenarioConfigError) as err:
        load_scenario(cfg(network={"k": 4, "edges": str(path)}))
    assert len(err.value.problems) == 1
    where, msg = err.value.problems[0]
    assert where == "network.edges" and str(path) in msg and words in msg
