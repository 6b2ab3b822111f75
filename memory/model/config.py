"""Typed memory configuration: KV attributes of an agent type and the group memory knobs."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from societas.memory.architectures.cognitive import CognitiveConfig
from societas.memory.architectures.profiles import AgentTypeMemory
from societas.memory.embedding.config import EmbeddingConfig
from societas.memory.policies.forgetting import MemoryPolicies, finmem_forgetting
from societas.memory.retrieval.scoring import RetrievalConfig
from societas.memory.tiers.tiering import TierConfig
from societas.memory.vectorstores.config import VectorStoreConfig

AttributeType = Literal["str", "int", "float", "bool", "list", "dict"]

_PY_TYPES: dict[str, type] = {t.__name__: t for t in (str, int, float, bool, list, dict)}
_TYPE_NAMES = {v: k for k, v in _PY_TYPES.items()}


def _type_name(value_type: Any) -> str:
    if isinstance(value_type, str) and value_type in _PY_TYPES:
        return value_type
    if isinstance(value_type, type) and value_type in _TYPE_NAMES:
        return _TYPE_NAMES[value_type]
    raise ValueError(
        f"type must be one of {sorted(_PY_TYPES)} (or the Python type), got {value_type!r}"
    )


_ATOMIC = frozenset({str, int, float, bool, type(None)})


def private_copy(value: Any, owned: Any = None) -> Any:
    """A deep copy of a KV value that reuses what of `owned` (already private) it still holds."""
    cls = type(value)
    if cls in _ATOMIC or value is owned:
        return value
    if cls is dict:
        prior = owned if type(owned) is dict else {}
        return {
            k: v if type(v) in _ATOMIC else private_copy(v, prior.get(k)) for k, v in value.items()
        }
    if cls is list:
        if type(owned) is not list or not owned:
            return [v if type(v) in _ATOMIC else private_copy(v) for v in value]
        held = {id(v) for v in owned if type(v) is dict or type(v) is list}
        return [v if type(v) in _ATOMIC or id(v) in held else private_copy(v) for v in value]
    return copy.deepcopy(value)


def check_value(key: str, type_name: str, value: Any) -> Any:
    """Return `value` if it fits `type_name` (ints widen to float), else raise TypeError."""
    kind: Any = int | float if type_name == "float" else _PY_TYPES[type_name]
    numeric = type_name in ("int", "float")
    if not isinstance(value, kind) or (numeric and isinstance(value, bool)):
        raise TypeError(
            f"memory attribute {key!r}: expected {type_name}, got {type(value).__name__} "
            f"({value!r:.80})"
        )
    return float(value) if type_name == "float" else value


class MemoryAttribute(BaseModel, frozen=True):
    """One KV (status) attribute: its type, default, and whether its text is searchable."""

    name: str = Field(min_length=1)
    type: AttributeType
    default_or_value: Any = None
    description: str = ""
    whether_embedding: bool = False
    embedding_template: str | None = Field(
        None, description="Text embedded for the attribute; '{}' is replaced by the value."
    )

    @field_validator("type", mode="before")
    @classmethod
    def _normalise_type(cls, value: Any) -> str:
        return _type_name(value)

    @model_validator(mode="after")
    def _default_fits_type(self) -> MemoryAttribute:
        if self.default_or_value is not None:
            check_value(self.name, self.type, self.default_or_value)
        if self.embedding_template is not None and "{}" not in self.embedding_template:
            raise ValueError(
                f"embedding_template of {self.name!r} must contain '{{}}', "
                f"got {self.embedding_template!r}"
            )
        return self

    def default(self) -> Any:
        """A fresh copy of the default, so agents never share a mutable default."""
        return private_copy(self.default_or_value)

    def embedding_text(self, value: Any) -> str:
        """The text indexed for this attribute's value."""
        rendered = value if isinstance(value, str) else repr(value)
        if self.embedding_template:
            return self.embedding_template.replace("{}", str(rendered))
        return f"{self.name}: {rendered}"


