"""`provider: rules` — a deterministic offline policy. It is NOT a language model.

Each cognition call site (task) has one rule that answers from the call's structured inputs
(keywords in the texts, needs, profile) and an RNG seeded by (task, inputs, seed), with output
valid for the task's schema in `tasks.py`. Same inputs, same answer, no network. It exists so
smoke runs, CI and engine benchmarks work without any model; its "behaviour" is a caricature.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from societas.agents.llm.errors import UnknownTaskError
from societas.agents.llm.meaning import FUNCTION_WORDS, Population

RuleFn = Callable[[dict[str, Any], random.Random], "dict[str, Any] | str"]
_RULES: dict[str, RuleFn] = {}

# Words that make a memory poignant (prefix match) or mundane, for importance and reactions.
_HIGH = tuple(
    "die death dead fire hurricane evacuat flood storm emergency marri wedding divorc "
    "fired job promot accident hospital sick war elect baby born stole rob attack "
    "crisis money income ubi rent evict love breakup vote policy secret danger "
    "shelter news protest riot festival party".split()
)
_LOW = tuple(
    "walk ate eat sleep slept sat read idle wait coffee breakfast lunch dinner tv "
    "shower brush nap rest".split()
)
_PRO = (
    *"support agree good benefit favor favour help like great fair useful love approve".split(),
    "pro ",
)
_CON = (
    *"oppose against bad harm disagree hate waste danger unfair reject worse fear".split(),
    "anti ",
)
# Feelings make a memory poignant; the emotion's valence (mood) colours plans and talks.
_FEEL = tuple(
    "afraid scared terrified fear angry furious sad cried crying worried anxious excited "
    "thrilled surprised shocked happy proud ashamed lonely grief upset".split()
)
_VALENCE = {"joy": 1.0, "surprise": 0.5, "sadness": -0.7, "fear": -0.8, "anger": -1.0}
_VALENCE["disgust"] = -0.8
_DANGER = ("hurricane", "evacuat", "flood", "fire", "storm", "emergency", "danger", "attack")
_STOP = FUNCTION_WORDS | {"said", "told", "heard", "today"}
_WORD = re.compile(r"[a-z][a-z'-]+")
_TOKEN = re.compile(r"[a-z][a-z'-]+|[^\sa-z]+")  # words, and marks that part them
_CALLED_BY_NAME = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+\b")  # "Hi Rafa", "with Kai": a name


def register_rule(task: str) -> Callable[[RuleFn], RuleFn]:
    """Decorator adding (or replacing) the rule answering `task`."""

    def deco(fn: RuleFn) -> RuleFn:
        _RULES[task] = fn
        return fn

    return deco


def known_tasks() -> list[str]:
    """Task names the rules policy answers."""
    return sorted(_RULES)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def seeded_rng(task: str, context: dict[str, Any], seed: int) -> random.Random:
    """An RNG that depends only on (task, inputs, seed): same call, same draws. What is
    hashed is the JSON of [task, context, seed]; a `Population` of names enters by its hash."""
    people = context.get("people")
    if isinstance(people, Population):
        context = {**context, "people": people.digest}
    blob = _dumps([task, context, seed])
    return random.Random(int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big"))


def answer(task: str | None, context: dict[str, Any], seed: int = 0) -> dict[str, Any] | str:
    """The rules policy's output for one call site; unknown task raises `UnknownTaskError`."""
    if task is None:
        raise UnknownTaskError(
            "task: provider 'rules' needs a call-site task name (got None); "
            f"known tasks: {', '.join(known_tasks())}"
        )
    fn = _RULES.get(task)
    if fn is None:
        raise UnknownTaskError(
            f"task: no rule for {task!r}; known tasks: {', '.join(known_tasks())}"
        )
    return fn(context, seeded_rng(task, context, seed))


# ---- helpers ---------------------------------------------------------------------------


def _hits(text: str, words: tuple[str, ...]) -> int:
    low = text.lower()
    return sum(1 for w in words if w in low)


def _keywords(texts: list[str], k: int) -> list[str]:
    counts: Counter[str] = Counter()
    for t in texts:
        counts.update(w for w in _WORD.findall(t.lower()) if w not in _STOP and len(w) > 2)
    return [w for w, _ in counts.most_common(k)]


