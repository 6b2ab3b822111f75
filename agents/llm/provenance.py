"""Where an answer came from: the model's first try, a repair, a re-ask, a fallback, the rules
policy or the response cache. Every results row holding model text or a model decision
carries one of these, so a researcher can filter model failures out of an analysis.

The gateway marks each value `json()` returns (`mark`); call sites read it (`source_of`) and
copy it onto the rows they write. An answer from the response cache keeps the source of its
first recording, so a branch or a resumed run writes the rows of the run it continues;
the gateway never emits `replayed` (kept in the vocabulary for replayed text whose recorded
source is unknown). Imports nothing of the project (tasks.py imports it).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

__all__ = ["SOURCES", "Source", "combine", "mark", "source_of"]

Source = Literal["first_try", "repaired", "re_asked", "fallback", "rules", "replayed"]
SOURCES: tuple[str, ...] = get_args(Source)
# The weakest source wins when one row rests on several answers (a batch, a conversation).
_RANK = {s: i for i, s in enumerate(("first_try", "replayed", "rules", "repaired", "re_asked"))}
_RANK["fallback"] = len(_RANK)
ATTR = "_answer_source"


def mark(value: Any, source: str) -> Any:
    """Note `source` on `value` (a schema with the private `_answer_source`); returns it."""
    if source not in _RANK:
        raise ValueError(f"answer source must be one of {SOURCES}, got {source!r}")
    if hasattr(value, ATTR):
        setattr(value, ATTR, source)
    return value


def source_of(value: Any, default: str = "fallback") -> str:
    """The source noted on `value`; `default` for a value no gateway marked (built in code)."""
    found = getattr(value, ATTR, None)
    return found if isinstance(found, str) and found else default


def combine(sources: list[str] | tuple[str, ...]) -> str:
    """One source for a row resting on several answers: the least trustworthy of them."""
    if not sources:
        return "fallback"
    return max(sources, key=lambda s: _RANK.get(s, len(_RANK)))
