"""The streamed group checkpoint JSON is byte for byte what json.dumps(sort_keys=True) gives."""

from __future__ import annotations

import json
import random

import pytest

from societas.agents.runtime.group_json import write_group_json


def test_streamed_group_json_matches_json_dumps(tmp_path) -> None:
    rng = random.Random(5)
    states = {
        a: {
            "state": {"plan": [{"hour": h, "what": f"work é {a}"} for h in range(3)], "mood": a},
            "rng": [rng.randrange(2**32) for _ in range(4)],
            "rng_gauss": None if a % 2 else 0.25,
        }
        for a in (3, 10, 2, 100, 21)  # string order differs from numeric order
    }
    head = {"group_id": 7, "danger": True, "reflection": {"b": [1, 2], "a": {}}, "unreported": {}}
    path = tmp_path / "group-0007.json"
    calls = []

    def getter(a):
        def get():
            calls.append(a)
            return states[a]

        return get

    write_group_json(path, head, {a: getter(a) for a in states})
    whole = {**head, "agents": {str(a): s for a, s in states.items()}}
    assert path.read_bytes() == json.dumps(whole, sort_keys=True).encode()
    assert sorted(calls) == sorted(states) and len(calls) == len(states)  # each encoded once
    assert not list(tmp_path.glob(".*.tmp"))


def test_empty_group_and_misuse(tmp_path) -> None:
    path = tmp_path / "new" / "g.json"  # the folder is made
    write_group_json(path, {"group_id": 0}, {})
    assert json.loads(path.read_text()) == {"agents": {}, "group_id": 0}
    assert path.read_bytes() == json.dumps({"group_id": 0, "agents": {}}, sort_keys=True).encode()
    with pytest.raises(ValueError, match="agents"):
        write_group_json(path, {"agents": {}}, {})
