"""Whether a survey or interview answer answers its question: a likert point on the scale, a
number in the question's bounds, one of the options, words for an open question; spoken as "I",
not to "you" nor of the respondent by name; a value that says the same as its words, a number
that stands for what the question asks ("a family of 2" is no money). Used by
the meaning checks (tasks `survey`, `interview`) and by the survey code reading a number out
of an answer; imports nothing of the project."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

# An answer opening on a number set off as a list item's ("2.0, yes", "1) oppose"): its option.
_LEADING_NUMBER = re.compile(r"\s*(\d+(?:\.\d+)?)\s*[.,:;)]\s")
# A number as people and models write it: 3, -2.5, .4, 2,389, 1e+06.
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+")
_NUMERIC = re.compile(r"[-+\d.,eE\s]*\d[-+\d.,eE\s]*")  # an answer written only as a number
_LETTERS = re.compile(r"[^\W\d_]{2,}")
_WORDS = re.compile(r"[^\W_]+")
_MARKS = re.compile(r"[^\w\s.,!?'\u2019-]")  # a character no sentence needs: / = : ( {
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
_CUT_AT_NUMBER = re.compile(r"[.!?;]\s+\d+$")  # an open answer's last "sentence" a bare number
CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")  # a time of day: "10:35", "9:00:12"
# A time of day written with its half of the day ("10 pm", "7:30 a.m.", "6 o'clock").
_TIME_OF_DAY = re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\b\.?|o'clock\b)", re.IGNORECASE)
# A question that asks for a time ("When did you leave?", "At what time ..."): a time answers it.
_ASKS_A_TIME = re.compile(
    r"\W*(?:(?:since |until |till )?when|(?:at |by |from )?what time|(?:at )?what hour|"
    r"how (?:long|early|late))\b",
    re.IGNORECASE,
)
# A span of time ("3 days ago", "2 hours"): a count of its unit only.
_SPAN = re.compile(r"\b\d+(?:\.\d+)?\s+(second|minute|hour|day|week|month|year)s?\b", re.IGNORECASE)
# A place of the town's map ("work-1", "home-9"): a name, not a quantity.
_PLACE = re.compile(r"\b[^\W\d_]+-\d+\b")
# A count of people or things ("2 people", "2 of my coworkers", "3 times"): no point of a scale.
_COUNT = re.compile(
    r"\b\d+(?:\.\d+)?\s+(?:of (?:my|our|his|her|their) \w+|(?:people|persons|friends|"
    r"neighbou?rs|children|kids|coworkers|colleagues|times)\b)",
    re.IGNORECASE,
)
_ASKED = re.compile(r"\s*how many (\w+)", re.IGNORECASE)  # what a question counts
_POINT = re.compile(r"(?<![\d.])(\d+)\.0+\b")  # "a total of 5.0": a point, as models write one
_CODE = re.compile(r"[;=<>|\\`]|^\W*\)")  # marks of code around a number: ");1;", "=4"
# A question asking for a count of whole things ("How many people did you talk to?").
_COUNTED = re.compile(
    r"\s*how many (?:people|persons|friends|neighbou?rs|children|kids|times|conversations|"
    r"posts|messages|visits|meals)\b",
    re.IGNORECASE,
)
_OUT_OF = re.compile(r"\s*/\s*\d+\s*$")  # a point and its scale: "4/5"
# An answer opening on a point and the scale it is on: "4 of 5", "2.0 out of 10", "3/7".
_ON_SCALE = re.compile(r"\s*\d+(?:\.\d+)?\s*(?:/|of|out of)\s*(\d+)\b")
# A bound on a point ("no more than 5", "at least 1"): below or at most, or above or at least.
_AT_MOST = re.compile(
    r"\b(?:no more than|not more than|at most|up to|max(?:imum)?(?: of)?)\s+(\d+)\b", re.I
)
_AT_LEAST = re.compile(
    r"\b(?:no less than|not less than|at least|min(?:imum)?(?: of)?)\s+(\d+)\b", re.I
)


def vacuous_bound(text: str, scale: int) -> str | None:
    """A bound every point of 1..`scale` meets ("no more than 5" on 1..5, "at least 1") when
    the words give no other number: they pick no point, whatever value comes with them; None
    otherwise ("up to 5 on a good day, today 3" gives 3)."""
    for pattern, edge in ((_AT_MOST, scale), (_AT_LEAST, 1)):
        for found in pattern.finditer(text):
            if int(found.group(1)) == edge and set(numbers_in(text)) == {edge}:
                return found.group()
    return None


TOLERANCE = 0.01  # relative: a number answer's value may round its written number this much
_FIRST_PERSON = frozenset(
    "i i'm i've i'd i'll me my mine myself we we're we've we'd we'll us our ours ourselves".split()
)
_SUBJECT = frozenset("i i'm i've i'd i'll we we're we've we'd we'll".split())
_MINE = frozenset("my mine our ours".split())
_SINGULAR = frozenset("i i'm i've i'd i'll me my mine myself".split())
_SECOND_PERSON = frozenset("you you're you've you'd you'll your yours yourself".split())
_IDIOMS = re.compile(r"\b(?:thank you|you know|you see|mind you)\b")  # no one addressed
# An answer that speaks of the asking itself ("The answer to this question is: ...").
_ABOUT_ASKING = re.compile(
    r"\b(?:the|this|that|your|my) (?:(?:following|next|last|above) )?"
    r"(?:answer|question|survey|reply|response)\b"
    r"|\b(?:the )?(?:following|above) (?:answers|questions|replies|responses)\b"
)
# Words that lean a likert answer (or its question) for or against; a negation just before
# turns one ("I don't support it").
_FOR = frozenset("support supports supportive agree agrees satisfied happy like likes approve "
                 "approves favour favor love positive pleased glad".split())  # fmt: skip
_AGAINST = frozenset("oppose opposes against disagree disagrees dissatisfied unhappy dislike "
                     "dislikes disapprove disapproves hate negative unsatisfied upset "
                     "miserable".split())  # fmt: skip
_CLAUSE_END = re.compile(r"[.,;:!?]")
_NEGATIONS = frozenset("not no never don't doesn't didn't isn't wasn't aren't can't won't".split())
_GREETS = re.compile(r"\b(?:nice|good|great|glad) to (?:meet|see) you\b")  # a line to someone
# Questions that ask for words to someone else, which may rightly say "you".
_WORDS_TO = re.compile(r"\b(?:tell|say|advise|recommend|message|write|ask)\b")


def numbers_in(text: str) -> list[float]:
    """The numbers written in `text`, in order (thousands separators read as such)."""
    return [float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)]


def counted_noun(question: str) -> str | None:
    """What a "how many" question counts, singular ("people", "hour"); None for others."""
    asked = _ASKED.match(question)
    if asked is None:
        return None
    noun = asked.group(1).lower()
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


def quantities_in(text: str, question: str = "", kind: str = "number") -> list[float]:
    """The numbers of `text` that may answer `question`: times of day ("at 10:35", "10 pm")
    and places ("work-1") left out, spans of another unit than `question` counts ("3 days
    ago" to "How many people ...?") too, and for a likert point every span and count ("2 days
    ago", "2 people")."""
    return numbers_in(_readable(text, question, kind))


def _readable(text: str, question: str, kind: str) -> str:
    """`text` with what `quantities_in` leaves out blanked: the numbers left are those the
    survey may read."""
    text = _PLACE.sub(" ", _TIME_OF_DAY.sub(" ", CLOCK.sub(" ", text)))
    if kind == "likert":
        return _COUNT.sub(" ", _SPAN.sub(" ", text))
    noun = counted_noun(question)
    if noun is not None:
        text = _SPAN.sub(lambda m: m.group() if m.group(1).lower() == noun else " ", text)
    return text


def _counts_of(text: str, noun: str) -> set[float]:
    """The numbers `text` writes right before `noun` or its plural ("6 people (20 people)")."""
    plural = "people" if noun == "people" else f"{noun}s?"
    pattern = rf"(?<![\d.,])(\d+(?:\.\d+)?)\s+{plural}\b"
    return {float(n) for n in re.findall(pattern, text, re.IGNORECASE)}


def written_number(text: str) -> float | None:
    """The number an answer written only as a number says; NaN when it is no well-formed
    number ('.0.1'); None when the answer has words."""
    text = text.strip().rstrip(".")
    if not _NUMERIC.fullmatch(text):
        return None
    found = _NUMBER.fullmatch(text.strip())
    return float(found.group().replace(",", "")) if found else math.nan


def _same(kind: str, written: float, value: float) -> bool:
    """A likert point exactly; a number within TOLERANCE of the larger (2,400 for 2,389.5)."""
    if kind == "likert":
        return written == value
    return abs(written - value) <= TOLERANCE * max(abs(written), abs(value))


def named_options(text: str, options: Sequence[str]) -> list[int]:
    """Indexes of the options `text` names as words; an option inside a longer one named
    ('support' in 'strongly support') does not count apart, nor one said only after a
    negation ("I do not support it", "not yes"), nor "no" before a word ("no idea", "no one
    knows", "No answer."): a determiner, not the option."""
    found = [i for i, o in enumerate(options) if _mentions(text, o)[0]]
    return [
        i
        for i in found
        if not any(j != i and options[i].lower() in options[j].lower() for j in found)
    ]


def denied_options(text: str, options: Sequence[str]) -> set[int]:
    """Indexes of the options `text` says only after a negation ("I do not support it")."""
    return {i for i, o in enumerate(options) if _mentions(text, o) == (False, True)}


# A negation right before an option, a word at most between ("do not support", "not really
# support").
_NEGATED = re.compile(
    r"\b(?:not|never|don't|doesn't|didn't|won't|wouldn't|can't|cannot)\s+(?:[a-z]+\s+)?$"
)


def _mentions(text: str, option: str) -> tuple[bool, bool]:
    """Whether `text` says `option` somewhere with no negation before it, and somewhere after
    one."""
    low = text.lower().replace("\u2019", "'")
    negated = [
        bool(_NEGATED.search(low[: m.start()]))
        for m in re.finditer(_option_pattern(option.lower()), low)
    ]
    return not all(negated) if negated else False, any(negated)


def _option_pattern(option: str) -> str:
    """The option as a whole word; "no" only where no word follows it ("No, I'd stay")."""
    return rf"\b{re.escape(option)}\b" + (r"(?![^\W\d_]|\s+[^\W\d_])" if option == "no" else "")


def _choice(text: str, value: float | None, options: Sequence[str]) -> tuple[str, str] | None:
    for option in options:  # the prompt's listing "0: support; 1: oppose" copied
        if re.search(rf"\b\d+\s*[:=,]\s*{re.escape(option.lower())}\b", text.lower()):
            return "copied_prompt", f"lists the options: {text[:60]!r}"
    named = named_options(text, options)
    if len(named) > 1:
        return "not_a_choice", f"names {len(named)} options"
    denied = denied_options(text, options)
    if value is not None and value in denied:  # "not yes" with 0: yes
        return "value_mismatch", f"says not {options[int(value)]!r}, value {value:g}"
    written = written_number(text)  # "1" with value 2: which option is meant?
    if written is not None and value is not None and written != value:
        return "value_mismatch", f"answer {written:g}, value {value:g}"
    if value is None and (listed := _LEADING_NUMBER.match(text)):  # "2. undecided", as a list
        value = float(listed.group(1))
    if value is not None and not (value.is_integer() and 0 <= value < len(options)):
        return "not_a_choice", f"value {value:g} is no option number"
    if named and value is not None and int(value) != named[0]:
        return "value_mismatch", f"names {options[named[0]]!r}, value {value:g}"
    if named and (listed := _LEADING_NUMBER.match(text)) and float(listed.group(1)) != named[0]:
        return "value_mismatch", f"opens on option {listed.group(1)}, names {options[named[0]]!r}"
    if not named and value is None:
        return "not_a_choice", f"names no option: {text[:60]!r}"
    return None


def _said(answer: str) -> list[str]:
    """An answer's words, lower case, idioms that address no one ("thank you") left out."""
    return re.findall(r"[a-z']+", _IDIOMS.sub(" ", answer.lower().replace("\u2019", "'")))


def status_labels(answer: str, status: dict[str, Any]) -> list[str]:
    """The person's status keys `answer` writes as the status line does, a key and a mark
    ("activity:relax after the meal, attitude:Hope"): two or more copy the prompt."""
    if not status:
        return []
    keys = "|".join(re.escape(str(k)) for k in status)
    return sorted({m.lower() for m in re.findall(rf"\b({keys})\s*[:=]", answer, re.IGNORECASE)})


def read_back(answer: str, ctx: dict[str, Any]) -> str | None:
    """What an answer not spoken as "I" reads back from the person's data in the prompt: a
    whole value of their situation that the question does not ask about, of two words or more
    or with the prompt's marks around it ("relax at home", "./Bachelor" from
    education=bachelor; a bare "Bachelor" may answer "What did you study?"), or three words or
    more of one remembered line ("21:00 relax at home (60 min)" from their plan), or six
    words or more all in runs of four or more from one ("The hurricane hits the town,
    flooding and emergency sirens"), the whole answer or one of its sentences; None when it
    says something of its own."""
    said = _WORDS.findall(answer.lower())
    if not said or _as_i(_said(answer)):
        return None
    asked = set(_WORDS.findall(str(ctx.get("question") or "").lower()))
    marked = _MARKS.search(answer) is not None
    for key, value in (ctx.get("status") or {}).items():
        named = _WORDS.findall(str(key).lower())
        if key == ctx.get("attribute") or asked.intersection(named):
            continue  # the value asked about
        told = _WORDS.findall(str(value).lower())
        if said in (told, named + told) and (marked or len(said) > 1):
            return f"{key}={value}"
    n = len(said)
    if n < 3:
        return None
    sentences = [_WORDS.findall(x) for x in _SENTENCE_ENDS.split(answer.lower())]
    for line in ctx.get("memories") or ():
        ws = _WORDS.findall(str(line).lower())
        longest, covered = _shared_runs(said, ws)
        if longest == n or (longest >= 8 and 3 * covered >= 2 * n) or (covered == n >= 6):
            return str(line)
        if any(len(x) >= 6 and _shared_runs(x, ws)[1] == len(x) for x in sentences):
            return str(line)  # a sentence of it is the line read back, the rest added
    return None


_SENTENCE_ENDS = re.compile(r"[.!?;]+")


def _shared_runs(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """(the longest run of words of `a` found in `b`, the words of `a` in runs of four or
    more found in `b`), runs taken left to right."""
    longest = covered = i = 0
    while i < len(a):
        run = max((_match(a, i, b, j) for j in range(len(b))), default=0)
        longest = max(longest, run)
        covered += run if run >= 4 else 0
        i += max(run, 1)
    return longest, covered


def _match(a: Sequence[str], i: int, b: Sequence[str], j: int) -> int:
    """How many words `a` from `i` and `b` from `j` share in a row."""
    k = 0
    while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
        k += 1
    return k


def asks_back(answer: str, question: str) -> bool:
    """Whether a sentence of the answer is the question itself, put back ("I'm not sure. What
    worries you most right now? How are you going to decide?"), or asks as it opens ("What
    did you do today?" to "What did you do when ...?"), or the answer opens on the question's
    words as a label ("Satisfied with your day so far is: 2"; "My day so far: good" has words
    of its own), or has no word but the wh-question's own and "I" ("What I did this
    morning..."): the model echoing its prompt (a question of three words or more)."""
    asked = _WORDS.findall(question.lower())
    if len(asked) < 3:
        return False
    label = _LABEL.match(answer.lower())
    named = _WORDS.findall(label.group(1)) if label else []
    if len(named) >= 3 and set(named) - _LINKS <= set(asked):
        return True
    for sentence in _SENTENCE_BREAK.split(answer.lower()):
        said = _WORDS.findall(sentence)
        if said == asked or (sentence.rstrip().endswith("?") and said[:3] == asked[:3]):
            return True
    said = _WORDS.findall(answer.lower())  # "What I did this morning...": its words, no answer
    return asked[0] in _WH and len(said) >= 3 and set(said) - _SINGULAR <= set(asked)


_CODE_TOKEN = re.compile(r"\S*\d{4,}\S*")  # a token with a long number: an id, a path
# "You have been asked", "you were asked", "you're being asked": the prompt's framing put back.
_BEING_ASKED = re.compile(
    r"\byou(?:'re| are| were| have been| had been| will be)(?: being)? asked\b", re.IGNORECASE
)
# An answer opening on a slot for itself in brackets ("<Your answer>", "[Mia Lopez's answer]").
_ANSWER_SLOT = re.compile(
    r"\s*[\[<{(][^\]>})]{0,40}\b(?:answer|response|reply)\b[^\]>})]{0,20}[\]>})]", re.IGNORECASE
)
_WH = frozenset("what where when why how who whom which whose".split())
_LABEL = re.compile(r"\s*([^:\n.?!]{8,80}):")  # an answer's opening words and a colon
_LINKS = frozenset("is are was were".split())  # "... is: 2"


def _as_i(said: list[str]) -> bool:
    """Whether words speak as "I" or "we"."""
    return any(w in _FIRST_PERSON for w in said)


def addressed(answer: str, question: str) -> bool:
    """Whether an answer talks to someone as "you": puts the question's own "your household"
    back and tells of nothing of its own (even beside "I": "In your day today, I am unsure";
    "your household and mine" compares); never speaking as "I" (at most as "we"), says "you"
    twice or more; or, never speaking as "I" or "we", opens on "your" or has a sentence
    opening, after a "no" or "yes" or not, on what "you" will, should, would or can't do, are,
    have or did ("You made a cake.", "No, you can't go.", "You are against it."; one generic
    "you could hear the wind" is ordinary speech); or opens a sentence on what "you" did and
    says "you" more often than "I" ("You forgot your tax. I'm afraid you're late."); or
    greets "you" ("Nice to meet you."): the question put back or a story told to the reader,
    not the person's own answer (unless the question asks for words to someone: "What would
    you tell your neighbour?")."""
    if _WORDS_TO.search(question.lower()):
        return False
    if _GREETS.search(answer.lower()):  # "Nice to meet you. You're a new coworker."
        return True
    said = _said(answer)
    asked = _said(question.lower())
    yours = {(w, after) for w, after in pairwise(asked) if w == "your"}
    if any((w, after) in yours for w, after in pairwise(said)) and not _MINE.intersection(said):
        return True
    you = sum(w in _SECOND_PERSON for w in said)
    sentences = [_unprefaced(_said(s)) for s in _SENTENCE_BREAK.split(answer)]
    did = any(s[:1] == ["you"] and _past(s[1:2]) for s in sentences)
    if _as_i(said):  # "You support it. You think ..., we have 10 days": "we" alone, told
        mine = sum(w in _SINGULAR for w in said)
        first = sentences[0] if sentences else []  # the answer proper, told to "you"
        told_first = _told(first) or (first[:1] == ["you"] and _past(first[1:2]))
        return (you >= 2 and not mine) or (did and you > mine) or (told_first and not _as_i(first))
    told = did or said[:1] in (["your"], ["you'll"]) or any(_told(s) for s in sentences)
    return told or you >= 2


def _past(ws: Sequence[str]) -> bool:
    """Whether a word is a verb in the past ("you made a cake": told what they did)."""
    return bool(ws) and (ws[0] in _PAST or (len(ws[0]) > 4 and ws[0].endswith("ed")))


# Verbs in the past that do not end on "-ed" ("You made a cake.").
_PAST = frozenset(
    "made went had did saw took got came ate said told left felt slept bought ran met spent "
    "heard thought knew found gave sat stood woke kept lost brought caught taught forgot began "
    "wrote drove fell chose spoke broke sent paid sold won fed held built meant wore rode "
    "drank sang became".split()
)


def _unprefaced(said: list[str]) -> list[str]:
    """A sentence's words without an opening "no", "yes", "well" or "oh" ("No, you can't"),
    nor an opening time ("This morning, you're making plans")."""
    said = said[1:] if said[:1] in (["no"], ["yes"], ["well"], ["oh"]) else said
    for opening in _WHEN_OPENINGS:
        if tuple(said[: len(opening)]) == opening:
            return said[len(opening) :]
    return said


_WHEN_OPENINGS = tuple(  # longest first
    tuple(words.split())
    for words in (
        "this morning",
        "this afternoon",
        "this evening",
        "last night",
        "today",
        "tonight",
        "yesterday",
    )
)


# "You will pay ...", "You should support it", "You are against it", "You have $234": the
# asker told what to do or what they are or have, not answered ("you have to ..." is generic).
_TOLD_TO_DO = (
    *(("you", verb) for verb in ("will", "should", "would", "must", "can't", "cannot", "are")),
    ("you're",),
)


def _told(sentence: list[str]) -> bool:
    """Whether a sentence opens on what "you" will, should, are or have (not "have to", nor
    "you are right": a reply to the asker)."""
    if sentence[:2] == ["you", "have"]:
        return sentence[2:3] != ["to"]
    rest = sentence[2:3] if sentence[:2] == ["you", "are"] else sentence[1:2]
    if sentence[:1] in (["you"], ["you're"]) and rest and rest[0] in _REPLIES:
        return False
    return any(tuple(sentence[: len(opening)]) == opening for opening in _TOLD_TO_DO)


_REPLIES = frozenset("right correct welcome kidding".split())  # "You are right, ..."


def narrates(answer: str, name: str) -> bool:
    """Whether an answer tells of the respondent from outside: by their full name twice or as
    the subject of a telling verb (even beside an "I": "Cleo Rossi thought about this morning
    and decided ..."), or, never speaking as "I" or "we": by their full name ("Noah Adams went
    on a trip"; a first name alone may be someone else's), with every sentence opening on
    "he" or "she" ("She will be going to the shelter. She is going to find a job."), or
    opening on "the person" ("The person said to leave the building, but he didn't."), the
    prompt's stand-in for them."""
    name = " ".join(name.split()).lower()
    low = " ".join(answer.lower().replace("\u2019", "'").split())
    times = len(re.findall(rf"\b{re.escape(name)}\b", low)) if " " in name else 0
    if times >= 2:  # "Mia Moore is going to work, but Mia Moore has plans ..., and I am"
        return True
    if times and re.search(rf"\b{re.escape(name)}\s+(?:{NARRATING})\b", low):
        return True
    if times and names_self(answer, name):
        return True
    if _as_i(_said(answer)):
        return False
    if times:
        return True
    if _STAND_IN.match(low):
        return True
    openings = [_WORDS.findall(s)[:1] for s in _SENTENCE_BREAK.split(low) if s.strip()]
    return bool(openings) and all(first in (["he"], ["she"]) for first in openings)


def names_self(text: str, name: str) -> bool:
    """Whether `text` speaks of the person by their own full name other than to introduce
    themselves ("I had a conversation with Tara Quinn", said by Tara Quinn; "I'm Tara Quinn",
    "I, Tara Quinn, ..." and "Tara Quinn, that is me" are theirs) or to name what is theirs
    ("Tara Quinn's bakery"; "Tara Quinn's plan for 9:00" is the prompt's label)."""
    name = " ".join(name.split()).lower()
    if " " not in name:
        return False
    low = " ".join(text.lower().replace("\u2019", "'").split())
    found = re.finditer(rf"(.{{0,14}})\b{re.escape(name)}\b(?!{_THEIRS})(.{{0,14}})", low)
    return any(
        not re.search(rf"{_INTRODUCING}$", one.group(1)) and not _ME_AFTER.match(one.group(2))
        for one in found
    )


# Verbs that tell of a person from outside after their name ("Cleo Rossi thought ...", "Jon
# Khan sat down"): a fixed few, any past tense in -ed, the common irregular past tenses.
NARRATING = "|".join(
    [
        *"is was will has goes says smiles feels thinks decides believes knows wants".split(),
        "remembers",
        *sorted(_PAST),
        "[a-z]{2,}(?<!e)ed",
    ]
)
# Words before one's own full name that introduce oneself ("I'm Sam Diaz", "my name is ...",
# "It's me, Sam Diaz") or sign a message ("See you there! - Sam Diaz", "Love, Sam Diaz").
_INTRODUCING = (
    r"(?:\b(?:i'm|i am|im|my name is|my name's|this is|call me|it's|it is|it's me,|it is me,) |"
    r"\bi, |(?:^|\s)[-\u2013\u2014~] ?|\b(?:love|best|cheers|regards|yours|thanks),? )"
)
# Something of one's own after one's name ("Tara Quinn's bakery"), but not the prompt's labels
# for the person ("Tara Quinn's plan for 9:00", "Tara Quinn's mood").
_THEIRS = r"'s\b(?! (?:plan|plans|mood|relationship|needs|thoughts?|emotions?|emotional)\b)"
_ME_AFTER = re.compile(r",? (?:that is me|that's me|here\b|speaking\b)")
_STAND_IN = re.compile(r"\W*the (?:other )?(?:person|respondent|agent|character)\b")


def tagged(answer: str, name: str) -> bool:
    """Whether an answer opens on the respondent's full name and at most two words before a
    colon ("Tara Rossi thinks: ...", "Tara Rossi:"): a line of a transcript or a story about
    them, not their own words."""
    name = " ".join(name.split())
    if " " not in name:
        return False
    return re.match(rf"\s*{re.escape(name)}(?:\s+[\w']+){{0,2}}\s*:", answer, re.I) is not None


def leaning(text: str) -> int:
    """+1 when the words lean for, -1 against, 0 when neither or both ("unhappy, but I like it")."""
    signs = set()
    for clause in _CLAUSE_END.split(text):  # "No, I support it": the "no" answers, not negates
        said = _said(clause)
        for i, w in enumerate(said):
            sign = 1 if w in _FOR else -1 if w in _AGAINST else 0
            if sign and _NEGATIONS.intersection(said[max(0, i - 3) : i]):
                sign = -1 if sign > 0 else 0  # "don't support" is against; "not against", unsure
            if sign:
                signs.add(sign)
    return signs.pop() if len(signs) == 1 else 0


def _against_words(text: str, point: float, scale: int, question: str) -> tuple[str, str] | None:
    """A point on the other side of the middle from the words, where the question asks how
    much the person is for something ("How much do you support ...?" "I oppose it", 5)."""
    middle = (1 + scale) / 2
    said = leaning(text)
    if leaning(question) <= 0 or not said or point == middle or (said > 0) == (point > middle):
        return None
    return "value_mismatch", f"words {'for' if said > 0 else 'against'}, point {point:g} of {scale}"


def _scaled(
    kind: str, text: str, value: float | None, ctx: dict[str, Any]
) -> tuple[str, str] | None:
    written = written_number(text)
    if written is not None and math.isnan(written):
        return "value_mismatch", f"no well-formed number: {text[:40]!r}"
    if value is not None and written is not None and not _same(kind, written, value):
        return "value_mismatch", f"answer {written:g}, value {value:g}"
    found = numbers_in(text) if written is None else []
    opens_on_number = kind == "likert" and found and _NUMBER.match(text)
    if opens_on_number and value is not None and not _same(kind, found[0], value):
        return "value_mismatch", f"answer opens on {found[0]:g}, value {value:g}"  # "1.0, yes"
    points = [float(p) for p in _POINT.findall(text)] if kind == "likert" else []
    scale = int(ctx.get("scale") or 5)
    if value is not None and any(1 <= p <= scale and p != value for p in points):
        return "value_mismatch", f"words give the point {points[0]:g}, value {value:g}"
    if len(found) >= 3 and len(_LETTERS.findall(text)) <= 1:  # "2 4.13;18:06;7;9;Frakology"
        return "value_mismatch", f"{len(found)} numbers and no sentence: {text[:40]!r}"
    if len(found) > 1 and not _LETTERS.search(text):  # "2.0, 13:45": which one is meant?
        alone = numbers_in(_OUT_OF.sub("", text))  # "4/5": a point and its scale is one
        if len(alone) > 1:
            return "value_mismatch", f"{len(alone)} numbers and no words: {text[:40]!r}"
    question = str(ctx.get("question") or "")
    noun = counted_noun(question) if kind == "number" else None
    counts = _counts_of(text, noun) if noun else set()
    total = sum(counts) if len(counts) > 1 else None  # "2 people at work and 3 at home": 5
    if (  # "2.0, 1684" for 19.75
        kind == "number" and value is not None and found and value != total
        and not any(_same(kind, n, value) for n in found)
    ):  # fmt: skip
        return "value_mismatch", f"value {value:g}, none of the answer's numbers"
    if len(counts) == 1 and value is not None and value not in counts:  # "1.0, 2 people" for 1
        return "value_mismatch", f"the words count {min(counts):g} {noun}, value {value:g}"
    if total is not None and value is None:  # the survey would read the first of them
        listed = ", ".join(f"{n:g}" for n in sorted(counts))
        return "value_mismatch", f"several counts of {noun} ({listed}) and no value"
    said = value if value is not None else written
    if said is None:  # words only: the survey reads their first number, not a clock time
        counted = quantities_in(text, question, kind)
        if not counted:  # the question asked for a point or a number, and none was given
            asked = f"point of 1..{scale}" if kind == "likert" else "number"
            return "no_answer", f"no {asked} in the value or the words: {text[:40]!r}"
        said = counted[0]
    if kind == "likert":
        if (stated := _ON_SCALE.match(text)) and int(stated.group(1)) != scale:  # "2.0 of 10"
            return "value_mismatch", f"a point of 1..{stated.group(1)}, not of 1..{scale}"
        if bound := vacuous_bound(text, scale):  # "No more than 5 points" on 1..5
            return "no_answer", f"{bound!r} holds for every point of 1..{scale}"
        if not (said.is_integer() and 1 <= said <= scale):
            return "off_scale", f"{said:g} is no point of 1..{scale}"
        return _against_words(text, said, scale, str(ctx.get("question") or ""))
    low, high = ctx.get("min"), ctx.get("max")
    if (low is not None and said < low) or (high is not None and said > high):
        return "off_scale", f"{said:g} outside {low}..{high}"
    if not said.is_integer() and _COUNTED.match(question):
        return "off_scale", f"{said:g} is no count"  # 1.86 to "How many people ...?"
    return None


def answer_problem(answer: str, value: float | None, ctx: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, detail) of the first way `answer` and `value` fail the question in `ctx`
    (`kind`, `scale`, `options`, `min`, `max`, the respondent's `name`), or None when they
    answer it."""
    text = answer.strip()  # punctuation alone and template slots fail the schema already
    value = float(value) if value is not None and math.isfinite(value) else None
    kind = ctx.get("kind", "open")
    question = str(ctx.get("question") or "")
    words = text if _ASKS_A_TIME.match(question) else CLOCK.sub(" ", _TIME_OF_DAY.sub(" ", text))
    words = _CODE_TOKEN.sub(" ", words)  # "/world-1234567890": a path or an id, not a word
    if kind == "open" and not set(_LETTERS.findall(words.lower())) - {"the", "a", "an"}:
        return "empty", repr(text[:40])  # "42", "The 10:35: 20:48", "A) 3pm-4:00pm", "/a-123456"
    if not _LETTERS.search(text) and _CODE.search(text):  # ");1;" for 1 of 5
        return "copied_prompt", f"code marks, not words: {text[:40]!r}"
    if kind == "open" and _CUT_AT_NUMBER.search(text):  # "... sleep at home. 22": cut off
        return "empty", f"stops on a bare number: {text[-40:]!r}"
    wordy = kind == "open" or value is None  # a scale's value, when given, is the answer
    said = _said(text)  # "give me the answer": the asking, with no "I" who answers
    about_asking = _ABOUT_ASKING.search(text.lower()) and not _SUBJECT.intersection(said)
    counted = quantities_in(text, question, kind) if about_asking and not wordy else []
    if counted and value not in counted:
        return "value_mismatch", f"'the answer' is another number: {text[:40]!r}, value {value}"
    if about_asking and (wordy or not counted):  # "The answer says" beside a value: none
        return "empty", f"speaks of the asking, not as the person: {text[:60]!r}"
    name = str(ctx.get("name") or "")
    if narrates(text, name) or tagged(text, name):
        return "narrated", repr(text[:60])
    if addressed(text, question):
        return "not_first_person", repr(text[:60])
    if asks_back(text, question):
        return "copied_prompt", f"puts the question back: {text[:60]!r}"
    if framing := _BEING_ASKED.search(text):  # the prompt's "You are being asked a question"
        return "copied_prompt", f"the prompt's framing: {framing.group()!r}"
    if slot := _ANSWER_SLOT.match(text):  # "[Mia Lopez's answer] I was going to work ..."
        return "copied_prompt", f"a template's slot: {slot.group().strip()!r}"
    if len(labels := status_labels(text, ctx.get("status") or {})) >= 2:
        return "copied_prompt", f"the status line's layout: {', '.join(labels)}"
    if kind == "open" and (source := read_back(text, ctx)) is not None:
        return "copied_prompt", f"reads back {source[:60]!r}"
    if kind == "open" and (untold := _untold_past(text, question)) is not None:
        return untold
    if kind == "choice":
        return _choice(text, value, [str(o) for o in ctx.get("options") or []])
    if kind in ("likert", "number"):
        return (
            _scaled(kind, text, value, ctx)
            or _other_quantity(text, value, question, ctx)
            or _more_than_the_town(
                value if value is not None else number_read(text, question, kind), question, ctx
            )
        )
    return None


def _untold_past(text: str, question: str) -> tuple[str, str] | None:
    """For a question about what the respondent did ("What did you do this morning?"): an
    answer with no word of theirs ("The hurricane hits the town: storm, flooding and
    emergency sirens."; "Took a shower", "Working." and "Nothing much." stand), or one that
    only tells what is to come ("Hi, I'm going to work.")."""
    if not _ASKS_OWN_PAST.search(question):
        return None
    said = _said(text)
    firsts = [words[0] for part in _SENTENCE_BREAK.split(text) if (words := _said(part))]
    clauses = [words[0] for part in _CLAUSE_BREAK.split(text) if (words := _said(part))]
    elliptic = any(
        _of_the_past(first) or first.endswith("ing") or first in _SO_LITTLE for first in firsts
    ) or (  # "Well, stayed home.", "The usual — opened the shop."; not one told to "you"
        any(_of_the_past(first) for first in clauses) and not _SECOND_PERSON.intersection(said)
    )
    if said and not _as_i(said) and not elliptic:
        return "not_first_person", f"nothing of the respondent's own: {text[:60]!r}"
    if said and set(said) <= _NO_DEED:  # "Yes, I did just that.": which deed, it never says
        return "empty", f"names no deed: {text[:60]!r}"
    if not any(_of_the_past(w) for w in said) and _FUTURE.search(text.lower()):
        return "empty", f"what is to come, asked what was: {text[:60]!r}"
    return None


_CLAUSE_BREAK = re.compile(r"[,;:\u2013\u2014]|\s-\s")  # a clause's end inside a sentence
# A question about what the respondent did ("What did you do ...?", "What have you done?").
_ASKS_OWN_PAST = re.compile(
    r"\bwhat\b[^?]*\b(?:did|have|had) you\b[^?]*\b(?:do|done)\b", re.IGNORECASE
)
# Words that point at a deed without naming one ("Yes, I did just that.", "I did it.").
_NO_DEED = frozenset(
    "yes yeah no i i'm i've me my we did do done just that it this so then too as well "
    "again the same".split()
)
# First words of an answer that did little ("Nothing much.", "Just work.").
_SO_LITTLE = frozenset("nothing not just mostly only same both".split())


def _of_the_past(word: str) -> bool:
    """Whether a word tells of the past: a past tense, a past participle or "was"."""
    return _past([word]) or word in _PAST_TOO


# Past forms `_past` leaves out: after "you" they tell the asker nothing done ("you were right").
_PAST_TOO = frozenset("was were been done gone put read set".split())
# Words of what is to come ("I'm going to", "I'll", "tomorrow").
_FUTURE = re.compile(r"\b(?:going to|gonna|will|'ll|tomorrow|tonight)\b")


_PERSONS = frozenset("people person friend neighbour neighbor coworker colleague".split())


def number_read(text: str, question: str = "", kind: str = "number") -> float | None:
    """The number the survey reads in an answer's words: the first of `quantities_in`."""
    found = quantities_in(text, question, kind)
    return found[0] if found else None


def _more_than_the_town(
    value: float | None, question: str, ctx: dict[str, Any]
) -> tuple[str, str] | None:
    """A count of people larger than the town's population ("12" people talked to in a town
    of 6): no one could have met them."""
    town = ctx.get("people") or ()
    if value is None or not town or counted_noun(question) not in _PERSONS:
        return None
    if value > len(town):
        return "off_scale", f"{value:g} people, in a town of {len(town)}"
    return None


# Status attributes that are amounts of money, and a question's words asking for one.
_MONEY_ATTRIBUTES = frozenset(
    "currency income consumption family_consumption savings wealth salary wage rent debt "
    "transfers cash money".split()
)
_ASKS_MONEY = re.compile(
    r"\b(?:money|income|salary|wages?|earn\w*|savings|spend|spent|cost|costs|price|rent|cash|"
    r"dollars?|euros?|budget|debt|afford|pay|paid|taxe?s?|currency|wealth)\b",
    re.IGNORECASE,
)
_ASKS_AGE = re.compile(r"\bhow old\b|\bage\b", re.IGNORECASE)
# Marks of money around a number: a currency sign or code before it ("$2", "USD 40"), a
# currency or a rate after it ("2 dollars", "2k", "2,000 a month", "300 in cash").
_MONEY_BEFORE = re.compile(r"(?:[$\u20ac\u00a3\u00a5]|\b(?:usd|eur|gbp))\s*$", re.IGNORECASE)
_MONEY_AFTER = re.compile(
    r"\s*(?:[$\u20ac\u00a3\u00a5]|(?:k|usd|eur|gbp|euros?|dollars?|bucks|pounds|quid|cents?|"
    r"coins|credits|a month|per month|monthly|a year|per year|yearly|annually|a week|"
    r"per week|weekly|an hour|per hour|hourly|a day|per day|in cash|in savings|in debt|"
    r"in (?:my|the|our) (?:wallet|pocket|purse|account|savings|bank))\b)",
    re.IGNORECASE,
)
# Words before a number that make it an age ("aged 34", "I'm 34", "at the age of 34") or a
# group's size ("a family of 2", "a household of 4").
_AGE_BEFORE = re.compile(r"\b(?:aged?|age of|i turned|turned|turning)\s+$", re.IGNORECASE)
# "I'm 34" is an age only when nothing but an end or "years" follows ("I'm 500 short" is not).
_I_AM_BEFORE = re.compile(r"\b(?:i'm|i am)\s+$", re.IGNORECASE)
_AGE_ALONE_AFTER = re.compile(r"\s*(?:$|[.,;:!?)]|years?\b|now\b|and\b|this\b|next\b)", re.I)
_GROUP_BEFORE = re.compile(
    r"\b(?:family|household|home|group|team|party|crew|class|couple)\s+of\s+$", re.IGNORECASE
)
# The word after a number, its noun when the number counts something ("2 kids").
_NEXT_WORD = re.compile(r"\s*-?\s*([a-z]+)(?:[\s-]+(old)\b)?", re.IGNORECASE)
_TIME_UNITS = frozenset("second minute hour day week month year".split())
# Nouns of people, which count one another ("2 kids" to "How many people ...?").
_PEOPLE = frozenset(
    "people person persons friend neighbour neighbor coworker colleague kid child children "
    "son daughter brother sister sibling cousin parent grandchild grandchildren member adult "
    "guest visitor customer men man women woman boy girl baby babies roommate".split()
)
# Words ending in "s" after a number that count nothing ("2 plus tax", "40 always").
_NOT_COUNTED = frozenset(
    "plus minus thus always perhaps sometimes besides towards afterwards nowadays anyways "
    "bonus tips thanks its this was has is as us yes his hers ours yours theirs".split()
)


def _asked_quantity(question: str, attribute: Any) -> str | None:
    """What a number question asks for: "money", "age", a counted noun ("people"), or None."""
    if str(attribute or "").lower() in _MONEY_ATTRIBUTES or _ASKS_MONEY.search(question):
        return "money"
    if str(attribute or "").lower() == "age" or _ASKS_AGE.search(question):
        return "age"
    return counted_noun(question)


def _singular(word: str) -> str:
    """A noun in the singular, roughly ("kids" → "kid", "children" → "child")."""
    low = word.lower()
    if low in ("children", "grandchildren", "people", "men", "women"):
        return {"people": "person", "men": "man", "women": "woman"}.get(low, low[:-3])
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    return low[:-1] if low.endswith("s") and not low.endswith("ss") else low


def number_use(before: str, after: str) -> str | None:
    """What a number stands for, from the words `before` and `after` it: "money" ("$2", "2
    dollars", "2,000 a month"), "age" ("aged 34", "34 years old", "I'm 34"), "group" ("a
    family of 2"), a time unit ("3 years"), a counted noun ("2 kids" → "kid"), or None when
    nothing around it says ("I have 250")."""
    if _MONEY_BEFORE.search(before) or _MONEY_AFTER.match(after):
        return "money"
    following = _NEXT_WORD.match(after)
    noun = following.group(1).lower() if following else ""
    if _AGE_BEFORE.search(before) or (following and following.group(2) and noun.startswith("year")):
        return "age"
    if _I_AM_BEFORE.search(before) and _AGE_ALONE_AFTER.match(after):
        return "age"
    if _GROUP_BEFORE.search(before):
        return "group"
    unit = _singular(noun)
    if unit in _TIME_UNITS:
        return unit
    if unit in _PEOPLE or (noun.endswith("s") and len(noun) > 3 and noun not in _NOT_COUNTED):
        return unit
    return None


def _fits(use: str | None, asked: str) -> bool:
    """Whether a number standing for `use` may answer a question asking for `asked`: money
    anything but a count, an age, a group or a span; an age a year or nothing named; a count
    anything but money, an age or a span of another unit."""
    if use is None:
        return True
    if asked == "money":
        return use == "money"
    if asked == "age":
        return use in ("age", "year")
    counted = _singular(asked)
    return use not in ("money", "age") and (use not in _TIME_UNITS or use == counted)


def _other_quantity(
    text: str, value: float | None, question: str, ctx: dict[str, Any]
) -> tuple[str, str] | None:
    """A number answer whose number stands for another quantity than the question asks: a
    household's size or a count of kids or years as money ("I live with my family of 2" as
    2), money or a count of kids as an age, money or a span as a count of people. The value
    is judged where the words write it (each place it is written, one that fits is enough);
    with no value, the number the survey reads."""
    asked = _asked_quantity(question, ctx.get("attribute"))
    if asked is None or written_number(text) is not None:  # a bare number is the answer
        return None
    readable = _readable(text, question, "number")
    uses: list[tuple[float, str | None]] = []
    for m in _NUMBER.finditer(readable):
        number = float(m.group().replace(",", ""))
        uses.append((number, number_use(readable[: m.start()], readable[m.end() :])))
    if not uses:
        return None
    said = [u for n, u in uses if _same("number", n, value)] if value is not None else []
    if value is None:
        said = [uses[0][1]]
    if said and not any(_fits(u, asked) for u in said):
        number = value if value is not None else uses[0][0]
        return "value_mismatch", f"{number:g} stands for {said[0]}, not {asked}"
    return None