class MemoryConfig(BaseModel, frozen=True):
    """The KV attributes one agent type has, by name."""

    attributes: dict[str, MemoryAttribute]

    @model_validator(mode="after")
    def _names_match_keys(self) -> MemoryConfig:
        for key, attr in self.attributes.items():
            if key != attr.name:
                raise ValueError(f"attributes[{key!r}] is named {attr.name!r}")
        return self

    @classmethod
    def from_list(
        cls, items: Iterable[MemoryAttribute | Mapping[str, Any] | tuple]
    ) -> MemoryConfig:
        """Build from MemoryAttribute objects, dicts, or seed-style tuples (name, type, ...)."""
        attributes: dict[str, MemoryAttribute] = {}
        for item in items:
            if isinstance(item, MemoryAttribute):
                attr = item
            elif isinstance(item, Mapping):
                attr = MemoryAttribute(**item)
            elif isinstance(item, tuple):
                fields = tuple(MemoryAttribute.model_fields)
                if not 2 <= len(item) <= len(fields):
                    raise ValueError(f"attribute tuple needs 2..6 items, got {item!r}")
                attr = MemoryAttribute(**dict(zip(fields, item, strict=False)))
            else:
                raise TypeError(f"cannot read a memory attribute from {item!r}")
            if attr.name in attributes:
                raise ValueError(f"duplicate memory attribute {attr.name!r}")
            attributes[attr.name] = attr
        return cls(attributes=attributes)

    @property
    def embedded(self) -> list[MemoryAttribute]:
        """Attributes whose values are indexed for KV search."""
        return [a for a in self.attributes.values() if a.whether_embedding]

    def attribute(self, key: str) -> MemoryAttribute:
        """The attribute named `key`; KeyError naming it if the config has none."""
        try:
            return self.attributes[key]
        except KeyError:
            raise KeyError(f"unknown memory attribute {key!r}") from None


class GroupMemoryConfig(BaseModel, extra="forbid"):
    """Everything one group's memory needs: where it lives, how it embeds and ranks."""

    @classmethod
    def from_yaml(cls, path: str | Path) -> GroupMemoryConfig:
        """Load and validate a YAML file; every bad field is reported with its path."""
        import yaml

        source = Path(path)
        try:
            raw = yaml.safe_load(source.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"{source}: not valid YAML: {exc}") from exc
        if not isinstance(raw, dict):
            raise ValueError(f"{source}: expected a mapping at the top, got {type(raw).__name__}")
        return cls.model_validate(raw)

    group_id: int = Field(0, ge=0, lt=2**23, description="Unique per run; prefixes point ids.")
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    vector_store: VectorStoreConfig = Field(default_factory=VectorStoreConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    tiers: TierConfig = Field(default_factory=TierConfig)
    policies: MemoryPolicies = Field(default_factory=MemoryPolicies)
    default_importance: float = Field(0.5, ge=0.0, le=1.0)
    profile: Literal["default", "finmem", "cognitive"] = Field(
        "default",
        description="Memory architecture: Generative Agents scoring (default), FinMem layers "
        "(per-layer retrieval, promotion by access, importance thresholds) or cognitive layers.",
    )
    cognitive: CognitiveConfig = Field(default_factory=CognitiveConfig)
    agent_types: dict[str, AgentTypeMemory] = Field(
        default_factory=dict, description="Agent type -> its memory profile; others run `profile`."
    )
    access_log: bool = Field(
        False, description="Log reads, writes and deletes per group to Parquet (access_log/)."
    )
    batch_yields: int = Field(
        1,
        ge=0,
        le=100,
        description="Event-loop turns a per-agent call waits so concurrent calls share a batch.",
    )

    @model_validator(mode="after")
    def _apply_profile(self) -> GroupMemoryConfig:
        """A profile fills the policies it needs unless the config sets them itself."""
        if self.profile == "finmem" and "forgetting" not in self.policies.model_fields_set:
            self.policies.forgetting = finmem_forgetting()
        for name in self.agent_types:
            if not name.strip():
                raise ValueError(f"agent_types: an agent type name must not be empty, got {name!r}")
        profiles = {self.profile, *(t.profile for t in self.agent_types.values())}
        if "cognitive" not in profiles and self.cognitive != CognitiveConfig():
            raise ValueError(
                f"cognitive: only the profile 'cognitive' takes it, got profile {self.profile!r} "
                "and no agent type with profile 'cognitive'"
            )
        return self
