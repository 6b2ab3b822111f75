"""MemoryAttribute / MemoryConfig: seed-style construction and clear errors on bad input."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from societas.memory import CITIZEN_MEMORY_CONFIG, GroupMemoryConfig, MemoryAttribute, MemoryConfig


def test_from_list_accepts_objects_dicts_and_seed_tuples():
    config = MemoryConfig.from_list(
        [
            MemoryAttribute(
                name="name",
                type=str,
                default_or_value="",
                whether_embedding=True,
                embedding_template="My name is {}",
            ),
            {"name": "age", "type": "int", "default_or_value": 3},
            ("income", float, 1, "monthly income"),
        ]
    )
    assert list(config.attributes) == ["name", "age", "income"]
    assert config.attributes["income"].default_or_value == 1
    assert config.attributes["income"].type == "float"
    assert [a.name for a in config.embedded] == ["name"]
    assert config.attributes["name"].embedding_text("Ann") == "My name is Ann"


def test_citizen_config_has_the_society_agent_attributes():
    names = set(CITIZEN_MEMORY_CONFIG.attributes)
    for required in (
        "name",
        "age",
        "gender",
        "occupation",
        "income",
        "hunger_satisfaction",
        "energy_satisfaction",
        "safety_satisfaction",
        "social_satisfaction",
        "emotion",
        "thought",
        "attitude",
        "social_network",
        "chat_histories",
        "position",
    ):
        assert required in names
    assert {a.name for a in CITIZEN_MEMORY_CONFIG.embedded} >= {"name", "occupation", "thought"}


def test_default_is_a_fresh_copy():
    attr = CITIZEN_MEMORY_CONFIG.attributes["emotion"]
    first = attr.default()
    first["joy"] = 99
    assert attr.default()["joy"] == 5


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"name": "x", "type": "complex"}, "complex"),
        ({"name": "x", "type": "int", "default_or_value": "three"}, "'x': expected int, got str"),
        ({"name": "x", "type": "int", "default_or_value": True}, "expected int, got bool"),
        ({"name": "x", "type": "str", "embedding_template": "no slot"}, "no slot"),
        ({"name": "", "type": "str"}, "name"),
    ],
)
def test_bad_attribute_names_field_and_value(item, message):
    with pytest.raises((ValidationError, TypeError)) as info:
        MemoryConfig.from_list([item])
    assert message in str(info.value)


def test_duplicate_attribute_rejected():
    with pytest.raises(ValueError, match="duplicate memory attribute 'a'"):
        MemoryConfig.from_list([("a", str), ("a", int)])


def test_bad_tuple_and_bad_item():
    with pytest.raises(ValueError, match=r"2\.\.6 items"):
        MemoryConfig.from_list([("a",)])
    with pytest.raises(TypeError, match="cannot read"):
        MemoryConfig.from_list([42])


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"vector_store": {"backend": "qdrant"}}, "vector_store.url"),
        ({"vector_store": {"backend": "mongo"}}, "backend"),
        ({"embedding": {"kind": "openai"}}, "embedding.openai"),
        ({"retrieval": {"recency_half_life_hours": 0}}, "recency_half_life_hours"),
        ({"retrieval": {"mmr_lambda": 2}}, "mmr_lambda"),
        ({"default_importance": 1.5}, "default_importance"),
        ({"unknown_knob": 1}, "unknown_knob"),
    ],
)
def test_bad_group_config_names_the_field(raw, field):
    with pytest.raises(ValidationError) as info:
        GroupMemoryConfig.model_validate(raw)
    assert field.split(".")[-1] in str(info.value)


def test_shipped_yaml_configs_validate():
    from pathlib import Path

    configs = Path(__file__).resolve().parents[2] / "configs"
    default = GroupMemoryConfig.from_yaml(configs / "memory.yaml")
    assert default.embedding.kind == "bm25" and default.vector_store.backend == "edge"
    assert default.retrieval == GroupMemoryConfig().retrieval  # it shows the defaults as they are
    cluster = GroupMemoryConfig.from_yaml(configs / "memory-qdrant-cluster.yaml")
    assert cluster.vector_store.api_key_env == "QDRANT_API_KEY"
    assert cluster.embedding.openai.dimensions == 384


def test_bad_yaml_lists_every_bad_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("retrieval:\n  recency_weight: -1\n  mmr_lambda: 7\nembedding:\n  kind: x\n")
    with pytest.raises(ValidationError) as info:
        GroupMemoryConfig.from_yaml(path)
    text = str(info.value)
    assert "retrieval.recency_weight" in text and "retrieval.mmr_lambda" in text
    assert "embedding.kind" in text and "'x'" in text
    path.write_text("- just\n- a list\n")
    with pytest.raises(ValueError, match="expected a mapping"):
        GroupMemoryConfig.from_yaml(path)
    path.write_text("retrieval: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        GroupMemoryConfig.from_yaml(path)
