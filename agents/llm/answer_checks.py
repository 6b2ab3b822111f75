"""Free text from a language model that says nothing: a prompt's example copied back.

Small models often answer a format line such as `{"utterance": "<what you say>"}` with the
slot itself, or with `"..."`. Such an answer parses, so without a check it would become an
agent's utterance, thought or memory. `Said` is a string type for the schemas in `tasks.py`
that rejects such filler (the gateway then re-asks the model or falls back); `Answer` only
rejects a copied slot (a survey's answer may be "42" or "none"); `screen` drops filler
entries from a list answer. Imports nothing of the project (tasks.py imports it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator

__all__ = ["Answer", "Said", "is_filler", "is_slot", "screen"]

_SCHEMA_WORDS = frozenset(
    {
        "answer",
        "emotion",
        "evidence",
        "example",
        "insight",
        "n/a",
        "na",
        "none",
        "null",
        "object",
        "question",
        "reason",
        "relation",
        "something",
        "string",
        "subject",
        "summary",
        "tbd",
        "text",
        "thought",
        "todo",
        "utterance",
        "value",
    }
)
_ONLY_PUNCT = re.compile(r"^[\W_]*$")
_WHOLE_SLOT = re.compile(r"^(<[^<>]*>|\{[^{}]*\}|\[[^\[\]]*\])$")  # <one sentence>, {name}
_ANGLE_SLOT = re.compile(r"<[^<>]*(>|$)")  # "<noun phrase> *", "<second question: " (cut off)
_ELLIPSIS = re.compile(r"\.{2,}|…")
_WORD = re.compile(r"[^\W\d_]{2,}")  # a word of two or more letters, in any script
MIN_WORDS_WITH_ELLIPSIS = 3  # "going to ..." stands for words; "I was ... tired" says some


def is_filler(text: Any) -> bool:
    """Whether a free-text answer says nothing: not a string, no word of two letters (only
    punctuation, digits, JSON debris), a template slot ("<your answer>", "{name}" as the
    whole text, "<" anywhere), a schema word ("summary", "null"), or an ellipsis with fewer
    than three words around it ("...", "going to ...")."""
    if not isinstance(text, str):
        return True
    t = text.strip()
    if _ONLY_PUNCT.match(t) or _WHOLE_SLOT.match(t) or _ANGLE_SLOT.search(t):
        return True
    if t.lower().strip(" .:;,!?\"'") in _SCHEMA_WORDS:
        return True
    words = len(_WORD.findall(t))
    return words == 0 or (bool(_ELLIPSIS.search(t)) and words < MIN_WORDS_WITH_ELLIPSIS)


def is_slot(text: Any) -> bool:
    """Whether a short answer (a survey's "42", "none") is the prompt's slot copied: only
    punctuation ("...") or a template slot ("<your answer>")."""
    if not isinstance(text, str):
        return True
    t = text.strip()
    return bool(_ONLY_PUNCT.match(t) or _WHOLE_SLOT.match(t) or _ANGLE_SLOT.search(t))


def _answer(text: str) -> str:
    if is_slot(text):
        raise ValueError(f"{text!r} is the prompt's slot copied, not an answer")
    return text


def _said(text: str) -> str:
    if is_filler(text):
        raise ValueError(f"{text!r} is filler copied from the prompt, not an answer")
    return text


Said = Annotated[str, AfterValidator(_said)]
Answer = Annotated[str, AfterValidator(_answer)]  # a number or a bare word may be an answer


def screen(values: Any, filler: Callable[[Any], bool] = is_filler) -> tuple[Any, int]:
    """A list answer with its filler entries (`filler(entry)`) dropped, and how many were;
    anything but a list is returned as it is, for the schema to judge."""
    if not isinstance(values, list):
        return values, 0
    kept = [v for v in values if not filler(v)]
    return kept, len(values) - len(kept)
