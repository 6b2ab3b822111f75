"""Checks and normalisation of plans from a language model: placeholder text copied from a
prompt's example ("...", "going to ...", "<activity>") is dropped item by item, an answer
with too few good items is rejected (the gateway then re-asks or falls back), and the words a
plan may use for the agent's own places are named (`PLACE_WORDS`).

Pure functions on raw JSON values, used by the plan schemas in `tasks.py` (which cognition
imports, so this module lives beside them and imports nothing of the project)."""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "FALLBACK_LOCATION",
    "MAX_STEP",
    "MIN_STEP",
    "PLACE_WORDS",
    "is_placeholder",
    "not_an_action",
    "screen_items",
    "screen_steps",
]

# Words in a plan's location that name one of the agent's own places (mobility resolves them).
PLACE_WORDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("shelter", "safety", "evacuat"), "shelter"),
    (("home", "house", "flat", "bed"), "home"),
    (("work", "office", "job"), "work"),
    (("shop", "store", "market", "buy", "errand"), "shop"),
    (("cafe", "park", "friend", "bar", "restaurant", "town"), "leisure"),
)
FALLBACK_LOCATION = "home"  # a word `resolve_place` maps to the agent's own home
MIN_STEP, MAX_STEP = 5, 15  # minutes an hour's step should last (the prompt asks for this)
_TEMPLATE_WORDS = frozenset(
    {
        "activity",
        "action",
        "location",
        "place",
        "reaction",
        "new_activity",
        "new activity",
        "string",
        "text",
        "null",
        "none",
        "n/a",
        "na",
        "todo",
        "tbd",
        "example",
        "something",
        "somewhere",
        "value",
    }
)
_ONLY_PUNCT = re.compile(r"^[\W_]*$")
_BARE_ELLIPSIS = re.compile(r"(^|\s|[\"'(])(\.{2,}|…)")  # "going to ...", "... or null"
_TEMPLATE = re.compile(r"<[^<>]*>|\{[^{}]*\}|\[[^\[\]]*\]")  # <activity>, {name}, [place]


def is_placeholder(text: Any) -> bool:
    """Whether `text` is no content: empty, only dots or punctuation, a bare ellipsis
    standing for words ("going to ...", "... or null"), a template slot ("<activity>",
    "{location}") or a schema word copied literally ("activity", "null")."""
    if not isinstance(text, str):
        return True
    t = text.strip()
    if _ONLY_PUNCT.match(t) or _BARE_ELLIPSIS.search(t) or _TEMPLATE.search(t):
        return True
    return t.lower().strip(" .:;,!?\"'") in _TEMPLATE_WORDS


_DEBRIS = re.compile(r"[{}\[\]\"]")  # JSON syntax swallowed into a string: 'work-9},{'
_PLACE_ID = re.compile(r"^[A-Za-z_]+-\d+$")  # 'school-1283554672', 'home-1': a place, no deed


def not_an_action(text: Any) -> bool:
    """Whether `text` cannot be an activity or action: a placeholder, JSON debris, or a
    bare place id copied from the prompt."""
    if is_placeholder(text):
        return True
    t = str(text).strip()
    return bool(_DEBRIS.search(t) or _PLACE_ID.match(t))


def _as_int(value: Any) -> int | None:
    """An integral value (7, 7.0, "7") as int; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


MIN_GOOD = 2  # entries an answer with dropped ones must keep (a one-entry day or hour is thin)


def _enough(good: int, dropped: int, what: str) -> None:
    """Reject an answer with no good entry, or one with bad entries and fewer than MIN_GOOD
    good ones or more bad than good (a clean short answer, e.g. a fallback built in code,
    stays valid)."""
    if good == 0 or (dropped and (good < MIN_GOOD or dropped > good)):
        raise ValueError(
            f"{dropped} of {good + dropped} {what} are placeholders or out of range "
            f"(write real {what}, not '...' or template words)"
        )


def screen_items(raw: Any) -> tuple[Any, int]:
    """Daily-plan items with placeholder activities and start hours outside 0..23 dropped,
    placeholder locations replaced by FALLBACK_LOCATION, and later duplicates of a start
    hour dropped; returns (items, dropped). Raises ValueError when too few stay good."""
    if not isinstance(raw, list):
        return raw, 0
    out: list[Any] = []
    seen: set[int] = set()
    dropped = 0
    for item in raw:
        if not isinstance(item, dict):
            out.append(item)  # the schema reports it
            continue
        hour = _as_int(item.get("start_hour"))
        if hour is None or not 0 <= hour <= 23 or not_an_action(item.get("activity")):
            dropped += 1
            continue
        if hour in seen:  # a second item at the same hour: the first one stands
            continue
        seen.add(hour)
        location = item.get("location")
        if is_placeholder(location):
            location = FALLBACK_LOCATION
        out.append({**item, "start_hour": hour, "location": location})
    if raw:
        _enough(len(out), dropped, "plan items")
    return out, dropped


def screen_steps(raw: Any) -> tuple[Any, int]:
    """Hourly steps with placeholder actions or a start minute outside 0..59 dropped;
    returns (steps, dropped). Raises ValueError when too few stay good."""
    if not isinstance(raw, list):
        return raw, 0
    out: list[Any] = []
    dropped = 0
    for step in raw:
        if not isinstance(step, dict):
            out.append(step)
            continue
        minute = _as_int(step.get("minute"))
        if minute is None or not 0 <= minute <= 59 or not_an_action(step.get("action")):
            dropped += 1
            continue
        duration = _as_int(step.get("duration_min"))
        out.append({**step, "minute": minute, "duration_min": duration or MIN_STEP})
    if raw:
        _enough(len(out), dropped, "steps")
    return out, dropped
