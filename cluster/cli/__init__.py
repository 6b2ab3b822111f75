"""The `societas` command line; `main` is the console script, imported on first use."""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    """`main` and `app` from `cli.commands`, so importing a command module builds no app."""
    if name in __all__:
        return getattr(import_module("societas.cluster.cli.commands"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
