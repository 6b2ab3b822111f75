"""The rules policy's `survey` task: a deterministic answer read from the agent's status.

Not a language model: the answer is the status value of the attribute the question is about
(the question's `attribute`, else a status key named in the question), mapped onto the
question's kind (likert point, option, number, sentence); with no such value, a seeded draw.
"""

from __future__ import annotations

import random
from typing import Any

from societas.agents.llm.rules import as_mine, register_rule


def _about(ctx: dict[str, Any]) -> tuple[str | None, Any]:
    """(attribute, value) the question is about, from `attribute` or the question's words."""
    status: dict[str, Any] = ctx.get("status") or {}
    text = str(ctx.get("question", "")).lower()
    key = ctx.get("attribute")
    if not (key and key in status):
        key = next(
            (
                name
                for name in sorted(status, key=len, reverse=True)
                if len(name) > 2 and (name in text or name.replace("_", " ") in text)
            ),
            None,
        )
    if key is None:
        return None, None
    value = status[key]
    if isinstance(value, dict):  # e.g. attitude by topic: the topic the question names
        named = [k for k in value if str(k).lower() in text]
        value = value[named[0]] if named else None
    return key, value


def _share(value: Any) -> float | None:
    """A value as a share 0..1 (bools, 0..1 and 0..10 numbers), or None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        v = float(value)
        if 0 <= v <= 1:
            return v
        if 0 <= v <= 10:
            return v / 10
    return None


def _likert(ctx: dict[str, Any], value: Any, rng: random.Random) -> dict[str, Any]:
    scale = int(ctx.get("scale") or 5)
    share = _share(value)
    point = 1 + round(share * (scale - 1)) if share is not None else rng.randint(1, scale)
    return {"answer": f"{point} of {scale}", "value": float(point)}


def _choice(ctx: dict[str, Any], value: Any, rng: random.Random) -> dict[str, Any]:
    options = [str(o) for o in ctx.get("options") or ["yes", "no"]]
    index: int | None = None
    if isinstance(value, str):
        low = value.lower()
        index = next(
            (i for i, o in enumerate(options) if o.lower() in low or low in o.lower()), None
        )
    elif isinstance(value, bool):
        words = ("yes", "true", "agree") if value else ("no", "false", "disagree")
        fallback = 0 if value else len(options) - 1
        index = next((i for i, o in enumerate(options) if o.lower() in words), fallback)
    elif (share := _share(value)) is not None:
        index = min(len(options) - 1, int((1.0 - share) * len(options)))  # high: first
    if index is None:
        index = rng.randrange(len(options))
    return {"answer": options[index], "value": float(index)}


def _number(ctx: dict[str, Any], value: Any, rng: random.Random) -> dict[str, Any]:
    low, high = ctx.get("min"), ctx.get("max")
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    else:
        number = float(rng.randint(int(low or 0), int(high if high is not None else 10)))
    if low is not None:
        number = max(float(low), number)
    if high is not None:
        number = min(float(high), number)
    return {"answer": f"{number:g}", "value": number}


def _open(ctx: dict[str, Any], key: str | None, value: Any, rng: random.Random) -> dict[str, Any]:
    memories = [str(m) for m in ctx.get("memories") or []]
    parts = []
    if key is not None:
        parts.append(f"My {key.replace('_', ' ')} is {value}.")
    if memories:
        parts.append(f"I remember: {as_mine(memories[0], str(ctx.get('name') or ''))}")
    if not parts:
        parts.append(rng.choice(["It was an ordinary day.", "Nothing special happened."]))
    return {"answer": " ".join(parts), "value": None}


@register_rule("survey")
def survey_answer(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Answer one question from status (see module docstring)."""
    key, value = _about(ctx)
    kind = ctx.get("kind", "open")
    if kind == "likert":
        return _likert(ctx, value, rng)
    if kind == "choice":
        return _choice(ctx, value, rng)
    if kind == "number":
        return _number(ctx, value, rng)
    return _open(ctx, key, value, rng)
