"""societas: LLM-driven agent societies with memory, reflection and social life, on Ray.

The public API is what `__all__` lists; each name is imported on first use, so
`import societas` stays light. Everything else is an implementation detail.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("societas")
except PackageNotFoundError:
    __version__ = "0.0.0"

if TYPE_CHECKING:
    from societas.agents.agent import Agent, AgentContext, Block
    from societas.agents.llm import LLMGateway
    from societas.agents.scenario import ScenarioConfig, ScenarioConfigError, load_scenario
    from societas.cluster.society import Society
    from societas.memory import GroupMemory

_HOMES: dict[str, str] = {
    "Society": "societas.cluster.society",
    "load_scenario": "societas.agents.scenario",
    "ScenarioConfig": "societas.agents.scenario",
    "ScenarioConfigError": "societas.agents.scenario",
    "Agent": "societas.agents.agent",
    "Block": "societas.agents.agent",
    "AgentContext": "societas.agents.agent",
    "GroupMemory": "societas.memory",
    "LLMGateway": "societas.agents.llm",
}

__all__ = [
    "Agent",
    "AgentContext",
    "Block",
    "GroupMemory",
    "LLMGateway",
    "ScenarioConfig",
    "ScenarioConfigError",
    "Society",
    "__version__",
    "load_scenario",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its home module on first use and then cached here."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
