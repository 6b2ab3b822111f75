"""A social network from an edge-list file (CSV or Parquet: source, target, optional weight),
validated like a profiles file: a bad row names the file, row, column and value."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

Problems = list[tuple[str, str]]
WHERE = "network.edges"


class EdgeFileError(ValueError):
    """An edge list that cannot be used; the message names file, row, column and value."""


def _rows(path: Path) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    if not path.is_file():
        raise EdgeFileError(f"{path}: edge list not found")
    if suffix == ".csv":
        from pyarrow import csv

        table = csv.read_csv(path)
    elif suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    else:
        raise EdgeFileError(f"{path}: use a .csv or .parquet file, got {suffix!r}")
    missing = [c for c in ("source", "target") if c not in table.column_names]
    if missing:
        raise EdgeFileError(f"{path}: needs columns source, target (missing {missing})")
    return table.to_pylist()


def _agent(path: Path, r: int, column: str, value: Any, n: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise EdgeFileError(f"{path}: row {r}, column {column!r}: {value!r} is not an agent id")
    if not 0 <= int(value) < n:
        raise EdgeFileError(
            f"{path}: row {r}, column {column!r}: agent {int(value)} does not exist (0..{n - 1})"
        )
    return int(value)


def read_edges(path: str | Path, n: int) -> dict[int, list[tuple[int, float]]]:
    """agent id -> sorted (friend, tie strength) from the file (undirected; weight 1 when
    absent; a repeated pair keeps its last weight); EdgeFileError on the first bad row."""
    path = Path(path)
    ties: dict[tuple[int, int], float] = {}
    for r, row in enumerate(_rows(path), start=1):
        u = _agent(path, r, "source", row["source"], n)
        v = _agent(path, r, "target", row["target"], n)
        if u == v:
            raise EdgeFileError(f"{path}: row {r}: agent {u} is tied to itself")
        w = row.get("weight", 1.0)
        w = 1.0 if w is None else w
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w <= 0:
            raise EdgeFileError(f"{path}: row {r}, column 'weight': {w!r} is not a number > 0")
        ties[(min(u, v), max(u, v))] = round(float(w), 3)
    friends: dict[int, list[tuple[int, float]]] = {i: [] for i in range(n)}
    for (u, v), w in ties.items():
        friends[u].append((v, w))
        friends[v].append((u, w))
    return {i: sorted(f) for i, f in friends.items()}


def edge_problems(edges: Path | None, n: int) -> Problems:
    """The first problem of the edge list as (network.edges, message), or none."""
    if edges is None:
        return []
    try:
        read_edges(edges, n)
    except EdgeFileError as err:
        return [(WHERE, str(err))]
    except (OSError, ValueError) as err:
        return [(WHERE, f"{edges}: cannot read ({err})")]
    return []
