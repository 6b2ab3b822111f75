"""The town's keys live with the blocks that use them, not in the core Agent."""

from __future__ import annotations

import inspect

import societas.agents.agent as core
from societas.agents.blocks.state import BUILTIN, attributes_of, hot_keys_of, kept_of
from societas.agents.experiments.checks import memory_config_of
from societas.agents.scenario import load_scenario


def test_core_agent_names_no_town_key():
    source = inspect.getsource(core)
    for state in BUILTIN:
        for key in (*state.hot_keys, *state.kept, *(a.name for a in state.attributes)):
            assert f'"{key}"' not in source, key


def test_declared_attributes_make_the_schema_and_hot_keys_are_unique():
    names = list(memory_config_of(load_scenario({"name": "t"})).attributes)
    assert [a.name for a in attributes_of()] == names
    keys = hot_keys_of()
    assert len(keys) == len(set(keys))
    assert {"hunger_satisfaction", "position", "evacuating", "currency"} <= set(keys)
    assert all(k.startswith("_") for k in kept_of())
