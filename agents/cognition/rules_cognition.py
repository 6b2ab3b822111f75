"""Rules-policy answers (`provider: rules`, a deterministic offline policy, NOT a language
model) for the cognition tasks this package adds: `replan`, `conversation_summary`, `attention`,
`facts` and `talk_decision`.
Importing `societas.agents.cognition` registers them with `agents.llm.rules`."""

from __future__ import annotations

import random
import re
from typing import Any

from societas.agents.cognition.relationships import DISLIKED
from societas.agents.llm.rules import (
    _keywords,
    _mood,
    _short,
    as_mine,
    register_rule,
)  # one mood scale for all rules


@register_rule("replan")
def _replan(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The new activity now; the old plan resumes two hours later (in a dark mood without
    going out to meet people); sleep at home at the end of the day."""
    hour = max(0, min(23, int(ctx.get("hour", 12))))
    home = str((ctx.get("profile") or {}).get("home", "home"))
    first = {
        "start_hour": hour,
        "activity": str(ctx.get("new_activity") or "deal with what happened"),
        "location": str(ctx.get("location") or home),
    }
    later = [
        i
        for i in ctx.get("later") or []
        if isinstance(i, dict) and int(i.get("start_hour", 0)) >= hour + 2
    ]
    if _mood(ctx) <= -0.3:
        later = [i for i in later if "friend" not in str(i.get("activity", "")).lower()]
    if hour < 22 and not any("sleep" in str(i.get("activity", "")) for i in later):
        later.append({"start_hour": 22, "activity": "sleep", "location": home})
    return {"items": [first, *later]}


@register_rule("conversation_summary")
def _conversation_summary(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """What the other said, in short, in the first person; the tone follows agreement, the
    standing sentiment and the participant's mood (not the wording, so it does not depend
    on retrieval)."""
    other = str(ctx.get("other", "someone"))
    heard = [_short(t, 90) for t in ctx.get("heard") or []][:3]
    topic = str(ctx.get("topic") or "")
    about = f" about {topic}" if topic else ""
    place = str(ctx.get("place") or "")
    where = f" at {place}" if place else ""
    said = f" {other} said: " + " / ".join(heard) if heard else ""
    tone = 0.3 + 0.4 * float(ctx.get("agreement", 0.0)) + 0.2 * float(ctx.get("sentiment", 0.0))
    tone += 0.3 * _mood(ctx)
    return {
        "summary": f"I talked with {other}{where}{about}.{said}",
        "tone": round(max(-1.0, min(1.0, tone)), 3),
    }


@register_rule("attention")
def _attention(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One observation per item: its distinct events, shortened, joined ('I noticed ...')."""
    out = []
    for item in ctx.get("items") or []:
        events = list(dict.fromkeys(e.strip().rstrip(".") for e in str(item).split(" | ")))
        body = "; ".join(_short(e, 80) for e in events if e) or "nothing in particular"
        out.append({"observation": f"I noticed: {body}."})
    return {"results": out}


# The place after "went to" or "at": one word ("home-1", "park"), never a time ("at 9:00").
_PLACE = re.compile(r"\b(?:went to|at) (?:the )?([a-z][\w-]*)", re.IGNORECASE)


@register_rule("facts")
def _facts(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Places the observations mention ('I' - 'went to' - place), then their main words
    ('I' - 'noticed' - word): a deterministic stand-in for an LLM's fact extraction."""
    texts = [str(t) for t in ctx.get("texts") or []]
    limit = max(1, int(ctx.get("limit", 5)))
    facts = [("I", "went to", m.lower()) for t in texts for m in _PLACE.findall(t)]
    facts += [("I", "noticed", w) for w in _keywords(texts, limit + 1) if w != "noticed"]
    unique = list(dict.fromkeys(facts))[:limit]
    return {"facts": [{"subject": s, "relation": r, "object": o} for s, r, o in unique]}


SOUGHT = 0.3  # closeness at which a person met is sought out without memories of them
LONELY = 0.5  # social satisfaction below which anyone met will do


@register_rule("talk_decision")
def _talk_decision(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The closest person met who is close enough or of whom the agent remembers something
    (anyone, when the agent is lonely or has news to tell), never one it dislikes (ties: more
    memories, then the first listed); nobody otherwise. The reason quotes what the agent
    remembers of them, or its news."""
    people = [c for c in ctx.get("candidates") or [] if isinstance(c, dict)]
    news = str(ctx.get("news") or "")
    social = float((ctx.get("needs") or {}).get("social", 1.0))
    open_to_anyone = bool(news) or social < LONELY
    best, key = 0, (-1.0, -1)
    for i, c in enumerate(people, 1):
        closeness, sentiment = float(c.get("closeness", 0.0)), float(c.get("sentiment", 0.0))
        memories = c.get("memories") or []
        if sentiment < DISLIKED or (closeness < SOUGHT and not memories and not open_to_anyone):
            continue
        if (closeness, len(memories)) > key:
            best, key = i, (closeness, len(memories))
    if not best:
        return {"talk_to": 0, "reason": "No one here I want to talk to now."}
    chosen = people[best - 1]
    memories = [str(m) for m in chosen.get("memories") or []]
    name = str(chosen.get("name", ""))
    closeness = float(chosen.get("closeness", 0.0))
    if memories:
        reason = f"I remember: {_short(as_mine(memories[0], str(ctx.get('name') or '')), 100)}"
    elif closeness >= SOUGHT:
        reason = f"{name} and I are close."
    elif news:
        reason = f"I want to tell {name}: {_short(news, 100)}"
    else:
        reason = f"I feel lonely and {name} is here."
    return {"talk_to": best, "reason": reason}
