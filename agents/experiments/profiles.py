"""Populations from files: one agent per row of a CSV, Parquet or JSONL file.

Columns name profile fields (`name`, `age`, `gender`, `occupation`, `income`, `personality`,
`trust`, `stubbornness`, `sociability`, and the seed's demographic fields `race`, `religion`,
`marriage_status`, `residence`, `education`, `skill`, `family_consumption`), attitudes
(`attitude.<topic>`) or custom status attributes declared in the scenario; what a file
leaves out is drawn by the seeded generator.
A bad value gets an error naming the file, row, column and that one value: such files may
hold personal data, so values of other rows never appear in errors or logs.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

PROFILE_FIELDS: dict[str, str] = {
    "name": "str",
    "age": "int",
    "gender": "str",
    "occupation": "str",
    "income": "float",
    "personality": "str",
    "trust": "float",
    "stubbornness": "float",
    "sociability": "float",
    "type": "str",
    "race": "str",
    "religion": "str",
    "marriage_status": "str",
    "residence": "str",
    "education": "str",
    "skill": "str",
    "family_consumption": "str",
}
_RANGES: dict[str, tuple[float, float]] = {
    "age": (0, 120),
    "income": (0, float("inf")),
    "trust": (0, 1),
    "stubbornness": (0, 1),
    "sociability": (0, 1),
}
_TRUE, _FALSE = {"true", "1", "yes", "y"}, {"false", "0", "no", "n", ""}


class ProfileFileError(ValueError):
    """A profiles file that cannot be used; the message names file, row, column, value."""


def convert(value: Any, type_name: str) -> Any:
    """`value` (a CSV string or a typed Parquet/JSON value) as `type_name`; ValueError if not."""
    if value is None:
        raise ValueError("empty")
    if type_name == "str":
        if isinstance(value, list | dict):
            raise ValueError("not text")
        return str(value)
    if type_name == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ValueError("not a boolean")
    if type_name in ("int", "float"):
        if isinstance(value, bool):
            raise ValueError("a boolean is not a number")
        number = float(value) if isinstance(value, int | float) else float(str(value).strip())
        if not math.isfinite(number):
            raise ValueError("not a finite number")
        if type_name == "int":
            if number != int(number):
                raise ValueError("not a whole number")
            return int(number)
        return number
    if isinstance(value, str):
        value = json.loads(value)
    expected = list if type_name == "list" else dict
    if not isinstance(value, expected):
        raise ValueError(f"not a {type_name}")
    return value


def _read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of the file as dicts (CSV cells stay strings: types come from the schema)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        import pyarrow.csv as pcsv

        head = path.open(encoding="utf-8").readline()
        names = [c.strip() for c in head.rstrip("\r\n").split(",")]
        options = pcsv.ConvertOptions(column_types=dict.fromkeys(names, "string"))
        table = pcsv.read_csv(path, convert_options=options)
    elif suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    elif suffix in (".jsonl", ".ndjson", ".json"):
        import pyarrow.json as pjson

        table = pjson.read_json(path)
    else:
        raise ProfileFileError(f"{path}: use a .csv, .parquet or .jsonl file, got {suffix!r}")
    return table.to_pylist()


def _columns(
    path: Path, names: list[str], attributes: dict[str, str], topics: set[str]
) -> dict[str, tuple[str, str]]:
    """column -> (where, type): where is 'profile', 'attitude' or 'attribute'."""
    out: dict[str, tuple[str, str]] = {}
    for col in names:
        if col == "id":
            out[col] = ("id", "int")
        elif col in PROFILE_FIELDS:
            out[col] = ("profile", PROFILE_FIELDS[col])
        elif col.startswith("attitude.") and col.removeprefix("attitude.") in topics:
            out[col] = ("attitude", "float")
        elif col in attributes:
            out[col] = ("attribute", attributes[col])
        else:
            known = sorted([*PROFILE_FIELDS, *attributes, *(f"attitude.{t}" for t in topics)])
            raise ProfileFileError(
                f"{path}: unknown column {col!r}; columns are profile fields, "
                f"attitude.<topic> or attributes declared in the scenario: {known}"
            )
    return out


def load_profiles(
    path: str | Path, attributes: dict[str, str], topics: list[str]
) -> list[dict[str, dict[str, Any]]]:
    """Validated rows: [{'profile': {...}, 'attitude': {...}, 'attribute': {...}}, ...]."""
    resolved = Path(path).resolve()
    try:
        st = resolved.stat()
        stamp = (st.st_mtime_ns, st.st_size)  # an edited file is read again
    except OSError:
        stamp = (0, 0)
    return _load_cached(str(resolved), tuple(sorted(attributes.items())), tuple(topics), stamp)


@lru_cache(maxsize=8)
def _load_cached(
    path_s: str,
    attributes: tuple[tuple[str, str], ...],
    topics: tuple[str, ...],
    _stamp: tuple[int, int],
) -> list[dict[str, dict[str, Any]]]:
    path = Path(path_s)
    if not path.is_file():
        raise ProfileFileError(f"{path}: profiles file not found")
    try:
        rows = _read_rows(path)
    except ProfileFileError:
        raise
    except Exception as err:  # a malformed file: name the file and the reader's complaint
        raise ProfileFileError(
            f"{path}: cannot read profiles: {str(err).splitlines()[0]}"
        ) from None
    if len(rows) < 2:
        raise ProfileFileError(f"{path}: needs at least 2 rows (agents), has {len(rows)}")
    columns = _columns(path, list(rows[0]), dict(attributes), set(topics))
    out = []
    for r, row in enumerate(rows):
        parsed: dict[str, dict[str, Any]] = {"profile": {}, "attitude": {}, "attribute": {}}
        for col, (where, type_name) in columns.items():
            value = row.get(col)
            if value is None or value == "":
                if where == "id":
                    raise ProfileFileError(f"{path}: row {r + 1}, column 'id': empty")
                continue  # left to the generator or the attribute's default
            try:
                value = convert(value, type_name)
            except (ValueError, TypeError) as err:
                raise ProfileFileError(
                    f"{path}: row {r + 1}, column {col!r}: {value!r:.60} is not a valid "
                    f"{type_name} ({err})"
                ) from None
            low, high = _RANGES.get(col, (None, None))
            if low is not None and not low <= value <= high:
                raise ProfileFileError(
                    f"{path}: row {r + 1}, column {col!r}: {value!r} is outside {low}..{high}"
                )
            if where == "id":
                if value != r:
                    raise ProfileFileError(
                        f"{path}: row {r + 1}, column 'id': {value!r} must be {r} "
                        "(ids are the row order, from 0)"
                    )
                continue
            if where == "attitude":
                if not 0 <= value <= 10:
                    raise ProfileFileError(
                        f"{path}: row {r + 1}, column {col!r}: {value!r} is outside 0..10"
                    )
                parsed["attitude"][col.removeprefix("attitude.")] = value
            else:
                parsed[where][col] = value
        out.append(parsed)
    return out