def _short(text: str, n: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


def as_mine(memory: str, name: str) -> str:
    """A memory told of the person by name, in their own words: "Gia Diaz's plan for 8:00"
    -> "my plan for 8:00", "Gia Diaz is going to relax" -> "I am going to relax", "Ben talked
    with Gia Diaz" -> "Ben talked with me"; a name going on into another's ("Gia Lopez", said
    of Gia) is left as it is."""
    name = " ".join(name.split())
    if not name:
        return memory
    own = re.escape(name)
    alone = r"\b(?!\s+[A-Z])"  # not another's longer name (possessives go first)
    first = r"(?<=[.!?] )"  # a later sentence's start
    for pattern, mine in (
        (rf"^{own}'s\b", "my"),  # after "I remember: "
        (rf"{first}{own}'s\b", "My"),
        (rf"(^|{first}){own} is\b", "I am"),
        (rf"(^|{first}){own} has\b", "I have"),
        (rf"(^|{first}){own} thinks\b", "I think"),
        (rf"(^|{first}){own}{alone}", "I"),
        (rf"\b{own}'s\b", "my"),
        (rf"\b{own}{alone}", "me"),
    ):
        memory = re.sub(pattern, mine, memory)
    return memory


def _texts(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


def _need(ctx: dict[str, Any], name: str, default: float = 0.5) -> float:
    needs = ctx.get("needs") or {}
    try:
        return float(needs.get(name, default))
    except (TypeError, ValueError):
        return default


def _mood(ctx: dict[str, Any]) -> float:
    """-1 .. 1 from the context's `emotion` and `emotion_intensity` (0 when absent)."""
    try:
        intensity = max(0.0, min(1.0, float(ctx.get("emotion_intensity", 0.0))))
    except (TypeError, ValueError):
        intensity = 0.0
    return _VALENCE.get(str(ctx.get("emotion", "")).lower(), 0.0) * intensity


# ---- what memories are about: who, what, where --------------------------------------------

_NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")  # Ann Lee, Bob Ray (ids dropped)
_PLACE_ID = re.compile(r"\b[a-z]+-\d+\b")  # home-3, cafe-1
# Notes about the agent's own routine say nothing about the world: no theme comes from them.
_ROUTINE = re.compile(r"'s plan for|\bplan for day\b|\bis going to\b|\bthinks:|changed plans")
# Words of questions, reports and routine that are no theme ("why", "talked", "minutes").
_NO_THEME = frozenset(
    "what why how who whom whose when where which does did should would could might must "
    "matter think thinking happening keeps coming really also still just like know knew "
    "talked talk said told heard hear noticed notice went going come came get got make made "
    "want wanted feel felt thing things something someone people person today yesterday "
    "tomorrow day days time min minutes hour hours morning evening night plan plans "
    "ready start finish continue focus prepare wrap keep interesting thanks sense good "
    "great fine okay sure hello sorry glad nice lovely makes spend spent coming comes "
    "mind life lately routine often much many things doing done".split()
)
_GREETING = frozenset("Hi Hello Hey Dear Did Good Interesting Thanks Sorry Yes No Oh Well".split())
# Reports of talk ("I told Bob: ...", "Bob told me: ...") are no news to pass on.
_CHATTER = re.compile(r"\b(I told|told me|talked with|said:)")


def _names(text: str) -> list[str]:
    """People's names in `text`, a greeting before a name dropped ('Hi Eva Adams')."""
    out = []
    for n in _NAME.findall(text):
        first, _, rest = n.partition(" ")
        name = rest if first in _GREETING else n
        if " " in name:
            out.append(name)
    return out


@dataclass(frozen=True)
class Gist:
    """What a set of memories is about: people, things (content words) and places, most
    mentioned first."""

    people: list[str]
    things: list[str]
    places: list[str]


def gist(texts: list[str], me: str = "", k: int = 3, plain: str = "") -> Gist:
    """The people (other than `me` and `plain`), things and places the memories mention,
    routine notes (plans, thoughts) left out; a thing is a word or the two words it mostly
    comes with ("basic income"), never a name ("Hi Rafa")."""
    content = [t for t in texts if not _ROUTINE.search(t)]
    mine = {w.lower() for w in _NAME.findall(me)} | set(me.lower().split())
    mine |= {plain.lower()} if plain else set()
    people: Counter[str] = Counter()
    places: Counter[str] = Counter()
    words: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    named = {w.lower() for t in content for w in _CALLED_BY_NAME.findall(t)}
    for t in content:
        names = [n for n in _names(t) if n.lower() not in mine]
        people.update(names)
        found = _PLACE_ID.findall(t)
        places.update(found)
        rest = _PLACE_ID.sub(" ", _NAME.sub(" ", t)).lower()
        said = [
            w if _WORD.fullmatch(w) and len(w) > 3 and w not in _STOP | _NO_THEME | mine | named
            else ""
            for w in _TOKEN.findall(rest)
        ]  # fmt: skip
        words.update(w for w in said if w)
        pairs.update((a, b) for a, b in itertools.pairwise(said) if a and b)
    return Gist(
        people=[n for n, _ in people.most_common(k)],
        things=_things(words, pairs, k),
        places=[p for p, _ in places.most_common(k)],
    )


def _things(words: Counter[str], pairs: Counter[tuple[str, str]], k: int) -> list[str]:
    """The `k` most mentioned words (ties: longer first), each as the pair of words it comes
    in at least half the time, if any ("basic income", not "basic" and "income")."""
    best: dict[str, tuple[str, str]] = {}
    for pair, _ in pairs.most_common():
        for w in pair:
            best.setdefault(w, pair)
    out: list[str] = []
    used: set[str] = set()
    for w in sorted(words, key=lambda w: (-words[w], -len(w))):
        if w in used:
            continue
        phrase = best.get(w)
        if phrase is not None and 2 * pairs[phrase] >= words[w] and not used.intersection(phrase):
            out.append(" ".join(phrase))
            used.update(phrase)
        else:
            out.append(w)
            used.add(w)
        if len(out) == k:
            break
    return out


# ---- rules -----------------------------------------------------------------------------


def importance_score(text: str, rng: random.Random) -> int:
    """1..10 from poignant vs mundane keywords, news markers and a little seeded jitter."""
    score = 3 + 2 * _hits(text, _HIGH) - _hits(text, _LOW)
    score += 1 if re.search(r"\b(heard|told|said|learned)\b", text.lower()) else 0
    score += 2 * min(2, _hits(text, _FEEL))
    score += rng.choice((-1, 0, 0, 1))
    return max(1, min(10, score))


@register_rule("importance")
def _importance(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"results": [{"score": importance_score(t, rng)} for t in _texts(ctx.get("items"))]}


@register_rule("reflection_questions")
def _questions(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    n = max(1, min(10, int(ctx.get("n", 3))))
    g = gist(_texts(ctx.get("statements")), str(ctx.get("name", "")))
    asked = [f"How are things between me and {p}?" for p in g.people]
    asked += [f"What do I make of the {w}?" for w in g.things]
    asked += [f"What goes on at {place}?" for place in g.places]
    return {"questions": _interleave(asked, g)[:n] or ["What stood out to me lately?"]}


def _interleave(asked: list[str], g: Gist) -> list[str]:
    """Questions about people, things and places in turn (the first of each kind first)."""
    groups = [asked[: len(g.people)], asked[len(g.people) : len(g.people) + len(g.things)]]
    groups.append(asked[len(g.people) + len(g.things) :])
    out: list[str] = []
    for i in range(max((len(x) for x in groups), default=0)):
        out += [x[i] for x in groups if i < len(x)]
    return out


@register_rule("reflection_insights")
def _insights(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    statements = _texts(ctx.get("statements"))
    me = str(ctx.get("name", ""))
    if not statements:
        return {"insights": [{"text": "I do not know enough about this yet.", "evidence": []}]}
    g = gist(statements, me)
    insights = []
    if g.people:
        who = g.people[0]
        idx = [i + 1 for i, t in enumerate(statements) if who in t]
        where = _place_with(statements, who)
        text = f"I spend a lot of time with {who}" + (f" at {where}." if where else ".")
        insights.append({"text": text, "evidence": idx[:5]})
    if g.things:
        what = g.things[0]
        idx = [i + 1 for i, t in enumerate(statements) if what in t.lower()]
        insights.append({"text": f"The {what} keeps coming up for me.", "evidence": idx[:5]})
    if g.places and not insights:
        where = g.places[0]
        idx = [i + 1 for i, t in enumerate(statements) if where in t]
        insights.append({"text": f"Much of my life happens at {where}.", "evidence": idx[:5]})
    return {"insights": insights or [{"text": "My days follow a routine.", "evidence": [1]}]}


def _place_with(texts: list[str], person: str) -> str | None:
    """The place most often named with `person`."""
    found: Counter[str] = Counter()
    for t in texts:
        if person in t:
            found.update(_PLACE_ID.findall(t))
    return found.most_common(1)[0][0] if found else None


@register_rule("daily_plan")
def _daily_plan(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    profile = ctx.get("profile") or {}
    home = str(profile.get("home", "home"))
    work = str(profile.get("workplace", "") or "")
    social = str(profile.get("social_place", "cafe"))
    wake = 6 + rng.randint(0, 2)
    items: list[dict[str, Any]] = [
        {"start_hour": wake, "activity": "wake up and have breakfast", "location": home}
    ]
    if work:
        job = str(profile.get("occupation", "work"))
        items += [
            {"start_hour": wake + 2, "activity": f"{job} at {work}", "location": work},
            {"start_hour": 12, "activity": "have lunch", "location": work},
            {"start_hour": 13, "activity": f"{job} at {work}", "location": work},
        ]
    else:
        items += [
            {
                "start_hour": wake + 2,
                "activity": "run errands and look for work",
                "location": social,
            }
        ]
    mood = _mood(ctx)
    if mood <= -0.3:  # afraid, sad or angry: stay in rather than go out
        items.append({"start_hour": 18, "activity": "stay home and rest", "location": home})
    elif _need(ctx, "social") < 0.5 or rng.random() < 0.3 + 0.7 * max(0.0, mood):
        items.append({"start_hour": 18, "activity": "meet friends", "location": social})
    if _need(ctx, "hunger", 0.5) < 0.5:
        items.append({"start_hour": 17, "activity": "buy and cook food", "location": home})
    items += [
        {"start_hour": 19, "activity": "have dinner", "location": home},
        {"start_hour": 22, "activity": "sleep", "location": home},
    ]
    seen: dict[int, dict[str, Any]] = {}
    for it in items:
        seen.setdefault(it["start_hour"], it)
    return {"items": sorted(seen.values(), key=lambda p: p["start_hour"])}


@register_rule("hourly_plan")
def _hourly_plan(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    activity = str(ctx.get("activity", "rest"))
    parts = rng.choice((4, 5, 6))  # 15, 12 or 10 minute actions
    length = 60 // parts
    verbs = ("prepare for", "focus on", "continue", "wrap up")
    steps = [
        {
            "minute": i * length,
            "duration_min": length,
            "action": f"{verbs[min(i, 3) if i < parts - 1 else 3]} {activity}",
        }
        for i in range(parts)
    ]
    return {"steps": steps}


@register_rule("reaction")
def _reaction(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    event = str(ctx.get("event", ""))
    name = str(ctx.get("name", ""))
    mentioned = bool(name) and name.lower() in event.lower()
    if _hits(event, _DANGER):
        place = str((ctx.get("profile") or {}).get("shelter", "shelter"))
        return {
            "react": True,
            "reaction": f"This is dangerous: {_short(event, 80)}",
            "new_activity": "evacuate to safety",
            "location": place,
        }
    if mentioned or _hits(event, _HIGH) >= 1:
        if _mood(ctx) <= -0.5:  # a frightened or angry agent withdraws instead
            home = str((ctx.get("profile") or {}).get("home", "home"))
            return {
                "react": True,
                "reaction": f"This worries me: {_short(event, 80)}",
                "new_activity": "go home and keep to myself",
                "location": home,
            }
        return {
            "react": True,
            "reaction": f"I want to know more about {_short(event, 80)}",
            "new_activity": f"talk to people about {_short(event, 60)}",
            "location": None,
        }
    return {"react": False, "reaction": "", "new_activity": None, "location": None}


@register_rule("dialogue_turn")
def _dialogue_turn(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    listener = str(ctx.get("listener", "friend"))
    memories = _texts(ctx.get("memories"))
    history = [
        str(h[1]) if isinstance(h, list | tuple) else str(h) for h in ctx.get("history") or []
    ]
    said = " ".join(history).lower()
    turn, max_turns = int(ctx.get("turn", len(history))), int(ctx.get("max_turns", 4))
    told = [_news(m) for m in memories if not (_ROUTINE.search(m) or _CHATTER.search(m))]
    fresh = [m for m in told if m and _short(m, 100).lower() not in said]
    if not history:
        opener = f"Hi {listener}!"
        news = f"Did you hear? {_closed(_short(fresh[0], 100))}" if fresh else "How are you?"
        line = f"{opener} {news}"
    elif fresh:
        line = f"Interesting. I know that {_closed(_short(fresh[0], 100))}"
    else:
        line = _small_talk(memories, listener, said, rng)
    sour = _mood(ctx) <= -0.5 and turn >= 1  # a dark mood cuts the talk short
    end = turn + 1 >= max_turns or (not fresh and turn >= 2) or sour
    return {"utterance": line, "end": end}


def _small_talk(memories: list[str], listener: str, said: str, rng: random.Random) -> str:
    """A line about someone or something the speaker's memories name, not said before."""
    g = gist(memories, plain=listener)
    lines = [f"How is {p} doing?" for p in g.people]
    lines += [f"I have been thinking about the {w}." for w in g.things]
    lines += [f"I was at {place} earlier." for place in g.places]
    lines = [x for x in lines if x.lower() not in said]
    if lines:
        return lines[0]
    polite = [x for x in _POLITE if x.lower() not in said]  # never a line said before
    return rng.choice(polite) if polite else "Well, I should get going."


_POLITE = ("I see.", "That makes sense.", "Good to know.", "Take care.", "See you around.")


@register_rule("thought_update")
def _thought(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    recent = _texts(ctx.get("recent"))
    needs = ctx.get("needs") or {}
    lowest = min(needs, key=lambda k: _need(ctx, k)) if needs else None
    danger = sum(_hits(t, _DANGER) for t in recent)
    if danger:
        emotion, intensity = "fear", min(1.0, 0.5 + 0.1 * danger)
    elif lowest is not None and _need(ctx, lowest) < 0.3:
        emotion, intensity = "sadness", 0.6
    elif recent and any(_hits(t, _HIGH) for t in recent):
        emotion, intensity = "surprise", 0.5
    else:
        emotion, intensity = "joy", rng.choice((0.2, 0.3, 0.4))
    g = gist(recent, str(ctx.get("name", "")))
    danger_word = next((w for w in g.things if _hits(w, _DANGER)), None)
    if danger_word is not None:
        about = f"I am worried about the {danger_word}"
    elif g.people:
        about = f"I keep thinking about {g.people[0]}"
    elif g.things:
        about = f"The {g.things[0]} is on my mind"
    else:
        about = "Nothing special, just my routine"
    short = lowest is not None and _need(ctx, lowest) < 0.3
    need = f"; I need {_NEED_WORDS.get(str(lowest), str(lowest))}" if short else ""
    return {"thought": f"{about}{need}.", "emotion": emotion, "intensity": round(intensity, 3)}


_NEED_WORDS = {"energy": "rest", "hunger": "food", "social": "company", "safety": "safety"}


def _closed(text: str) -> str:
    """A told memory as a finished sentence: a full stop where it ends on a word."""
    return f"{text}." if text and text[-1].isalnum() else text


def _news(text: str) -> str:
    """A memory as something to tell: 'I noticed: ' and similar report openings dropped."""
    return re.sub(r"^(I noticed|I heard|I was told)[:,]?\s*", "", text.strip()).strip()


def stance(text: str) -> float:
    """Lexicon stance of a text in [-1, 1] (0 when it has no stance words)."""
    pro, con = _hits(text, _PRO), _hits(text, _CON)
    return 0.0 if pro + con == 0 else (pro - con) / (pro + con)


@register_rule("attitude_update")
def _attitude(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    current = float(ctx.get("attitude", 5.0))  # 0 (against) .. 10 (for), 5 neutral
    topic = str(ctx.get("topic", "")).lower()
    recent = [t for t in _texts(ctx.get("recent")) if not topic or topic in t.lower()]
    stances = [s for s in (stance(t) for t in recent) if s != 0.0]
    stubborn = float((ctx.get("profile") or {}).get("stubbornness", 0.5))
    if not stances:
        return {
            "attitude": current,
            "reason": f"Nothing new about {topic or 'it'} changed my mind.",
        }
    heard = sum(stances) / len(stances)
    target = 5.0 + 5.0 * heard
    rate = 0.3 * (1.0 - max(0.0, min(1.0, stubborn)))
    new = current + rate * (target - current) + rng.gauss(0, 0.05)
    new = max(0.0, min(10.0, new))
    lean = "for" if heard > 0 else "against"
    heard_of = f"I heard {len(stances)} opinions on {topic or 'it'}, most of them {lean} it."
    return {"attitude": round(new, 4), "reason": heard_of}


@register_rule("consolidation")
def _consolidate(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    texts = _texts(ctx.get("texts"))
    words = _keywords(texts, 3)
    head = f"{len(texts)} memories about {', '.join(words) or 'daily life'}"
    body = "; ".join(_short(t, 60) for t in texts[:3])
    return {"summary": f"{head}: {body}" if body else head}


@register_rule("metacognition")
def _metacognition(ctx: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The cognitive profile's rules reflection on the memory report in the context."""
    from societas.agents.cognition.metacognition import rules_answer

    return rules_answer(ctx)


# The `survey` task (answers from status) lives with the survey code; importing it registers it.
from societas.agents.experiments import survey_rules as _survey_rules  # noqa: E402, F401

# An interview is a survey question asked by a researcher: the same rule answers it.
_RULES.setdefault("interview", _RULES["survey"])
