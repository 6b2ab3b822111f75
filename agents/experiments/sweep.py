"""`sweep:` in a scenario: a grid over config fields expanded into arms before validation.

    sweep:
      economy.consumption_propensity: [0.5, 0.7]
      arms.treatment.interventions.0.amount: [400, 800]

Every grid point becomes one arm per existing arm (or one arm when there are none), named
after the arm and the values (`treatment-consumption_propensity-0p5-amount-400`); a path
into one arm is swept in that arm only. Each arm's `analysis.arm_base` and
`analysis.sweep_point` say where it came from (the report pairs each arm with the reference
arm at the same point of the shared fields). A path into
`arms.<name>.` changes that arm's own patch; any other path is an override of the arm (so
fields shared by arms, such as the population, cannot be swept).
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any

Problems = list[tuple[str, str]]
MAX_POINTS = 1000


def _label(path: str, value: Any) -> str:
    text = f"{path.rsplit('.', 1)[-1]}-{value}"
    return re.sub(r"[^A-Za-z0-9_\-]", "", text.replace(".", "p").replace(" ", "_"))


def _walk(data: Any, parts: list[str]) -> tuple[bool, str]:
    """Whether `parts` names something in `data` (dicts by key, lists by index)."""
    node = data
    for i, part in enumerate(parts):
        where = ".".join(parts[:i]) or "the scenario"
        if isinstance(node, dict):
            if part not in node:
                return False, f"{where} has no field {part!r}"
            node = node[part]
        elif isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                return False, f"{where} has no entry {part!r} (it has {len(node)})"
            node = node[int(part)]
        else:
            return False, f"{where} is a value, not a section"
    return True, ""


def _crosses_list(data: Any, parts: list[str]) -> bool:
    node = data
    for part in parts[:-1]:
        node = node[part] if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return True
    return False


def _set(data: dict[str, Any], parts: list[str], value: Any) -> None:
    node: Any = data
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value


def sweep_problems(raw: dict[str, Any], full: dict[str, Any]) -> Problems:
    """Problems of `raw["sweep"]` against `full` (the scenario with every default)."""
    grid = raw.get("sweep")
    if not isinstance(grid, dict):
        return [("sweep", "expected a mapping of field path -> list of values")]
    problems: Problems = []
    arms = {a.get("name"): a for a in raw.get("arms") or [] if isinstance(a, dict)}
    points = 1
    for path, values in grid.items():
        where = f"sweep.{path}"
        if not isinstance(values, list) or not values:
            problems.append((where, f"expected a non-empty list of values, got {values!r}"))
            continue
        points *= len(values)
        parts = str(path).split(".")
        if parts[0] == "arms":
            if len(parts) < 3 or parts[1] not in arms:
                problems.append((where, f"no arm {parts[1] if len(parts) > 1 else ''!r}; "
                                        f"arms are {sorted(str(a) for a in arms)}"))  # fmt: skip
                continue
            ok, why = _walk(arms[parts[1]], parts[2:])
        elif parts[0] in ("interventions", "sweep", "name"):
            ok, why = False, f"cannot sweep {parts[0]!r} (put interventions in an arm)"
        else:
            ok, why = _walk(full, parts)
            if ok and _crosses_list(full, parts):
                ok, why = False, "outside an arm a sweep cannot reach into a list"
        if not ok:
            problems.append((where, why))
    if points > MAX_POINTS:
        problems.append(("sweep", f"{points} grid points; at most {MAX_POINTS}"))
    return problems


def expand_sweep(raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` with its sweep grid turned into arms (call after `sweep_problems` is empty)."""
    grid: dict[str, list[Any]] = raw["sweep"]
    out = {k: v for k, v in raw.items() if k != "sweep"}
    bases = copy.deepcopy(raw.get("arms") or [{"name": ""}])
    arms = []
    for base in bases:
        mine = {
            p: v for p, v in grid.items() if not p.startswith("arms.") or _arm_of(p) == base["name"]
        }
        for values in itertools.product(*mine.values()):
            point = dict(zip(mine, values, strict=True))
            suffix = "-".join(_label(p, v) for p, v in point.items())
            arm = copy.deepcopy(base)
            arm["name"] = "-".join(p for p in (base["name"], suffix) if p)
            overrides = arm.setdefault("overrides", {})
            for path, value in point.items():
                parts = path.split(".")
                if parts[0] == "arms":
                    _set(arm, parts[2:], value)
                else:
                    _set(overrides, parts, value)
            overrides["analysis"] = {
                **overrides.get("analysis", {}),
                "arm_base": base["name"],
                "sweep_point": point,
            }
            arms.append(arm)
    out["arms"] = arms
    return out


def _arm_of(path: str) -> str:
    parts = path.split(".")
    return parts[1] if len(parts) > 1 else ""
