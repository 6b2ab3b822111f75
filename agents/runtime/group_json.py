"""A group's checkpoint JSON (agents' hot state, RNG positions, reflection), streamed.

`json.dumps` of the whole group would build every agent's state dict and then one string of
the whole file at once. Here each agent's entry is encoded and written in turn, so one
agent's state is held at a time; the bytes are exactly those of
`json.dumps(state, sort_keys=True)` (a test compares them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from societas.memory.store.fsutil import fsync_dir


def write_group_json(
    path: Path, head: Mapping[str, Any], agents: Mapping[int, Callable[[], dict[str, Any]]]
) -> None:
    """Write `{**head, "agents": {str(id): state()}}` as `json.dumps(..., sort_keys=True)`
    would, atomically (temporary file, fsync, rename)."""
    if "agents" in head:
        raise ValueError("head must not hold 'agents': they are streamed from `agents`")
    encode = json.JSONEncoder(sort_keys=True).encode
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    keys = sorted([*head, "agents"])
    with open(tmp, "w", encoding="utf-8") as out:
        out.write("{")
        for n, key in enumerate(keys):
            out.write(("" if n == 0 else ", ") + encode(key) + ": ")
            if key != "agents":
                out.write(encode(head[key]))
                continue
            out.write("{")
            for i, agent_key in enumerate(sorted(str(a) for a in agents)):
                state = agents[int(agent_key)]()
                out.write(("" if i == 0 else ", ") + encode(agent_key) + ": " + encode(state))
            out.write("}")
        out.write("}")
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
