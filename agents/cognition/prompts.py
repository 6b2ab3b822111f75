"""Prompt templates kept as text files under `prompts/`, rendered with str.format."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from societas.agents.llm.errors import LLMInputError


@cache
def template(template_name: str) -> str:
    """The text of `prompts/<template_name>.txt` (cached)."""
    path = resources.files(__package__).joinpath("prompts", f"{template_name}.txt")
    if not path.is_file():
        raise LLMInputError(
            f"prompt template {template_name!r} not found under {__package__}/prompts"
        )
    return path.read_text(encoding="utf-8")


def render(template_name: str, /, **fields: Any) -> str:
    """Fill a template; a missing field is an error naming it."""
    try:
        return template(template_name).format(**fields).strip()
    except KeyError as err:
        raise LLMInputError(f"prompt {template_name!r}: missing field {err.args[0]!r}") from None


def messages(template_name: str, /, system: dict[str, Any], **fields: Any) -> list[dict[str, str]]:
    """System persona + the rendered user prompt."""
    return [
        {"role": "system", "content": render("system", **system)},
        {"role": "user", "content": render(template_name, **fields)},
    ]
