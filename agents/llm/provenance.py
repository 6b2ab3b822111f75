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

__all__ = ["SOURCES", "Source", "combine", "mark", "reason_of", "source_of"]

Source = Literal["first_try", "repaired", "re_asked", "fallback", "rules", "replayed"]
SOURCES: tuple[str, ...] = get_args(Source)
# The weakest source wins when one row rests on several answers (a batch, a conversation).
_RANK = {s: i for i, s in enumerate(("first_try", "replayed", "rules", "repaired", "re_asked"))}
_RANK["fallback"] = len(_RANK)
ATTR = "_answer_source"
REASON_ATTR = "_fallback_reason"


def mark(value: Any, source: str, reason: str | None = None) -> Any:
    """Note `source` on `value` (a schema with the private `_answer_source`), and for a
    fallback why the model's answers were refused; returns it."""
    if source not in _RANK:
        raise ValueError(f"answer source must be one of {SOURCES}, got {source!r}")
    if hasattr(value, ATTR):
        setattr(value, ATTR, source)
    if reason is not None and hasattr(value, REASON_ATTR):
        setattr(value, REASON_ATTR, reason)
    return value


def source_of(value: Any, default: str = "fallback") -> str:
    """The source noted on `value`; `default` for a value no gateway marked (built in code)."""
    found = getattr(value, ATTR, None)
    return found if isinstance(found, str) and found else default


def reason_of(value: Any) -> str | None:
    """Why `value` is a fallback (the last problem of the model's answers), if noted."""
    found = getattr(value, REASON_ATTR, None)
    return found if isinstance(found, str) and found else None


def combine(sources: list[str] | tuple[str, ...]) -> str:
    """One source for a row resting on several answers: the least trustworthy of them."""
    if not sources:
        return "fallback"
    return max(sources, key=lambda s: _RANK.get(s, len(_RANK)))
