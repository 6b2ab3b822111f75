"""societas: LLM-driven agent societies with memory, reflection and social life, on Ray."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("societas")
except PackageNotFoundError:
    __version__ = "0.0.0"

__all__ = ["__version__"]
