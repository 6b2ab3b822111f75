"""Prompt templates kept as text files, rendered with str.format.

The defaults live under `prompts/` in this package. A scenario may name a folder of its own
(`prompts:` in the scenario config): a template found there replaces the default of the same
name, the others stay the defaults. The folder in force is a context variable the group
engine sets for its step, so two scenarios in one process never mix; the template cache is
keyed by (folder, name). Every prompt goes static part first (the system persona and rules,
then the template's fixed text) and dynamic part last, so a server's prefix cache hits.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from societas.agents.llm.errors import LLMInputError

# The scenario's template folder for the running task (None: the packaged defaults).
PROMPT_FOLDER: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "societas_prompt_folder", default=None
)


def check_folder(folder: str | Path) -> Path:
    """The resolved folder, or an error naming it when it is not a folder of .txt files."""
    path = Path(folder).expanduser().resolve()
    if not path.is_dir():
        raise LLMInputError(f"prompts: {str(folder)!r} is not a folder")
    if not any(path.glob("*.txt")):
        raise LLMInputError(f"prompts: folder {str(folder)!r} holds no .txt templates")
    return path


def set_folder(folder: str | Path | None) -> None:
    """Use `folder` (None: the defaults) for prompts rendered in the current task from now."""
    PROMPT_FOLDER.set(str(check_folder(folder)) if folder is not None else None)


@contextmanager
def use_folder(folder: str | Path | None) -> Iterator[None]:
    """Use `folder` for prompts rendered inside the block, then restore the previous one."""
    token = PROMPT_FOLDER.set(str(check_folder(folder)) if folder is not None else None)
    try:
        yield
    finally:
        PROMPT_FOLDER.reset(token)


@cache
def _template(folder: str | None, template_name: str) -> str:
    if folder is not None:
        own = Path(folder) / f"{template_name}.txt"
        if own.is_file():
            return own.read_text(encoding="utf-8")
    path = resources.files(__package__).joinpath("prompts", f"{template_name}.txt")
    if not path.is_file():
        where = f"{folder} or " if folder else ""
        raise LLMInputError(
            f"prompt template {template_name!r} not found under {where}{__package__}/prompts"
        )
    return path.read_text(encoding="utf-8")


def template(template_name: str, folder: str | None = None) -> str:
    """The text of `<template_name>.txt` from `folder` (default: the folder in force), else
    the packaged default (cached per folder and name)."""
    return _template(folder if folder is not None else PROMPT_FOLDER.get(), template_name)


def clear_cache() -> None:
    """Forget cached templates (after editing files in a running process)."""
    _template.cache_clear()


def render(template_name: str, /, **fields: Any) -> str:
    """Fill a template; a missing field is an error naming it."""
    try:
        return template(template_name).format(**fields).strip()
    except KeyError as err:
        raise LLMInputError(f"prompt {template_name!r}: missing field {err.args[0]!r}") from None


def messages(template_name: str, /, system: dict[str, Any], **fields: Any) -> list[dict[str, str]]:
    """System persona (static per agent) + the rendered user prompt (static text first)."""
    return [
        {"role": "system", "content": render("system", **system)},
        {"role": "user", "content": render(template_name, **fields)},
    ]
