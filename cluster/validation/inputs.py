"""The validate command's input: seeds, provider and sizes, checked with one clear error line."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from societas.agents.llm.config import LLMConfig


class ValidationInputError(ValueError):
    """A user mistake in the validate command's input; the message names field and value."""


def parse_seeds(text: str) -> list[int]:
    """'0,1,2' is those seeds; 'N' alone is 0..N-1; anything else names --seeds."""
    text = text.strip()
    try:
        if "," in text:
            seeds = [int(s) for s in text.split(",") if s.strip()]
            if not seeds or any(s < 0 for s in seeds):
                raise ValueError
            if len(set(seeds)) != len(seeds):
                raise ValidationInputError(f"--seeds: {text!r} repeats a seed")
            return seeds
        count = int(text)
    except ValueError:
        raise ValidationInputError(
            f"--seeds: {text!r} is neither a count N >= 1 nor a list like 0,1,2"
        ) from None
    if count < 1:
        raise ValidationInputError(f"--seeds: {text!r}: a count must be at least 1")
    return list(range(count))


def load_provider(provider: str) -> LLMConfig:
    """'rules' or a YAML file holding an `llm:` section (a scenario) or LLM settings alone."""
    if provider == "rules":
        return LLMConfig(provider="rules")
    path = Path(provider)
    if not path.is_file():
        raise ValidationInputError(
            f"--provider: {provider!r} is neither 'rules' nor a readable YAML file"
        )
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValidationInputError(f"--provider: {provider}: not YAML ({first})") from None
    if not isinstance(raw, dict):
        raise ValidationInputError(f"--provider: {provider}: expected a mapping with llm settings")
    section = raw.get("llm", raw)
    try:
        return LLMConfig.model_validate(section)
    except ValidationError as err:
        detail = err.errors()[0]
        where = ".".join(str(p) for p in detail["loc"]) or "llm"
        raise ValidationInputError(
            f"--provider: {provider}: llm.{where}: {detail['msg']}"
        ) from None


def model_name(llm: LLMConfig) -> str:
    """The model names the provider serves, or a plain statement that none ran."""
    if llm.provider == "rules":
        return "none (rules policy, not a language model)"
    names = sorted({e.model for e in llm.endpoints if getattr(e, "model", None)})
    return ", ".join(names) or "unnamed"
