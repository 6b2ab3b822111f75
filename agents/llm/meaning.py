"""Meaning checks: an answer that parses and fits its schema may still not answer the task.

Checked for every task: a copy of the prompt's example (its words, or its numbers with no words
of the answer's own), an echo of the schema's descriptions, a copy of the prompt's format text,
and (after the task's own checks) an assistant's words ("Thank you for your question!", and
in a text said to no one "I'm happy to help you"), a picture's caption ("The image shows
...", "looking at the camera") and a text that stops at a colon, announcing what it does not
give ("The answer is:"). Checked per task: importance ratings that count (1, 2, 3... or 10, 1,
2, 3... or 10, 9, 8...) instead of rating or that miss the batch's attention checks (a mundane
moment rated high, a poignant one low), a dialogue line said before, narrating its speaker
("Ann Lee is going to ..." said by Ann Lee) or describing a picture, a day plan that
contradicts the agent's state (asleep at noon while rested), names places the agent does not
know or covers a few hours only, an hour whose steps do not tile it, a word outside the ones
the task lists, a memory strategy setting outside its allowed range, a conversation summary
naming nothing of what was said (its topic counts only when the lines reached it), a survey
answer off its question's scale or options or empty, told to "you" or of the respondent by
name instead of spoken as "I", whose value says another thing than its words or whose number
stands for another quantity than the one asked ("a family of 2" as money), a reflection
insight that asks a question, cites none of its statements, says nothing of the person or of
them, is only a time-table or talks as an asker or to one ("allow us to learn from you"), a
fact triple whose relation is a sentence or repeats its subject or object, an attitude whose
reason speaks of neither its topic nor anything seen or heard. A failed check makes the
gateway re-ask with a short correction (`CORRECTIONS`, text with nothing in it to copy) and
then fall back; both are counted per task and kind. The gateway adds one kind of its own,
`cut_off`: a reply the endpoint stopped at max_tokens that parsed only once json-repair closed
it, a text cut mid-sentence.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from dataclasses import replace as replaced
from functools import cached_property, lru_cache
from itertools import groupby, pairwise
from typing import Any

from pydantic import BaseModel

from societas.agents.llm.survey_checks import (
    CLOCK,
    NARRATING,
    addressed,
    answer_problem,
    leaning,
    names_self,
    narrates,
)

__all__ = [
    "CORRECTIONS",
    "FUNCTION_WORDS",
    "INVALID_FORM",
    "KINDS",
    "Failure",
    "Prompt",
    "check",
    "is_counting",
    "repeated_cycle",
    "tiles_hour",
]

KINDS = (
    "copied_example",
    "echoed_schema",
    "copied_prompt",
    "counting",
    "repeated_line",
    "contradiction",
    "incomplete",
    "not_tiled",
    "unknown_place",
    "opposite_tone",
    "unknown_person",
    "not_a_choice",
    "out_of_range",
    "missed_anchor",
    "missed_check",
    "narrated",
    "ungrounded",
    "stage_direction",
    "no_answer",
    "empty",
    "not_first_person",
    "off_scale",
    "value_mismatch",
    "not_an_insight",
    "not_a_fact",
    "unfounded",
    "cut_off",
    "out_of_character",
    "misattributed",
    "garbled_time",
)
# What the model is told after a failed check: short, and no words a reply could reuse.
CORRECTIONS: dict[str, str] = {
    "copied_example": "That reply copied the example. Reply again with this person's own answer.",
    "echoed_schema": "That reply repeated the instructions. Reply again with this person's own "
    "answer.",
    "copied_prompt": "That reply repeated the instructions. Reply again with this person's own "
    "answer.",
    "counting": "Those numbers count instead of rating each item. Rate each item on its own.",
    "repeated_line": "That was already said. Reply again with something new.",
    "contradiction": "That plan does not fit this person's needs and the time of day. Reply again.",
    "incomplete": "That plan is too short: plan the whole day, from waking up to going to "
    "sleep. Reply again.",
    "not_tiled": "Those steps do not fill the hour: the first starts at minute 0, each next one "
    "when the previous one ends, the last ends at minute 60. Reply again.",
    "unknown_place": "That plan names places this person does not know. Use only the places "
    "named in the task. Reply again.",
}
CORRECTIONS["opposite_tone"] = (
    "That tone does not fit how the conversation went. Judge its tone again and reply again."
)
CORRECTIONS["unknown_person"] = (
    "That reply names a person who is not in this town. Name only people from the task. "
    "Reply again."
)
CORRECTIONS["not_a_choice"] = (
    "That reply is not one of the words the task lists. Choose one of them. Reply again."
)
CORRECTIONS["out_of_range"] = (
    "A setting in that reply is outside the range the task allows for it. Choose values "
    "within the ranges. Reply again."
)
CORRECTIONS["missed_anchor"] = (
    "Those ratings do not follow the scale: mundane moments rate near 1, poignant ones near "
    "10. Rate each item again."
)
CORRECTIONS["missed_check"] = (
    "Some of those verdicts are wrong where the answer is plain: a memory and its denial "
    "contradict, memories about different things do not. Judge each item again."
)
CORRECTIONS["narrated"] = (
    "That reply tells about the person from outside. Reply again with what they say or think, "
    "in the first person."
)
CORRECTIONS["ungrounded"] = (
    "That summary says nothing of what was said in the conversation. Summarise the "
    "conversation itself. Reply again."
)
CORRECTIONS["misattributed"] = (
    "That summary gives the other person's words as this person's own. Summarise again, "
    "keeping who said what. Reply again."
)
CORRECTIONS["stage_direction"] = (
    "That line describes the scene instead of speaking. Reply again with the words the "
    "speaker says; to end the talk, mark its end instead."
)
CORRECTIONS["no_answer"] = (
    "That reply says it cannot answer. Decide as this person would, from what the task "
    "tells about them. Reply again."
)
CORRECTIONS["empty"] = (
    "That reply holds no answer. Answer the question as this person would. Reply again."
)
CORRECTIONS["not_first_person"] = (
    "That reply talks to someone else instead of answering as yourself. Answer in the first "
    "person, as this person would. Reply again."
)
CORRECTIONS["off_scale"] = (
    "That value is not one the question allows. Answer with a value the question asks for. "
    "Reply again."
)
CORRECTIONS["value_mismatch"] = (
    "The answer and its value say different things. Give one answer and the value that says "
    "the same. Reply again."
)
CORRECTIONS["not_an_insight"] = (
    "An insight there asks a question or says nothing of the statements it cites. State "
    "what the statements show, citing their numbers. Reply again."
)
CORRECTIONS["not_a_fact"] = (
    "A fact there is no triple: its relation is a sentence or repeats a part. Give each fact "
    "as who or what, a short relation, who or what. Reply again."
)
CORRECTIONS["unfounded"] = (
    "That reason speaks of neither the topic nor anything this person saw or heard. Give "
    "the reason from what they remember. Reply again."
)
CORRECTIONS["cut_off"] = (
    "That reply was cut off at the length limit before it ended. Reply again, shorter."
)
CORRECTIONS["out_of_character"] = (
    "That reply steps out of the story. Reply again as this person, who lives in the town "
    "and knows nothing beyond it."
)
CORRECTIONS["garbled_time"] = (
    "That reply gives a clock time with seconds or a calendar date, which this town's clock "
    "does not show. Reply again, with times in hours and minutes."
)
INVALID_FORM = "That reply did not have the requested JSON form ({where}). Reply again."

MIN_COPY_WORDS = 4  # a shorter text can match instructions by chance ("go to work")
CORRECTION_WORDS = 4  # words in a row of a correction that a reply may not take up
COPY_SHARE = 0.6  # share of a text's word trigrams found in the source that makes it a copy
DAYTIME = range(10, 17)  # hours when sleep needs a reason
RESTED = 0.6  # energy satisfaction at which daytime sleep contradicts the agent's state
_WORD = re.compile(r"[^\W_]+")
_SLEEP = re.compile(r"\b(sleep|asleep|nap|go to bed|bedtime)\b", re.IGNORECASE)
MEAL_HOURS = {"breakfast": range(4, 12), "lunch": range(10, 16), "dinner": range(16, 24)}
MUNDANE_MAX = 3  # the highest rating an importance batch's mundane attention check may get
POIGNANT_MIN = 7  # the lowest its poignant one may get
MIN_DAY_ITEMS = 3  # a day from waking to sleeping has at least this many strokes
MIN_DAY_HOURS = 8  # and its first and last strokes lie at least this many hours apart
# Words that say nothing of what a text is about (the rules policy's stop words too).
FUNCTION_WORDS = frozenset(
    "a an the and or but of to in on at for with from by is are was were be been it its this "
    "that these those i me my we our you your he she they them his her their as about into "
    "over after before then than so not no do did does have has had will would can could "
    "just very there here what who when where which while".split()
)
_UNSAID = FUNCTION_WORDS | {"one", "two"}  # and the summary instruction's "one or two"
STEM = 5  # letters two words share to count as the same word ("tired", "tiredness")
# Words of a prompt's data that are no activity: a need's name, the date line.
_NOT_DEEDS = frozenset({"hunger", "energy", "safety", "social", "needs", "mood", "today", "day"})


@dataclass(frozen=True)
class Failure:
    """A failed meaning check: its kind and what failed (for logs, never sent to the model)."""

    kind: str
    detail: str

    @property
    def correction(self) -> str:
        """The message that re-asks the model."""
        return CORRECTIONS[self.kind]


def words(text: str) -> tuple[str, ...]:
    """Lower-case words of `text` (punctuation and underscores dropped)."""
    return tuple(_WORD.findall(text.lower()))


def _grams(ws: Sequence[str]) -> set[tuple[str, ...]]:
    """Word trigrams of `ws` (the words themselves when fewer than three)."""
    if len(ws) < 3:
        return {tuple(ws)} if ws else set()
    return {tuple(ws[i : i + 3]) for i in range(len(ws) - 2)}


_AS_I = {"you": "i", "your": "my", "yours": "mine", "yourself": "myself"}
_AM = {"are": "am", "were": "was"}
_NAMED = ("name", "other", "speaker", "listener")  # context keys that name people


def as_said_by_me(ws: Sequence[str]) -> tuple[str, ...]:
    """Second-person words in the first person ("you are a nurse" → "i am a nurse")."""
    out = [_AS_I.get(w, w) for w in ws]
    for i in range(1, len(out)):
        if ws[i - 1] == "you" and ws[i] in _AM:
            out[i] = _AM[ws[i]]
    return tuple(out)


def _copied(ws: Sequence[str], source: Set[tuple[str, ...]]) -> bool:
    """Whether a text of `ws` words is mostly trigrams of `source`."""
    if len(ws) < MIN_COPY_WORDS or not source:
        return False
    mine = _grams(ws)
    return len(mine & source) >= COPY_SHARE * len(mine)


def _json_objects(text: str) -> Iterator[Any]:
    """JSON objects written inside `text` (a prompt's examples)."""
    decoder = json.JSONDecoder()
    i = text.find('{"')
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find('{"', i + 1)
            continue
        yield obj
        i = text.find('{"', end)


def _without_json(text: str) -> str:
    """`text` with the JSON objects written in it cut out."""
    decoder = json.JSONDecoder()
    out, i, start = [], text.find('{"'), 0
    while i != -1:
        try:
            end = decoder.raw_decode(text, i)[1]
        except ValueError:
            i = text.find('{"', i + 1)
            continue
        out.append(text[start:i])
        start = end
        i = text.find('{"', end)
    out.append(text[start:])
    return " ".join(out)


def leaves(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from leaves(v)


@lru_cache(maxsize=256)
def _schema_grams(blob: str) -> frozenset[tuple[str, ...]]:
    """Trigrams of a schema's descriptions and titles (cached per schema text)."""
    out: set[tuple[str, ...]] = set()
    for text in _described(json.loads(blob)):
        out |= _grams(words(text))
    return frozenset(out)


def _described(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, v in node.items():
            if key in ("description", "title") and isinstance(v, str):
                yield v
            else:
                yield from _described(v)
    elif isinstance(node, list):
        for v in node:
            yield from _described(v)


# Lines of a prompt that are data, not instructions: listed memories ("- ...", "1. ..."); the
# transcript's lines ("Bob Ray: ...") are data too, told apart by their speakers' names.
_LISTED = re.compile(r"^(- |\d+\. )")


# Tasks whose answer must not restate the prompt's situation lines ("Ann is talking with Bob
# about ..."): an utterance is something said, a summary may restate who, where and what; a
# thought or a stance's reason is the person's own, not their self-description read back
# ("You are a female, aged 45, belonging to ...").
FRAME_TASKS = frozenset({"dialogue_turn", "thought_update", "attitude_update"})


def _instruction(
    messages: Sequence[Any], frame: bool, speakers: Sequence[str] = ()
) -> tuple[str, str]:
    """(the instruction text, the first user message): the system message, the first user
    message's first paragraph and paragraphs naming the reply's form (with `frame`: all its
    lines but data, i.e. memories and the transcript's lines by `speakers`) and later user
    messages (corrections)."""
    said = tuple(f"{name}: " for name in speakers)
    parts: list[str] = []
    first_user = ""
    for m in messages:
        role, content = _role_content(m)
        if role == "system":
            parts.append(content)
        elif role == "user" and not first_user:
            first_user = content
            if frame:
                parts += [
                    ln
                    for ln in content.splitlines()
                    if not (_LISTED.match(ln) or (said and ln.startswith(said)))
                ]
            else:
                paragraphs = content.split("\n\n")
                parts += [paragraphs[0], *(p for p in paragraphs[1:] if "JSON" in p)]
        elif role == "user":
            parts.append(content)
    return "\n".join(parts), first_user


def _cut(text: str, phrases: Sequence[str]) -> str:
    """`text` (lower case) with each of `phrases` (the agent's own information) cut out."""
    low = " ".join(words(text))
    for p in phrases:
        low = low.replace(p, " | ")
    return low


def _correction_grams(messages: Sequence[Any]) -> frozenset[tuple[str, ...]]:
    """Every CORRECTION_WORDS words in a row of the corrections in `messages`."""
    return frozenset(
        tuple(ws[i : i + CORRECTION_WORDS])
        for text in _corrections(messages)
        for ws in (words(text),)
        for i in range(len(ws) - CORRECTION_WORDS + 1)
    )


def _corrections(messages: Sequence[Any]) -> list[str]:
    """The corrections a re-ask added to `messages` (CORRECTIONS, INVALID_FORM), not a
    conversation's own turns."""
    form = INVALID_FORM.split("(", 1)[0]
    known = set(CORRECTIONS.values())
    return [
        content
        for role, content in map(_role_content, messages)
        if role == "user" and (content in known or content.startswith(form))
    ]


def _role_content(m: Any) -> tuple[str, str]:
    if isinstance(m, dict):
        return str(m.get("role")), str(m.get("content"))
    return str(m.role), str(m.content)


@dataclass(frozen=True)
class Prompt:
    """What an answer must not copy: the prompt's examples, its instructions, the schema."""

    examples: frozenset[tuple[str, ...]]  # example strings of two words or more
    example_grams: frozenset[tuple[str, ...]]
    instruction_grams: frozenset[tuple[str, ...]]
    schema_grams: frozenset[tuple[str, ...]]
    own: tuple[str, ...] = ()  # the call's own information (topic, memories), words joined
    vocabulary: frozenset[str] = frozenset()  # every word of the messages (names they give)
    numbered: tuple[tuple[tuple[str, Any], ...], ...] = ()  # examples giving a number: items
    first_person_grams: frozenset[tuple[str, ...]] = frozenset()  # a frame task's, as "I"
    names: frozenset[str] = frozenset()  # words of the people's names the call is about
    labels: frozenset[tuple[str, ...]] = frozenset()  # a prompt line's words before its colon
    exact_times: frozenset[str] = frozenset()  # times with seconds, dates the messages hold
    correction_grams: frozenset[tuple[str, ...]] = frozenset()  # a re-ask's, four words each

    @classmethod
    def of(
        cls,
        messages: Sequence[Any],
        schema: dict[str, Any] | None = None,
        context: dict[str, Any] | None = None,
        task: str | None = None,
    ) -> Prompt:
        """The prompt of one json() call: its messages, the schema's JSON, and the call's
        context (an example value that is the agent's own, e.g. the activity a re-plan
        starts with, is not an example to avoid) and task (see FRAME_TASKS)."""
        speakers = [str(h[0]) for h in (context or {}).get("history") or [] if h]
        instruction, first_user = _instruction(messages, task in FRAME_TASKS, speakers)
        instruction = _without_json(instruction)  # its examples are judged as examples
        own = {words(text) for text in leaves(context or {})}
        phrases = tuple(sorted((" ".join(w) for w in own if len(w) >= 3), key=len, reverse=True))
        instruction = _cut(instruction, phrases)
        examples = {
            ws
            for obj in _json_objects(first_user)
            for text in leaves(obj)
            if len(ws := words(text)) >= 2 and ws not in own
        }
        example_grams: set[tuple[str, ...]] = set()
        for ws in examples:
            example_grams |= _grams(ws)
        blob = json.dumps(schema, sort_keys=True) if schema else "{}"
        as_me = _grams(as_said_by_me(words(instruction))) if task in FRAME_TASKS else set()
        return cls(
            examples=frozenset(examples),
            example_grams=frozenset(example_grams),
            instruction_grams=frozenset(_grams(words(instruction))),
            schema_grams=_schema_grams(blob),
            own=phrases,
            vocabulary=frozenset(w for m in messages for w in words(_role_content(m)[1])),
            numbered=tuple(
                tuple(obj.items())
                for obj in _json_objects(first_user)
                if isinstance(obj, dict) and any(map(_is_number, obj.values()))
            ),
            first_person_grams=frozenset(as_me),
            names=frozenset(w for k in _NAMED for w in words(str((context or {}).get(k) or ""))),
            labels=_labels(messages, {w for name in speakers for w in words(name)}),
            exact_times=frozenset(  # of the task's messages, not a reply being re-asked
                t
                for role, content in map(_role_content, messages)
                if role != "assistant"
                for t in _EXACT_TIME.findall(content)
            ),
            correction_grams=_correction_grams(messages),
        )

    def after(self, messages: Sequence[Any]) -> Prompt:
        """This prompt of the task's own messages, with the corrections a re-ask added to
        them in `messages` (the replies re-asked about are no part of it: a name a reply made
        up is not the task's)."""
        grams = _correction_grams(messages)
        return self if grams == self.correction_grams else replaced(self, correction_grams=grams)

    @cached_property
    def example_numbers(self) -> dict[str, Any]:
        """The numbers the prompt's examples give, by key ({"talk_to": 0})."""
        return {key: v for items in self.numbered for key, v in items if _is_number(v)}

    @cached_property
    def told(self) -> set[str]:
        """Content stems of the instructions' words (read only when an example number recurs)."""
        return _content_stems(" ".join({w for gram in self.instruction_grams for w in gram}), set())

    def numbers_copied(self, answer: dict[str, Any]) -> Failure | None:
        """An answer that is an example giving a number, with that number and no words of its
        own (each text empty, as the schema leaves a slot such as "<why, in one sentence>",
        the example's, or only words of the instructions: "talking to nobody"): the example's
        value, not the person's ({"talk_to": 0} would keep everyone silent)."""
        for example in self.numbered:
            numbers = {key: v for key, v in example if _is_number(v)}
            given = set(leaves(dict(example)))
            if all(answer.get(key) == v for key, v in numbers.items()) and all(
                not text.strip() or text in given or _content_stems(text, set()) <= self.told
                for key, v in answer.items()
                if key not in numbers
                for text in leaves(v)
            ):
                said = ", ".join(f"{key} {v}" for key, v in numbers.items())
                return Failure("copied_example", f"{said} with no words of its own")
        return None

    def copy_in(self, texts: Iterable[str]) -> Failure | None:
        """The first text that copies the example, the schema or the instructions, or takes
        four words in a row from a re-ask's correction ("The person from outside, who is
        32")."""
        for text in texts:
            ws = words(text)
            if echoed := self._correction_in(ws):
                return Failure("copied_prompt", f"the correction's {' '.join(echoed)!r}")
            if ws in self.examples or _copied(ws, self.example_grams):
                return Failure("copied_example", text)
            if _copied(ws, self.schema_grams):
                return Failure("echoed_schema", text)
            rest = words(_cut(text, self.own)) if self.own else ws  # the agent's own news
            if _copied(rest, self.instruction_grams):  # may be passed on; the frame may not
                return Failure("copied_prompt", text)
            if self.restated(text):
                return Failure("copied_prompt", text)
            if label := self.label_in(text):
                return Failure("copied_prompt", f"the prompt's label {label!r}: {text[:60]!r}")
        return None

    def _correction_in(self, ws: Sequence[str]) -> tuple[str, ...] | None:
        """The first CORRECTION_WORDS words in a row of `ws` that a re-ask's correction holds."""
        if not self.correction_grams:  # no re-ask: nothing to look for
            return None
        grams = (tuple(ws[i : i + CORRECTION_WORDS]) for i in range(len(ws)))
        return next((g for g in grams if g in self.correction_grams), None)

    def label_in(self, text: str) -> str | None:
        """A label of the prompt, or its last three words or more, with its colon in `text`
        ("The people Ann meets: 1. Ben", "Ann could tell: nothing"), or a text that is a label
        alone: the prompt's layout written back, not words of the person's."""
        if words(text) in self.labels:  # the label alone: "the people Umar Lopez meets"
            return text.strip()
        for segment in _LABELLED.findall(text):
            ws = words(segment)
            n = len(ws)
            if ws in self.labels or (n >= 3 and any(label[-n:] == ws for label in self.labels)):
                return segment.strip()
        return None

    def restated(self, text: str) -> bool:
        """Whether a sentence of `text` is the frame told as "I" ("I am a male, aged 45."):
        the self-description read back, not a thought or a line of the person's own."""
        sentences = _SENTENCE_END.split(text) if self.first_person_grams else ()
        said = ([w for w in words(s) if w not in self.names] for s in sentences)  # "I am Ann."
        return any(_copied(ws, self.first_person_grams) for ws in said)


_LABELLED = re.compile(r"([^.!?:\n]+):")  # a clause that ends on a colon


def _labels(messages: Sequence[Any], speakers: Set[str]) -> frozenset[tuple[str, ...]]:
    """The words before the colon of each prompt line that opens on a label of two words or
    more ("The people Ann meets:", "News Ann could tell:"); not a transcript's speakers."""
    found = set()
    for m in messages:
        for line in _role_content(m)[1].splitlines():
            head, colon, _ = line.partition(":")
            ws = words(head)
            if colon and 2 <= len(ws) <= 8 and not _LISTED.match(line) and not set(ws) <= speakers:
                found.add(ws)
    return frozenset(found)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_counting(scores: Sequence[int]) -> bool:
    """Whether four or more ratings count instead of rate, up or down: 1, 2, 3, 4 or 10, 9, 8,
    7 (every step ±1 the same way, or all but one step for five or more ratings, e.g. 10, 1,
    2, 3, 4, 5; or, for six or more, every step once one rating is left out: 2, 1, 3, 4, 5, 6;
    or, in a longer batch, seven ratings in a row that count: 10, 9, ..., 1, 1, 8, 7, 6)."""
    n = len(scores)
    if n < 4:
        return False
    for step in (1, -1):
        steps = [b == a + step for a, b in pairwise(scores)]
        run = sum(steps)
        if run == n - 1 or (n >= 5 and run >= n - 2):
            return True
        if max((len(list(g)) for counts, g in groupby(steps) if counts), default=0) >= 6:
            return True
        rests = ([*scores[:i], *scores[i + 1 :]] for i in range(n))
        if n >= 6 and any(all(b == a + step for a, b in pairwise(r)) for r in rests):
            return True
    return False


def repeated_cycle(scores: Sequence[int], items: Sequence[str]) -> int | None:
    """The length of a cycle of three or more different ratings that the batch's next four or
    more ratings repeat, over items that do not repeat with it (10, 4, 2, 9, 3, 5, 6, 7, 8,
    10, 4, 2, 9, 3 for plans, thoughts and a divorce): a pattern, not ratings; else None."""
    n = len(scores)
    if len(items) != n:
        return None
    for p in range(2, n - 3):
        if len(set(scores[:p])) < 3 or any(scores[i] != scores[i + p] for i in range(n - p)):
            continue
        if any(_overlap(items[i], items[i + p]) < 0.5 for i in range(n - p)):
            return p
    return None


def _overlap(a: str, b: str) -> float:
    """The share of two texts' words that both hold (Jaccard)."""
    x, y = set(words(a)), set(words(b))
    return len(x & y) / max(1, len(x | y))


def tiles_hour(steps: Sequence[tuple[int, int]]) -> bool:
    """Whether (minute, duration) steps, in minute order, fill the hour end to end."""
    end = 0
    for minute, duration in sorted(steps):
        if minute != end or duration < 1:
            return False
        end = minute + duration
    return end == 60


def _importance(value: Any, ctx: dict[str, Any]) -> Failure | None:
    results = getattr(value, "results", None)
    if results is None:
        return None
    scores = [int(getattr(r, "score", 0)) for r in results]
    if is_counting(scores):
        return Failure("counting", ", ".join(map(str, scores)))
    if (cycle := repeated_cycle(scores, [str(x) for x in ctx.get("items") or ()])) is not None:
        return Failure("counting", f"a cycle of {cycle} ratings: {', '.join(map(str, scores))}")
    anchors = ctx.get("anchors")
    if anchors:
        low, high = (scores[i] for i in anchors)
        if low > MUNDANE_MAX or high < POIGNANT_MIN:
            return Failure("missed_anchor", f"mundane rated {low}, poignant rated {high}")
    return None


def _contradiction(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A batch's attention checks, in order plain contradiction, unrelated pair, and so on:
    each contradiction judged one, each unrelated pair not."""
    results, anchors = getattr(value, "results", None), ctx.get("anchors")
    if results is None or not anchors:
        return None
    said = [bool(getattr(results[i], "contradictory", False)) for i in anchors]
    plainly = [k % 2 == 0 for k in range(len(said))]
    if said != plainly:
        return Failure("missed_check", f"checks judged {said}, plainly {plainly}")
    return None


def _day_plan(value: Any, ctx: dict[str, Any]) -> Failure | None:
    items = getattr(value, "items", None) or []
    if len(items) < MIN_DAY_ITEMS:
        return Failure("incomplete", f"{len(items)} items")
    hours = sorted(int(i.start_hour) for i in items)
    if hours[-1] - hours[0] < MIN_DAY_HOURS:  # "0:00 food, 1:00 meditation, 2:00 exercise"
        return Failure("incomplete", f"{hours[0]}:00 to {hours[-1]}:00 only")
    return _plan(value, ctx)


def _plan(value: Any, ctx: dict[str, Any]) -> Failure | None:
    items = getattr(value, "items", None) or []
    energy = (ctx.get("needs") or {}).get("energy")
    for item in items:
        when = f"{item.start_hour}:00 {item.activity}"
        ws = words(item.activity)
        if ws and all(w in _NOT_DEEDS or w.isdigit() for w in ws):
            return Failure("copied_prompt", when)
        asleep = _SLEEP.search(item.activity) and item.start_hour in DAYTIME
        if asleep and isinstance(energy, int | float) and energy >= RESTED:
            return Failure("contradiction", when)
        meal = next((m for m in MEAL_HOURS if m in ws), None)
        if meal is not None and item.start_hour not in MEAL_HOURS[meal]:
            return Failure("contradiction", when)
    known = [words(p) for p in ctx.get("places") or [] if p]
    if known:
        for item in items:
            where = " ".join(words(item.location))
            if not any(" ".join(k) in where for k in known if k):
                return Failure("unknown_place", item.location)
    return None


def _hour(value: Any, ctx: dict[str, Any]) -> Failure | None:
    steps = getattr(value, "steps", None) or []
    pairs = [(s.minute, s.duration_min) for s in steps]
    if not tiles_hour(pairs):
        return Failure("not_tiled", "; ".join(f"{m}+{d}" for m, d in sorted(pairs)))
    return None


# Verbs after the speaker's full name, or the listener's in a line with no "I" or "you", that
# make a line narration about them ("Ann Lee is going to relax", said by Ann Lee or to
# her), not something one says.
_PERSONAL = frozenset("i me my mine we us our you your yours".split())
_OF_THE_TASK = re.compile(r"\butterances?\b", re.IGNORECASE)  # the prompt's word for a line


# Words of a line that only announces the scene ("The end of the conversation.").
_SCENE = frozenset(
    "end ends ended ending conversation dialogue chat talk scene over fin exit exits pause "
    "silence start starts begin begins beginning".split()
)
# Words of a line that only acts, in no marks ("Sigh", "Nods and smiles"): a gesture, not speech.
_GESTURES = frozenset(
    "sigh sighs sighed nod nods nodded shrug shrugs shrugged smile smiles smiled grin grins "
    "grinned laugh laughs laughed chuckle chuckles chuckled giggle giggles wink winks winked "
    "wave waves waved yawn yawns yawned cough coughs coughed gasp gasps gasped frown frowns "
    "frowned blush blushes blushed".split()
)
_ACTED = re.compile(r"^\s*(\*[^*]*\*|\([^)]*\))\s*$")  # "*waves*", "(smiles)"
# A direction set in brackets inside a line: whom it is said to ("(to Dan Ito)", "[turning to
# Ann]"), as a script writes it.
_ASIDE = re.compile(
    r"[(\[](?:to|at|towards|turning to|looking at|aside to) [A-Z][a-z]+(?: [A-Z][a-z]+)?[)\]]"
)


_TOPIC_OF = re.compile(
    r"\b(?:topic|subject) of (?:the|this|our) (?:conversation|dialogue|chat)\b", re.I
)


def _stage_direction(line: str) -> bool:
    """Whether a dialogue line is a stage direction, not speech: an action set apart in
    asterisks or parentheses (a whole line in brackets is filler, rejected on validation), whom
    a line is said to in brackets ("(to Dan Ito)"), or words announcing the conversation
    itself ("The topic of the conversation is: ...") or nothing but acting it ("Sigh")."""
    if _ACTED.match(line) or _TOPIC_OF.search(line):  # "The topic of the conversation is: ..."
        return True
    if _ASIDE.search(line):  # "Do you want to tell me about it? (to Dan Ito) Come on."
        return True
    said = [w for w in words(line) if w not in _UNSAID]
    return bool(said) and (all(w in _SCENE for w in said) or all(w in _GESTURES for w in said))


def _turn(value: Any, ctx: dict[str, Any]) -> Failure | None:
    line = str(getattr(value, "utterance", ""))
    if _stage_direction(line):
        return Failure("stage_direction", line)
    if found := captions(line):  # "He is looking at the camera": a picture described
        return Failure("stage_direction", f"a caption, {found!r}: {line[:80]!r}")
    for name in (ctx.get("speaker"), ctx.get("listener")):
        if name and line.strip().lower().startswith(f"{str(name).lower()}:"):
            return Failure("copied_prompt", line)  # the transcript's form, not an utterance
    if _OF_THE_TASK.search(line):  # "Leo Moore's next utterance is about the work schedule"
        return Failure("copied_prompt", line)
    speaker = str(ctx.get("speaker") or "").strip()
    listener = str(ctx.get("listener") or "").strip()
    said = words(line)
    told = listener if not _PERSONAL.intersection(said) else ""  # "..., you said?"
    for person in (speaker, told):
        if " " in person and re.search(  # a full name: a first name alone may be another's
            rf"\b{re.escape(person)}\s+(?:{NARRATING})\b", line, re.IGNORECASE
        ):
            return Failure("narrated", line)
    if " " in speaker and _own_memory_read(said, words(speaker), ctx.get("memories") or ()):
        return Failure("narrated", line)
    if only_names(said, ctx):
        return Failure("empty", f"only a name: {line[:60]!r}")
    if not ctx.get("history") and _stray_word(line, ctx):
        return Failure("empty", f"one word, of nothing at hand: {line[:40]!r}")
    if own := _called_by_own_name(line, speaker, listener):  # "..., Tara Nagy." by Tara
        return Failure("not_first_person", f"said to {own}, the one speaking: {line[:60]!r}")
    if names_self(line, speaker):  # "I had a talk with Jon Khan", said by Jon Khan
        return Failure("narrated", f"the speaker's own name: {line[:60]!r}")
    for entry in ctx.get("history") or []:
        before = words(str(entry[-1] if isinstance(entry, list | tuple) else entry))
        if said and (said == before or (_copied(said, _grams(before)) and len(before) >= 4)):
            return Failure("repeated_line", " ".join(said))
    return None


# One-word openers a person says to anyone: greetings, answers, thanks, calls for attention.
_OPENERS = frozenset(
    "hi hello hey hiya howdy morning evening afternoon yes no yeah yep nope okay ok sure thanks "
    "sorry bye goodbye listen look wait help excuse pardon welcome congratulations cheers".split()
)


def _stray_word(line: str, ctx: dict[str, Any]) -> bool:
    """A conversation opened on one word that is no greeting or call, neither asked nor
    exclaimed, and of nothing the speaker has at hand ("Soccer", "Lasenada" in a hurricane
    warning's hour): a word, not a line."""
    said = words(line)
    if len(said) != 1 or line.rstrip().endswith(("?", "!")) or said[0] in _OPENERS:
        return False
    at_hand = " ".join(str(m) for m in ctx.get("memories") or ())
    at_hand += f" {ctx.get('topic') or ''} {ctx.get('listener') or ''} {ctx.get('speaker') or ''}"
    return said[0] not in words(at_hand)


def _own_memory_read(said: Sequence[str], name: Sequence[str], memories: Iterable[Any]) -> bool:
    """Whether a line reads out a memory of the speaker's as the prompt words it, by the full
    name and two words or more after it ("Will Quinn's plan for 13:00: 13:00 work" from
    "Will Quinn's plan for 13:00: 13:00 work (60 min)"): the memory list, not speech."""
    n = len(name)
    runs = {
        tuple(said[i : i + n + 2])
        for i in range(len(said) - n - 1)
        if tuple(said[i : i + n]) == name
    }
    if not runs:
        return False
    for memory in memories:
        ws = words(str(memory))
        if any(tuple(ws[i : i + n + 2]) in runs for i in range(len(ws) - n - 1)):
            return True
    return False


OPPOSITE = 0.5  # tones at least this far from 0 on opposite sides contradict each other
_WARM = frozenset(
    "thanks thank glad great love lovely nice happy wonderful agree kind enjoy enjoyed "
    "pleasure friend welcome good".split()
)
_HOSTILE = frozenset(
    "hate angry stupid idiot liar shut awful terrible disagree annoying rude leave "
    "furious disgusting worst".split()
)
MIN_TONE_WORDS = 2  # fewer tone words than this in a transcript give no signal


def transcript_tone(lines: Iterable[str]) -> float | None:
    """The transcript's own tone (-1 hostile .. 1 warm) from its warm and hostile words, or
    None when it holds too few of them to tell."""
    ws = [w for line in lines for w in words(line)]
    warm = sum(w in _WARM for w in ws)
    hostile = sum(w in _HOSTILE for w in ws)
    if warm + hostile < MIN_TONE_WORDS:
        return None
    return (warm - hostile) / (warm + hostile)


def opposite(a: float, b: float) -> bool:
    """Whether two tones are clearly on opposite sides (one warm, one hostile)."""
    return a * b < 0 and min(abs(a), abs(b)) >= OPPOSITE


def _summary(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A summary's tone against the other side's summary of the same conversation when the
    call site has it (`other_tone`), else against the transcript's own tone (`lines`): the
    two sides of a routed conversation are summarised concurrently, each without the
    other's answer, but both from the same transcript, so agreeing with it keeps them
    consistent."""
    tone = getattr(value, "tone", None)
    if isinstance(tone, int | float):
        other = ctx.get("other_tone")
        if isinstance(other, int | float) and opposite(float(tone), float(other)):
            return Failure("opposite_tone", f"tone {tone:+.1f} vs the other side's {other:+.1f}")
        signal = transcript_tone(str(x) for x in ctx.get("lines") or [])
        if signal is not None and opposite(float(tone), signal):
            return Failure("opposite_tone", f"tone {tone:+.1f} vs the transcript's {signal:+.1f}")
    summary = str(getattr(value, "summary", ""))
    if only_names(words(summary), ctx):  # "Hugo Ito, 2014-07-31 9:56 Cleo"
        return Failure("empty", f"only names: {summary[:60]!r}")
    if (line := _read_back_line(summary, ctx)) is not None:
        return Failure("copied_prompt", f"a line read back: {line[:60]!r}")
    if (line := _taken_as_mine(summary, ctx)) is not None:
        return Failure("misattributed", f"the other's line as one's own: {line[:60]!r}")
    return _grounded(value, ctx) or _heading(summary) or _people(value, ctx)


def _heading(summary: str) -> Failure | None:
    """A summary opening on a label of someone's, as the prompt lays out its lines ("Hugo
    Evans's relationship with Dan Quinn: ..."); "Ann's plan was simple: ..." says something."""
    heading = _HEADING.match(summary)
    if heading is None or _A_VERB.search(heading.group()):
        return None
    return Failure("copied_prompt", f"a heading, as the prompt's: {heading.group()!r}")


# A summary opening on a label of someone's, in the prompt's words ("Hugo Evans's
# relationship with Dan Quinn:", "Eva Lopez's conversation with Yara Quinn:"); "Ben's news:
# the bridge is closed" is a note of one's own.
_HEADING = re.compile(
    r"\s*[A-Z][a-z]+(?: [A-Z][a-z]+)?'s (?:relationship|conversation|interaction|response|"
    r"speech|summary|mood|point of view)\b(?: [\w,'-]+){0,6}?:(?!\d)(?=\s*\S)"  # bare: empty
)
_A_VERB = re.compile(r"\b(?:is|was|were|are|has|had|will|seems?|seemed|became|went)\b")

_THEM = frozenset("he she they him her them his their".split())
_CLAUSES = re.compile(r"[.!?;]+")
_QUOTING = re.compile('[:"\u201c\u201d]')


def _taken_as_mine(summary: str, ctx: dict[str, Any]) -> str | None:
    """The line of the other speaker (`heard`, said as "I") that a sentence of the summary
    says as "I", naming neither them nor a "he" or "she": four words in a row of that line,
    two of them content words, that one's own lines do not hold ("I just wanted to eat and
    go home" after the other's "I want to eat and go home!"), or None: the other's words
    remembered as one's own."""
    heard = [str(x) for x in ctx.get("heard") or []]
    other = set(words(str(ctx.get("other") or "")))
    quoting = _QUOTING.search(summary) or (
        other & set(words(summary)) and _content_stems(summary, set()) & _SAYING
    )
    if not heard or quoting:  # "Zed said: I want to go home": the words given as theirs
        return None
    own = [str(x) for x in ctx.get("lines") or [] if str(x) not in heard]
    mine = {g for x in own for g in _four(words(x))}
    for sentence in _CLAUSES.split(summary):
        ws = words(sentence)
        if "i" not in ws or set(ws) & (other | _THEM):
            continue
        said = _four(ws) - mine
        for line in heard:
            theirs = words(line)
            shared = said & _four(theirs) if "i" in theirs else set()
            if any(sum(len(w) > 2 and w not in _UNSAID for w in g) >= 2 for g in shared):
                return line
    return None


def _four(ws: Sequence[str]) -> set[tuple[str, ...]]:
    """The runs of four words of `ws`."""
    return {tuple(ws[i : i + 4]) for i in range(len(ws) - 3)}


def _read_back_line(summary: str, ctx: dict[str, Any]) -> str | None:
    """The transcript line (three words or more) that a summary quotes with nothing of its
    own around it but a verb of saying ("When I said: Sorry, I have to go."), or None."""
    said = f" {' '.join(words(summary))} "
    names = _speakers(ctx)
    for line in (str(x) for x in ctx.get("lines") or []):
        ws = words(line)
        quoted = f" {' '.join(ws)} "
        if len(ws) >= 3 and quoted in said:  # what the summary holds besides the line
            own = _content_stems(said.replace(quoted, " "), names) - _SAYING
            if not own:
                return line
    return None


def _speakers(ctx: dict[str, Any]) -> set[str]:
    """The words of the two speakers' names (`name`, `other`) of a conversation's context."""
    return {w for key in ("name", "other") for w in words(str(ctx.get(key) or ""))}


_ENDING = re.compile(r"(?<=\w{3})(?:ing|ed|es|s)$")  # "posts", "posted", "posting": one word
_SAYING = frozenset(  # verbs of saying, as `_content_stems` gives them
    {_ENDING.sub("", w)[:STEM] for w in "said say says told tell tells asked ask spoke".split()}
)


def _content_stems(text: str, names: Set[str]) -> set[str]:
    """Stems of `text`'s words that say something: no function word, none of `names`."""
    skip = _UNSAID | names
    return {_ENDING.sub("", w)[:STEM] for w in words(text) if len(w) > 2 and w not in skip}


def _grounded(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A summary of a conversation that was had (`lines`) names something of it: a word of
    what was said or of its place besides the two speakers' names, or of its topic when the
    lines speak of it (a talk cut short never reached its topic); a bare label ("Ann Lee's
    speech:") or a restated instruction says nothing that happened."""
    lines = [str(x) for x in ctx.get("lines") or []]
    if not lines:
        return None
    names = _speakers(ctx)
    said = _content_stems(" ".join([*lines, str(ctx.get("place") or "")]), names)
    topic = _content_stems(str(ctx.get("topic") or ""), names)
    summary = str(getattr(value, "summary", ""))
    if says_no_answer(summary):
        return Failure("no_answer", summary)
    if _content_stems(summary, names) & (said | topic if topic & said else said):
        return None
    return Failure("ungrounded", summary)


DAYS_MONTHS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december".split()
)
# Words after which a capitalised word names a person ("talked with Zed").
_PERSON_CUES = frozenset("with told tell met ask asked saw call called dear mr mrs ms dr".split())
_CAP = re.compile(r"[A-Z][a-z]+(?:'s)?")
# Capitalised words that may tell me something without being a name ("Someone told me").
_NO_NAMES = frozenset(
    "someone somebody everyone everybody nobody he she they it mom mum dad life time today "
    "yesterday tomorrow experience history".split()
)
_TOKEN = re.compile(r"[A-Za-z']+|[.!?;:]")


def unknown_people(text: str, allowed: Set[str]) -> list[str]:
    """Capitalised names in `text` that are no word of `allowed` (lower case: known people,
    places, the prompt's words, the speaker's own name): a run of two capitalised words
    ("Zed Quill"), one after a person cue ("met Zed") or one that told me something ("Sarah
    told me: Hello!", as the memory list writes it); a sentence's first word alone, days and
    months are no names."""
    out: list[str] = []
    tokens = _TOKEN.findall(text)
    i = 0
    while i < len(tokens):
        run: list[str] = []
        while i + len(run) < len(tokens) and _CAP.fullmatch(tokens[i + len(run)]):
            run.append(tokens[i + len(run)].removesuffix("'s"))
        if not run:
            i += 1
            continue
        before = tokens[i - 1].lower() if i else "."
        after = [t.lower() for t in tokens[i + len(run) : i + len(run) + 2]]
        told = len(run) == 1 and after == ["told", "me"] and run[0].lower() not in _NO_NAMES
        # A sentence's first word may be any word, but the one that "told me" something.
        rest = run[1:] if before in ".!?;:" and not told else run
        named = len(rest) >= 2 or (
            len(rest) == 1 and (len(run) == 2 or before in _PERSON_CUES or told)
        )
        known = any(w.lower() in allowed or w.lower() in DAYS_MONTHS for w in rest)
        if rest and named and not known:
            out.append(" ".join(rest))
        i += len(run)
    return out


class Population(tuple[str, ...]):
    """A population's plain names (a call context's `people`), with their hash and words made
    once: a call that carries them costs the same whatever the population's size."""

    @cached_property
    def digest(self) -> str:
        """The names' hash, which stands for them in a rules seed."""
        return hashlib.sha256(json.dumps(list(self), ensure_ascii=False).encode()).hexdigest()

    @cached_property
    def name_words(self) -> frozenset[str]:
        """Every word of every name: what an answer may name."""
        return frozenset(w for name in self for w in words(name))


def only_names(said: Sequence[str], ctx: dict[str, Any]) -> bool:
    """Whether two or more words are names and numbers only ("Liam Lopez", "9:20 Cleo"):
    someone named, nothing said."""
    named = {w for w in said if not w.isdigit()}
    return len(said) >= 2 and named <= _name_words(ctx)


def _name_words(ctx: dict[str, Any]) -> set[str]:
    """The words of the population's names (`people`) and of the people the call names."""
    people = ctx.get("people") or ()
    if isinstance(people, Population):
        found = set(people.name_words)
    else:
        found = {w for name in people for w in words(str(name))}
    for key in _NAMED:
        found |= set(words(str(ctx.get(key) or "")))
    return found


def _people(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A person named in the answer who is neither in the population (`people`) nor in the
    prompt; checked only where the call site passes the population's plain names."""
    if not ctx.get("people"):
        return None
    allowed = _name_words(ctx)
    for key in ("other", "place", "topic"):
        allowed |= set(words(str(ctx.get(key) or "")))
    for p in ctx.get("places") or []:
        allowed |= set(words(str(p)))
    allowed |= set(ctx.get("prompt_words") or ())
    for text in leaves(value.model_dump(mode="json")):
        found = unknown_people(text, allowed)
        if found:
            return Failure("unknown_person", found[0])
    return None


def _choice(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A field the call site restricts to listed words (`choices`: field -> words, any
    case) holding another word."""
    for key, allowed in (ctx.get("choices") or {}).items():
        given = getattr(value, key, None)
        words_allowed = {str(a).lower() for a in allowed}
        if isinstance(given, str) and given.strip().lower() not in words_allowed:
            return Failure("not_a_choice", given)
    return None


# A reply that says the respondent cannot or does not know how to answer the task.
_NO_ANSWER = re.compile(
    r"\b(?:as an ai\b|(?:not sure|unsure|don't know|do not know|cannot|can't|unable|"
    r"not allowed|not enough information|no idea)\b"
    r"[^.!?]*\b(?:answer|respond|reply|you(?:'re| are) asking|you mean)\b)",
    re.IGNORECASE,
)


# A text that speaks of the fiction itself: a character, not a real person, a model, a
# role-play, the simulation (a person may pretend, so pretending is no sign); or as an
# assistant of its own reply or of code ("I'll have to adjust the code", "I will make sure to
# add more detail about the conversation").
_OUT_OF_STORY = re.compile(
    r"\b(?:fictional|not (?:a )?real (?:person|people|human)|a character in|language model|"
    r"chatbot|as an ai|(?:i am|i'm) an ai|role-?play(?:ing)?|role playing|simulated|"
    r"this simulation|(?:adjust|fix|update|edit|change) (?:the|my|this) code|"
    r"(?:make|keep) (?:the|my|this) (?:answer|reply|response) (?:more )?"
    r"(?:concise|shorter|clearer|brief)|"
    r"(?:the|my|that) (?:answer|reply|response) (?:was|is) (?:incorrect|wrong|not correct|"
    r"incomplete|cut off|truncated)|"
    r"please provide the (?:entire|full|complete|whole) (?:story|text|answer|reply|response|"
    r"conversation)|"
    r"no (?:response|reply|answer) (?:has been|was|is) (?:generated|returned|produced|"
    r"received)|(?:no reply|no response|a reply|a response|input) from the user|"
    r"(?:reply|respond) again|repeat (?:that|this|the|my|your) (?:answer|reply|response)|"
    r"(?:add|give|provide|include) more details? (?:about|on|to|in) (?:the|this|my) "
    r"(?:conversation|answer|reply|response|utterance)|"
    r"the (?:person|user) (?:i'm|i am) (?:responding|replying|talking) to)\b",
    re.IGNORECASE,
)


def _out_of_character(
    answer: dict[str, Any], task: str | None = None, ctx: dict[str, Any] | None = None
) -> Failure | None:
    """A text that steps out of the story ("You're a fictional character in a story, and I'm
    going to pretend for now"), speaks as an assistant of its reply or code ("The answer
    was incorrect, I changed it") or to the one it serves (`assistant_speak`), or describes a
    picture (`captions`): the model, not the person."""
    prior = _answered(ctx or {})
    for text in leaves(answer):
        said = text.replace("\u2019", "'")
        if _OUT_OF_STORY.search(said):
            return Failure("out_of_character", text[:120])
        if found := assistant_speak(said, task, prior) or captions(said):
            return Failure("out_of_character", f"{found!r} in {text[:100]!r}")
    return None


def _answered(ctx: dict[str, Any]) -> str:
    """What a text of the call answers: the conversation's last line (`history`), or the
    survey's question."""
    history = ctx.get("history") or []
    if history:
        last = history[-1]
        return str(last[-1] if isinstance(last, list | tuple) else last)
    return str(ctx.get("question") or "")


# An assistant's words to the one it serves, odd in anyone's mouth in a town: thanks for the
# question or request, the hope that the reply helped, an offer of more help with questions,
# gladness to help with the question, a reply presented as such ("Here is a possible
# response"), an assistant by name.
_ASSISTANT = re.compile(
    r"\bthank(?:s| you)(?: (?:so|very) much)? for (?:your|the|this|that) "
    r"(?:question|query|inquiry|enquiry|request|prompt)s?\b|"
    r"\bhope (?:this|that|it|my (?:answer|reply|response|summary|explanation)) "
    r"(?:helps|helped|was helpful|is helpful|answers your question|clarifies)\b|"
    r"\banything else (?:that )?i (?:can|could|may) (?:help|assist) (?:you )?with\b|"
    r"\blet me know if (?:you have any (?:other |more |further |additional )?questions|"
    r"you need any (?:other |more |further |additional )?(?:help|assistance|information)|"
    r"there(?:'s| is) anything else i can|"
    r"you need anything else(?= *(?:[.!?,;]|$)))|"
    r"\bfeel free to (?:ask|reach out)(?: to me| me)?(?= *(?:[.!?,;]|$|any\b|if\b|for\b))|"
    r"\bhere(?:'s| is| are) (?:(?:a|an|the|my|your|some) )?(?:(?:possible|revised|updated|"
    r"brief|short|quick|concise|sample|suggested|detailed|final|rewritten) )?(?:answer|"
    r"response|reply|summary|rewrite|revision|draft|breakdown|overview|explanation|output|"
    r"utterance|paraphrase)s?\b|"
    r"\b(?:happy|glad|pleased|delighted) to (?:help|assist)(?: you)? with (?:(?:your|any|the|"
    r"this|that) )?(?:(?:other|more|further) )?(?:question|request|query|inquiry|enquiry)s?\b|"
    r"\b(?:happy|glad|pleased|delighted) to assist\b|"
    r"\b(?:an? |your )(?:ai|virtual|digital|helpful) assistant\b|"
    r"\b(?:task|request|query|prompt) has been (?:completed|processed|fulfilled) successfully\b",
    re.IGNORECASE,
)
# In an answer to a survey or interview, the asking called a request or a task ("No one has
# responded to this request yet"): the model speaking of its prompt.
_THE_ASKING = re.compile(
    r"\b(?:this|your) (?:request|prompt|query)\b(?! (?:for|to|of|about|from|at)\b)",
    re.IGNORECASE,
)
# An answer that opens as a task set to someone ("Demonstrate a positive mindset ...",
# "Describe the importance of ..."): an exercise's instruction written, not the person's answer.
_AN_INSTRUCTION = re.compile(
    r"\s*(?:demonstrate|describe|explain|discuss|summari[sz]e|provide|identify|outline|"
    r"analy[sz]e|illustrate|highlight|evaluate|compose|generate)\s+"
    r"(?:a|an|the|how|why|what|which|some|three|two|\d+)\b",
    re.IGNORECASE,
)
# Words between an asker and the one asked, in a text said to no one (a reflection's
# question or insight): the asker's "us" learning from "you" ("allow us to learn from you"),
# the one asked making "you" know them ("This will help you understand me"), or a request to
# be told ("Let us know ...", "Tell us about ..."): an interviewer or the one it serves, not
# a person thinking over their own life. Generic "you" ("you can't trust the radio") and the
# town's "us" ("the storm let us know how weak the levee is") tell no one.
_INTERVIEW = re.compile(
    r"\b(?:us|we)\b[^.!?]*\b(?:learn|know|understand|hear|find out)\w*(?: \w+){0,3}? "
    r"(?:from|about) you(?:rself)?\b|"
    r"\b(?:help|helps|let|lets|allow|allows|enable|enables|so|so that) you (?:to |can |will |"
    r"could )?(?:better )?(?:learn|know|understand|get to know|see)\b(?: \w+){0,3}? "
    r"(?:me|myself|who i am)\b|"
    r"(?:^|[.!?,;] *)(?:please )?(?:let (?:us|me) know|tell us|share with us)\b",
    re.IGNORECASE,
)
# A reflection's questions and insights: the person thinking over their own life, to no one.
_SAID_TO_ONESELF = frozenset({"reflection_questions", "reflection_insights"})
# Gladness to help, with no deed to help with ("I'm happy to help!", "glad to help you with
# that"): an assistant's offer, unless what it answers asked for help or thanked for it.
_HAPPY_TO_HELP = re.compile(
    r"\b(?:happy|glad|pleased|delighted|here) to (?:help|assist)(?: you)?"
    r"(?= *(?:[.!?,;]|$|if\b|today\b|out\b|with (?:that|this|anything|any)\b))",
    re.IGNORECASE,
)
# Other offers of help to "you" ("How can I help you?"), in a text that addresses no one (a
# thought, a summary, an insight): said to the one the model serves.
_OFFERS_HELP = re.compile(
    r"\bhow (?:can|may) i (?:help|assist) you\b|\bwhat can i do for you\b|"
    r"\bif you (?:need|want) (?:anything|any help)\b|"
    r"\bif you have any (?:other |more |further )?questions\b|"
    r"\bis there anything (?:else )?(?:i can|you need)\b",
    re.IGNORECASE,
)
# Feelings about news "you" gave ("I'm glad to hear that you're having a great day"): a reply
# to the one the model serves, where no line came before to hear it from.
_HEARD_FROM_YOU = re.compile(
    r"\b(?:glad|happy|sorry|pleased|sad) to hear (?:that )?you(?:'re| are|'ve| have| had)?\b",
    re.IGNORECASE,
)
# Tasks whose texts are said to someone (a line to the listener, an answer to the asker), who
# may be offered help; the other tasks' texts address no one.
_SAID_TO_SOMEONE = frozenset({"dialogue_turn", "survey", "interview"})
# Words of a line or a question that ask for help or thank for it, which gladness to help
# answers.
_HELP_ASKED = frozenset("help helping helped hand favour favor thank thanks please".split())


def assistant_speak(text: str, task: str | None = None, answered: str = "") -> str | None:
    """An assistant's words in `text` ("Thank you for your question!", "I hope this helps",
    "Let me know if you have any questions", "Sure! Here is a possible response"), gladness
    to help with no deed to help with ("I'm happy to help") unless the line or question it
    answers (`answered`) asked for help or thanked, or, in a text of a `task` that addresses
    no one, another offer of help ("How can I help you?"), or, in a text that is no line of a
    conversation, feelings about what "you" told ("I'm glad to hear that you're having a great
    day"), or, in a reflection's question or insight, words between an asker and the one
    asked ("allow us to learn from you", "This will help you understand me"); else None.
    Help offered with a deed ("I'd be happy to help you move on Saturday"), thanks for a
    thing ("Thanks for the coffee") or gladness at another's news in a line is a person's."""
    found = _ASSISTANT.search(text)
    addressed = task in _SAID_TO_SOMEONE
    if found is None and not (addressed and _HELP_ASKED.intersection(words(answered))):
        found = _HAPPY_TO_HELP.search(text)
    if found is None and not addressed:
        found = _OFFERS_HELP.search(text)
    if found is None and task != "dialogue_turn":  # only a line answers another's news
        found = _HEARD_FROM_YOU.search(text)
    if found is None and task in ("survey", "interview"):
        found = _THE_ASKING.search(text) or _AN_INSTRUCTION.match(text)
    if found is None and task in _SAID_TO_ONESELF:
        found = _INTERVIEW.search(text)
    return found.group() if found else None


# A text describing a picture or a camera shot ("He is looking at the camera", "The image
# shows two people", "In this photo, ..."): a caption, as if the task showed an image.
_CAPTION = re.compile(
    r"\b(?:looking|looks|looked|smiling|smiles|smiled|staring|stares|stared|gazing|gazes|"
    r"gazed|posing|poses|posed|facing|faces|glancing|glances|grinning|grins|waving|waves) "
    r"(?:(?:directly|straight|right|back) )?(?:at|into|to|toward|towards|for) the camera"
    r"(?= *(?:$|[.,;:!?\u2026]|and\b|while\b|with\b|as\b))|"
    r"\bthe camera (?:pans|zooms|cuts|focuses|follows|captures|shows|lingers)\b|"
    r"\b(?:close-up|closeup|wide|medium|tracking|aerial) shot of\b|"
    r"\b(?:the|this|that) (?:image|photo|photograph|picture|snapshot|shot|frame|scene) "
    r"(?:shows|showed|depicts|depicted|features|captures|portrays|is of)\b|"
    r"(?:^|[.!?] +)in (?:this|the) (?:image|photo|photograph|picture|snapshot|shot|frame)"
    r"\b(?!,? (?:i|you|we|my|your|our)\b)|"
    r"\b(?:this|it) is an? (?:image|photo|photograph|picture|snapshot) of\b|"
    r"^\W*caption\b",
    re.IGNORECASE,
)


def captions(text: str) -> str | None:
    """The words of `text` that describe a picture or a camera shot ("... looking at the
    camera", "The image shows two people", "In this photo, ..."), or None; a camera or a
    picture spoken of ("Look at the camera shop on Main Street", "I took a picture of the
    sunset") is a person's."""
    found = _CAPTION.search(text)
    return found.group().strip(" .!?") if found else None


def says_no_answer(text: str) -> bool:
    """Whether `text` declines the task ("I am not sure how to answer", "As an AI ...")."""
    return _NO_ANSWER.search(text) is not None


# A whole reply that only says there is nothing to say, or that the question is hard ("This is
# not an easy question to answer, but I'll try."): the respondent gave no answer.
_ONLY_DECLINES = re.compile(
    r"\W*(?:(?:well|hmm|sorry|honestly),?\s+)?(?:(?:i'm|i am) (?:not sure|unsure)|"
    r"i (?:don't|do not) know) (?:what|how) to (?:say|answer|respond)\W*|"
    r"\W*(?:i have |i've )?nothing to say\W*|\W*no comment\W*|"
    r"\W*no answer(?: (?:was |is )?(?:found|given|available))?\W*|"
    r"\W*(?:this|that|it)(?: is|'s) (?:not an easy|a (?:hard|difficult|tough|good)) question"
    r"(?: to answer)?(?:[,.;]? (?:but )?(?:i'll|i will|let me) try)?\W*",
    re.IGNORECASE,
)


def _talk(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A talk decision naming a person number beyond the `n` people listed, one whose reason
    declines to decide, or the prompt's example number (`prompt_example`) for no reason: its
    number is then no decision."""
    chosen, n = getattr(value, "talk_to", None), ctx.get("n")
    if isinstance(chosen, int) and isinstance(n, int) and not 0 <= chosen <= n:
        return Failure("not_a_choice", f"person {chosen} of {n}")
    reason = str(getattr(value, "reason", ""))
    if says_no_answer(reason):
        return Failure("no_answer", reason)
    example = (ctx.get("prompt_example") or {}).get("talk_to")
    said = _DIGIT_TOKEN.sub(" ", reason)  # "unrealistic-2.1; no details": a label, no reason
    unexplained = _NO_REASON.fullmatch(said) or not _LETTER_WORDS.search(said)
    if chosen == example and unexplained:  # the example's number, for no reason
        return Failure(
            "copied_example", f"person {chosen}, the example's, for no reason: {reason!r}"
        )
    meant = _talks_to(reason, [str(c.get("name", "")) for c in ctx.get("candidates") or ()])
    if meant is not None and meant != chosen:
        return Failure(
            "value_mismatch", f"person {chosen}, but the reason talks to person {meant}: {reason!r}"
        )
    return _people(value, ctx)


def _talks_to(reason: str, names: Sequence[str]) -> int | None:
    """The one listed person (1-based) whom `reason` says the agent talks to ("I'm going to
    talk to Sam Quinn"), or None: no one, several, or only in a denied clause ("I won't talk
    to Sam", "rather than chat with Sam") or one a contrast takes back ("I'd like to talk to
    Sam, but he is busy")."""
    meant: set[int] = set()
    for at, clause in enumerate(parts := _CLAUSE.split(reason)):
        for found in _TALK_TO.finditer(clause):
            if _DENIED.search(clause[: found.start()]) or any(
                _TAKEN_BACK.match(later) for later in parts[at + 1 :]
            ):
                continue
            said = found.group(1).lower().removesuffix(" i")  # "talk to Ben I think"
            whole = [i for i, name in enumerate(names, 1) if name and said == name.lower()]
            first = [i for i, name in enumerate(names, 1) if name.lower().split()[:1] == [said]]
            meant.update(whole or first)
    return meant.pop() if len(meant) == 1 else None


# A sentence, or a clause after a contrast ("Sam is busy, but ..."), kept as its own part.
_CLAUSE = re.compile(r"[.!?;]+|,? (?=(?:but|so|however|though|although|instead)\b)", re.I)
_TAKEN_BACK = re.compile(r"\s*(?:but|however|though|although|instead)\b", re.IGNORECASE)
# Talking to a named person: the verb, then up to two capitalised words.
_TALK_TO = re.compile(
    r"\b(?i:talk|talks|talking|speak|speaks|speaking|chat|chats|chatting|catch up) (?i:to|with) "
    r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)?)"
)
# Words that deny or avoid what follows in the same clause.
_DENIED = re.compile(
    r"\b(?:not|never|no|nor|without|rather than|instead of|avoid\w*|refuse\w*|"
    r"unwilling|too \w+ to)\b|n't\b",
    re.IGNORECASE,
)


# A reason that says there is none ("no reason yet", "No reason needed to be given", "no
# details").
_NO_REASON = re.compile(
    r"\W*(?:no (?:particular |real |special )?reason(?: yet| needed(?: to be given)?| given)?|"
    r"no (?:more )?(?:details?|info(?:rmation)?|explanation)(?: given)?|"
    r"nothing(?: in particular)?|none|n/a)\W*",
    re.IGNORECASE,
)
# A code rather than a word: a token with a digit in it ("unrealistic-2.1", "#3", "A1").
_DIGIT_TOKEN = re.compile(r"[^\s;,]*\d[^\s;,]*")


def _strategy(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A memory strategy setting outside its range (`ranges`: setting -> [low, high], None:
    not to be set), or the settings given all repeating the prompt's example numbers
    (`example`) where they differ from the settings now."""
    given: dict[str, Any] = {}
    for key, allowed in (ctx.get("ranges") or {}).items():
        chosen = getattr(value, key, None)
        if chosen is None:
            continue
        if not allowed or not allowed[0] <= chosen <= allowed[1]:
            return Failure("out_of_range", f"{key} {chosen} not in {allowed}")
        given[key] = chosen
    example = ctx.get("example") or {}
    copied = [k for k, v in given.items() if example.get(k) == v and ctx.get(k) != v]
    if len(copied) >= 2 and len(copied) == len(given):
        return Failure("copied_example", ", ".join(f"{k} {given[k]}" for k in copied))
    return None


_PRONOUNS = frozenset("i me my mine myself she he they her him his hers their them".split())


def _insights(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """Reflection insights that ask a question (the one put, restated, or any: "When this
    moment happens? 1. I'm going to work tomorrow."), cite none of the numbered statements
    they were drawn from, say nothing of the person (by name or pronoun) nor of a statement
    they cite ("A very important point"), name an insight without giving one ("A new insight
    about Sam Rossi"), or only restate one statement they cite with its list number ("1. Kim
    Tanaka talked with Noah Tanaka."): no insight the reflection could link (a reflection may
    arrive again at an earlier insight, so a bare restatement stays); or that is only a
    time-table, never said as "I" ("7:00 wake up, 8:00 breakfast"): the plan the statements
    list read back when they hold one, else still no insight."""
    statements = [str(x) for x in ctx.get("statements") or ()]
    n = len(statements)
    person = set(words(str(ctx.get("name") or ""))) | _PRONOUNS
    for insight in getattr(value, "insights", ()):
        text = str(insight.text).strip()
        if "?" in text:  # "When this moment happens? 1. I'm going to work tomorrow."
            return Failure("not_an_insight", text)
        if _ABOUT_AN_INSIGHT.match(text):  # "A new insight about Sam Rossi": the task's words
            return Failure("not_an_insight", f"names an insight, gives none: {text[:60]!r}")
        cited = [statements[i - 1] for i in insight.evidence if 1 <= i <= n]
        if n and not cited:
            return Failure("not_an_insight", f"{text[:60]!r} cites {insight.evidence} of {n}")
        stems, own = _content_stems(" ".join(cited), set()), _content_stems(text, set())
        if n and not (person & set(words(text)) or stems & own):
            return Failure("not_an_insight", f"{text[:60]!r} says nothing of its statements")
        listed = _LISTED.match(text)  # "1. ...": the statement list's own line, numbered
        if listed and own and any(own <= _content_stems(c, set()) for c in cited):
            return Failure("not_an_insight", f"{text[:60]!r} only restates a statement")
        if _TIMETABLE.fullmatch(text) and not _SELF.intersection(words(text)):
            timed = any(CLOCK.search(s) for s in statements)  # the plan the prompt lists
            kind = "copied_prompt" if timed else "not_an_insight"
            return Failure(kind, f"a time-table, not an insight: {text[:60]!r}")
    return _people(value, ctx)


# A text of timed items only ("7:00 wake up, 8:00 breakfast", "At 9:00 work; then 18:00
# dinner."): a plan's time-table, which says nothing of what the person learned.
_TIMETABLE = re.compile(
    r"\W*(?:at )?\d{1,2}:\d{2}\b[^,;.]*"
    r"(?:[,;.] *(?:and |then )?(?:at )?\d{1,2}:\d{2}\b[^,;.]*)+\W*",
    re.IGNORECASE,
)


_ABOUT_AN_INSIGHT = re.compile(
    r"\W*(?:an? |the |my |one )?(?:new |high-level |key |detailed |short |full |good )?"
    r"(?:insights?|answers? to the question) (?:about|into|on|of|for)\b[^.,;:]*\W*$",
    re.IGNORECASE,
)

MAX_RELATION_WORDS = 6  # "is worried about", "went to", "works at the": a fact's relation


def _facts(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """Fact triples that are no triple: a relation that is a sentence (too long, or ending
    one) or repeats the subject or the object, or a subject that is its own object."""
    for fact in getattr(value, "facts", ()):
        parts = (fact.subject, fact.relation, fact.object)
        subject, relation, obj = (str(x).strip().lower() for x in parts)
        sentence = len(words(relation)) > MAX_RELATION_WORDS or relation.endswith((".", "!", "?"))
        if sentence or relation in (subject, obj) or subject == obj:
            return Failure("not_a_fact", f"{subject!r} {relation!r} {obj!r}"[:120])
    return _people(value, ctx)


def _stance(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """An attitude whose reason speaks of neither its topic nor anything the person saw or
    heard (`recent`): a stance no memory supports ("This is your story: ...", or with nothing
    recent "You are a female, aged 58"); or whose reason only names its topic ("The flood
    barrier."), which says nothing of it; or one told to "you", never as "I"; or one whose
    words about the topic lean the other way than its value ("I am strongly opposed to
    carbon tax" as 10 of 10). An empty reason leaves the attitude on its own."""
    reason = str(getattr(value, "reason", "")).strip()
    recent = [str(x) for x in ctx.get("recent") or []]
    topic = str(ctx.get("topic") or "")
    if reason and (recent or topic):
        if says_no_answer(reason):
            return Failure("no_answer", reason)
        names = set(words(str(ctx.get("name") or "")))
        said, about = _content_stems(reason, names), _content_stems(topic, names)
        if not said & _content_stems(" ".join([*recent, topic]), names):
            return Failure("unfounded", reason[:120])
        if about and not said - about:
            return Failure("unfounded", f"only its topic: {reason[:100]}")
    if addressed(reason, "") or _told_to_you(reason):  # "Your attitude is against ...": the
        return Failure("not_first_person", reason[:120])  # prompt's voice, not the person's
    named = set(words(topic)) - FUNCTION_WORDS  # the clauses of the reason about the topic
    about_it = [c for c in _CLAUSES.split(reason) if named and named <= set(words(c))]
    lean, attitude = leaning(". ".join(about_it)), getattr(value, "attitude", None)
    if isinstance(attitude, int | float) and lean and (attitude - MIDDLE) * lean <= -LEANS:
        return Failure("value_mismatch", f"words {'for' if lean > 0 else 'against'}, {attitude:g}")
    return _people(value, ctx)


MIDDLE, LEANS = 5.0, 1.0  # an attitude's middle, and how far from it a stance leans


def _told_to_you(reason: str) -> bool:
    """Whether a reason with no "I", "my" or "we" in it has a sentence opening on what "you"
    hold or want, or on "your" stance ("You oppose carbon tax: it is bad and harmful", "You
    need to know about the topic"): the prompt's "you" kept, not the person's own reason; a
    generic "you" ("You can't ignore the science.") is one."""
    said = words(reason.replace("\u2019", "'"))
    if _OWN_WORDS.intersection(said):
        return False
    return any(_YOUR_STANCE.match(sentence) for sentence in re.split(r"[.!?;:]\s+", reason))


_YOUR_STANCE = re.compile(
    r"\W*(?:you (?:(?:do not|don't|really|strongly) )?(?:oppose|support|want|like|dislike|"
    r"believe|think|feel|favou?r|agree|disagree|need to know|should know|have to know)\b|"
    r"your (?:attitude|stance|view|opinion|position|rating)\b)",
    re.IGNORECASE,
)
_OWN_WORDS = frozenset("i me my mine myself we us our ours".split())  # words() splits "I'm"


def _survey(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A survey or interview answer that does not answer its question (survey_checks), one
    that declines to, or one that opens by calling someone of the town by name ("Gia,
    welcome to our home.", "Hi Kai, I wanted ...") or on their name and a colon ("Eva Evans:
    ... she explained"): words said to them or a transcript's line, not the person's answer
    to the asker."""
    answer = str(getattr(value, "answer", ""))
    if says_no_answer(answer) or _ONLY_DECLINES.fullmatch(answer.replace("\u2019", "'")):
        return Failure("no_answer", answer)
    called = _CALLED.match(answer)
    if called and ctx.get("people") and set(words(called.group(1))) <= _name_words(ctx):
        if called.group(2) == ":":  # "Eva Evans: ... she explained": a transcript's line
            return Failure("narrated", f"a line of {called.group(1)}'s: {answer[:60]!r}")
        return Failure("not_first_person", f"said to {called.group(1)}: {answer[:60]!r}")
    if own := _called_by_own_name(answer, str(ctx.get("name") or "")):
        return Failure("not_first_person", f"said to {own}, the one answering: {answer[:60]!r}")
    problem = answer_problem(answer, getattr(value, "value", None), ctx)
    told = problem is not None and problem[0] == "not_first_person"  # "You are not a real ..."
    if told and (stepped_out := _out_of_character({"answer": answer}, "survey", ctx)):
        return stepped_out  # the model speaking, which says more than "not as I"
    return Failure(*problem) if problem is not None else _people(value, ctx)


# "Gia, ...", "Hi Kai, ...", "Hey Kai! ...", "Eva Evans: ...".
_CALLED = re.compile(r"\s*(?:(?i:hi|hello|hey|dear)\s+)?([A-Z][a-z]+(?: [A-Z][a-z]+)?)([,:!])")
# A name called at the start ("Finn, ...", "Hi Finn! ..."), not one said to be oneself ("Ann
# Lee, that is me").
_CALLED_FIRST = re.compile(
    r"\s*(?:(?i:hi|hello|hey|dear)\s+)?([A-Z][a-z]+(?: [A-Z][a-z]+)?)[,!]"
    r"(?! *(?i:that is|that's|it is|it's|this is) me\b)"
)
# A name set off by a comma at the end of a clause ("... bought some pizza, Sam."): called.
_CALLED_AFTER = re.compile(r",\s*([A-Z][a-z]+(?: [A-Z][a-z]+)?)\s*(?=[.!?;]|$)")


def _called_by_own_name(answer: str, name: str, other: str = "") -> str | None:
    """The answerer's own name (first or full) when the answer calls them by it, after a
    comma ("I went to the mall, Sam.") or opening on it ("Finn, I'm looking forward to your
    lunch", by Finn Patel): the model talking to the person it should speak as; an appositive
    ("my friend, Ana") names another, never oneself, and a first name the one spoken to
    (`other`) shares calls them."""
    own = words(name)
    if not own:
        return None
    theirs = words(other)[:1]
    opening = _CALLED_FIRST.match(answer)
    for found in (*_CALLED_AFTER.finditer(answer), *([opening] if opening else [])):
        called = words(found.group(1))
        if called in (own, own[:1]) and called != theirs:
            return found.group(1)
    return None


def _thought_checks(value: Any, ctx: dict[str, Any]) -> Failure | None:
    return _choice(value, ctx) or _own_thought(value, ctx) or _people(value, ctx)


def _own_thought(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A thought is the person's own words: a list of capitalised words ("Love, Hate,
    Reprehensure, Hope") or of the prompt's emotion words alone, after a label or not
    ("Likely: Love, Joy"), is the prompt's emotions listed; one that tells of them by full name
    and never as "I" ("Gia Diaz's emotional state now: 0.4, she is very happy") is a report
    from outside; one told to "you" and never as "I" ("You are going to relax at home, ...
    you will have breakfast"), that asks "you" and never says "I" ("What are you talking
    about?") or that comforts "you" ("I can only imagine how difficult it must be for you")
    is the prompt's voice going on, or the model answering it; one with hashtags is a post."""
    thought = str(getattr(value, "thought", ""))
    if narrates(thought, str(ctx.get("name") or "")):
        return Failure("narrated", thought)
    items = [x.strip(" .") for x in re.split(r"[,;]", thought) if x.strip(" .")]
    if len(items) >= 3 and all(_CAPITALISED.fullmatch(x) for x in items):  # "Love, Hate, Hope"
        return Failure("copied_prompt", f"a list of words, not a thought: {thought[:60]!r}")
    emotions = {str(w).lower() for w in (ctx.get("choices") or {}).get("emotion") or ()}
    said = words(_LABEL.sub("", thought, count=1))
    if emotions and said and set(said) <= emotions:  # "Likely: Love, Joy"
        return Failure("copied_prompt", f"emotion words, not a thought: {thought[:60]!r}")
    if addressed(thought, "") or _asks_you(thought) or _CONSOLES.search(thought.lower()):
        return Failure("not_first_person", thought[:120])
    if _HASHTAG.search(thought):  # "... May You Live forever! #LoveMatters #FaithfulFamily"
        return Failure("out_of_character", f"a post's hashtags, not a thought: {thought[:60]!r}")
    return None


# Comfort offered to "you" ("I can only imagine how difficult it must be for you"): an answer
# to someone, not a thought of one's own.
_CONSOLES = re.compile(r"\bi can only imagine how \w+ (?:it|this|that) (?:must be|is) for you\b")
_CAPITALISED = re.compile(r"[A-Z][a-z]*")  # "Love", or "E" where the list was cut
_HASHTAG = re.compile(r"(?<![\w&])#[A-Za-z]\w*")  # "#LoveMatters"; not "#1" nor "&#39;"
_LABEL = re.compile(r"\s*[A-Za-z]+:\s")  # "Likely: ...": a word and its colon


def _asks_you(text: str) -> bool:
    """Whether a text never says "I" or "we" and has a question to "you"."""
    said = words(text)
    questions = [words(q) for q in re.findall(r"[^.!?]*\?", text)]
    return not _SELF.intersection(said) and any({"you", "your"} & set(q) for q in questions)


def _turn_checks(value: Any, ctx: dict[str, Any]) -> Failure | None:
    return _turn(value, ctx) or _people(value, ctx)


def _plan_checks(value: Any, ctx: dict[str, Any]) -> Failure | None:
    return _plan(value, ctx) or _people(value, ctx)


def _day_plan_checks(value: Any, ctx: dict[str, Any]) -> Failure | None:
    return _day_plan(value, ctx) or _people(value, ctx)


def _hour_checks(value: Any, ctx: dict[str, Any]) -> Failure | None:
    return _hour(value, ctx) or _people(value, ctx)


def _questions(value: Any, ctx: dict[str, Any]) -> Failure | None:
    """A reflection question of fewer than three words that asks nothing ("morning morning",
    "day 0,12:30"; "Who waters?" asks): a fragment, nothing to retrieve memories by; or one
    in the instruction's own terms ("the most salient high-level question"): the task put
    back, not a question about the person."""
    for question in getattr(value, "questions", None) or []:
        if _OF_THE_ASKING.search(str(question)):  # "the most salient high-level question"
            return Failure("copied_prompt", f"the instruction's words: {str(question)[:60]!r}")
        asks = str(question).rstrip().endswith("?")
        if len(_LETTER_WORDS.findall(str(question))) < 3 and not asks:
            return Failure("empty", f"no question: {str(question)[:40]!r}")
    return _people(value, ctx)


_LETTER_WORDS = re.compile(r"[^\W\d_]+")
_OF_THE_ASKING = re.compile(r"\b(?:salient|high-level|high level)\b", re.IGNORECASE)


_BY_TASK = {
    "importance": _importance,
    "contradiction": _contradiction,
    "daily_plan": _day_plan_checks,
    "replan": _plan_checks,
    "hourly_plan": _hour_checks,
    "dialogue_turn": _turn_checks,
    "conversation_summary": _summary,
    "thought_update": _thought_checks,
    "talk_decision": _talk,
    "metacognition": _strategy,
    "reflection_insights": _insights,
    "reflection_questions": _questions,
    "facts": _facts,
    "survey": _survey,
    "interview": _survey,
    "attitude_update": _stance,
}


def check(
    task: str | None, value: BaseModel, prompt: Prompt, context: dict[str, Any]
) -> Failure | None:
    """The first meaning check `value` fails for `task`, or None when it may be used."""
    answer = value.model_dump(mode="json")
    found = (
        prompt.copy_in(leaves(answer))
        or prompt.numbers_copied(answer)
        or _field_names(answer)
        or _debris(answer)
        or _relation_layout(answer)
        or _garbled_time(answer, prompt.exact_times)
        or (_plan_layout(answer) if task in _SPOKEN else None)
    )
    if found is not None:
        return found
    per_task = _BY_TASK.get(task or "", _people)
    example = prompt.example_numbers
    checked = per_task(
        value, {**context, "prompt_words": prompt.vocabulary, "prompt_example": example}
    )
    return (
        checked
        or _out_of_character(answer, task, context)
        or _unfinished(answer, sentences=task not in _PHRASES)
    )


def _field_names(answer: dict[str, Any]) -> Failure | None:
    """A text whose only words are the answer's own field names ("20:15:39, emotion" as a
    thought): the schema's layout written back, not words."""
    named = {w for key in _keys(answer) for w in words(key)}
    for text in leaves(answer):
        said = _LETTER_WORDS.findall(text.lower())
        if said and named.issuperset(said):
            return Failure("echoed_schema", f"only the field names: {text[:40]!r}")
    return None


def _garbled_time(answer: dict[str, Any], given: frozenset[str]) -> Failure | None:
    """A clock time with seconds or a calendar date the prompt does not hold ("plan for
    1:02:45", "at 11:00:12:43", "Myspace, 2015-10-30"): the town's clock shows hours and
    minutes of numbered days, so such a time is the prompt's "13:00: 13:00" run together or a
    precision made up, not something the person knows."""
    for text in leaves(answer):
        for found in _EXACT_TIME.findall(text):
            if found not in given:
                return Failure("garbled_time", f"{found!r} in {text[:60]!r}")
    return None


_STATUS_LABELS = re.compile(r"\b(?:mood|needs?):|\b(?:hunger|energy|safety|social) \d", re.I)
# A record of labelled values, perhaps after a number ("1.2, mood: relief 0.5, sentiment:
# positive"): one-word labels with colons, clause after clause, from the text's start.
_RECORD = re.compile(r"^\W*(?:-?\d+(?:\.\d+)?\s*,\s*)?(?:[a-z_]+:[^,:]+,\s*)+[a-z_]+:\s*\S", re.I)


def _plan_layout(answer: dict[str, Any]) -> Failure | None:
    """A time, a colon and a time ("It was 11:00: 11:00 when a hurricane hit"), or a plan's
    time, a colon and a number ("Jon Rossi's plan for 7:00: 10"), or, in a text never said as
    "I", a duration in brackets ("19:00, relaxation at home (60 min)"), in the person's own
    words: the memory list's layout of a plan ("Ann's plan for 11:00: 11:00 work (60 min)"), not
    words, unless quoted after "remember:", as the rules policy quotes a memory; or two labels
    of the status line ("1.0, mood: relief, need: hunger 3, energy 2") or a record of labelled
    values ("1.2, mood: relief 0.5, sentiment: positive")."""
    for text in leaves(answer):
        unquoted = _QUOTED_MEMORY.split(text, maxsplit=1)[0]
        found = _LAYOUT.search(unquoted)
        if found is None and not _SELF.intersection(words(text)):  # "I relax ... (60 min)"
            found = _DURATION.search(unquoted)
        if found is not None:
            return Failure("copied_prompt", f"the memory list's layout: {found.group()!r}")
        if len(_STATUS_LABELS.findall(unquoted)) >= 2 or _RECORD.match(unquoted):
            return Failure("copied_prompt", f"the status line's layout: {text[:60]!r}")
    return None


# Tasks whose texts are the person's own words, not a listing of memories (a consolidation).
_SPOKEN = frozenset(
    "thought_update dialogue_turn survey interview reflection_insights attitude_update".split()
)
# A time, a colon and a time, whole or cut ("13:00: 13:00", "10:30: 9:45", "8:00: 8:0"), a
# plan's time, a colon and a number ("plan for 7:00: 10"), someone's plan for a time ("Bo's plan
# for 12:00 breakfast"), a plan for a numbered day, a colon and a time ("the plan for day 1:
# 7:00 wake up"), or two timed items of a plan ("13:16 go on; 14:30 wrap up work").
_LAYOUT = re.compile(
    r"\b\d{1,2}:\d{2}:\s*\d{1,2}:\d(?:\d\b|\b)|\bplan for \d{1,2}:\d{2}:\s+\d"
    r"|\b[A-Z][a-z]+'s plan for \d{1,2}:\d{2}\b|\bplan for day \d+:\s*\d{1,2}:\d{2}\b"
    r"|\b\d{1,2}:\d{2} [a-z][^;.]*; \d{1,2}:\d{2} [a-z]"
)
_DURATION = re.compile(r"\(\d+ min\)")  # "(60 min)"
_SELF = frozenset("i me my mine myself we us our".split())
_QUOTED_MEMORY = re.compile(r"\bremember:", re.IGNORECASE)
# A clock time with seconds ("7:29:06", "4:13.50") or a calendar date ("2015-10-30", "the
# 10th of January", "March 3"): finer than the town's clock, which shows hours and minutes of
# numbered days.
_MONTH = "(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_EXACT_TIME = re.compile(
    r"(?<![\d:])\d{1,2}:\d{2}(?::|\.(?=\d{2}\b))\d{2}|\b\d{4}-\d{2}-\d{2}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? of {_MONTH}\b|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?\b"
)


def _keys(value: Any) -> Iterator[str]:
    """Every key of a JSON-like value, nested ones too."""
    if isinstance(value, dict):
        for key, v in value.items():
            yield str(key)
            yield from _keys(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _keys(v)


def _relation_layout(answer: dict[str, Any]) -> Failure | None:
    """A text holding a relationship's values as the prompt writes them ("0.9, sentiment +0.0",
    "closeness 0.4"): the prompt's relationship line read back, not words."""
    for text in leaves(answer):
        if found := _RELATION_VALUES.search(text):
            return Failure("copied_prompt", f"the relationship line's values: {found.group()!r}")
    return None


# A relationship's values in the prompt's form (`describe_relation`): "closeness 0.4",
# "sentiment +0.2" (signed).
_RELATION_VALUES = re.compile(r"\bcloseness \d\.\d\b|\bsentiment [+-]\d\.\d\b", re.I)


def _debris(answer: dict[str, Any]) -> Failure | None:
    """A text holding a brace, opening on a closing bracket or naming JSON: the reply's own JSON,
    broken and closed by repair inside a value (',2.0,1684}\nThis is ...', 'remembers nothing
    }\n{}\nAwesome', '][1]\nThis is a JSON response', ')Satisfied'), not words; or a
    bracketed tag of one token ('works at the [M].', '[MLA] Melissa', '[1] Love', '[m] 1',
    '[adaIto_42]') or a whole text in brackets ('[1. Leo Rossi, in another sentence]'):
    markup, not words; or a word with a decimal glued on by a dash ('in my home-0.1'): a place
    id and a number run together; or an identifier ('will_go' as a line): code, not words."""
    for text in leaves(answer):
        if "{" in text or "}" in text or text.lstrip()[:1] in ("]", ")") or _JSON.search(text):
            return Failure("copied_prompt", f"JSON in the answer: {text[:40]!r}")
        if (said := text.strip()).startswith("[") and said.endswith("]"):
            return Failure("copied_prompt", f"a bracketed slot: {said[:40]!r}")
        if found := _TAG.search(text):
            return Failure("copied_prompt", f"a tag in the answer: {found.group()!r}")
        if found := _GLUED.search(text):
            return Failure("copied_prompt", f"a number glued to a word: {found.group()!r}")
        if found := _IDENTIFIER.search(text):
            return Failure("copied_prompt", f"an identifier, not words: {found.group()!r}")
    return None


_JSON = re.compile(r"\bjson\b", re.IGNORECASE)
_TAG = re.compile(r"\[(?!sic\])[^\s\[\]]+\]")  # one token in brackets, but "[sic]"
_GLUED = re.compile(r"\b[A-Za-z]{2,}-\d+\.\d+")
_IDENTIFIER = re.compile(r"\b[a-z]+_[a-z_]*[a-z]\b")  # "will_go", "hunger_satisfaction"


_PHRASES = frozenset({"facts"})  # tasks whose texts are phrases ("went to"), not sentences


def _unfinished(answer: dict[str, Any], sentences: bool = True) -> Failure | None:
    """A text that stops where what it announces should begin ("The answer is:", "The
    people Ann Lee meets:", "... and I'm going to tell you why."), a heading or a preamble;
    that starts on a comma or a full stop (not an ellipsis nor a decimal: ".5"); or, for
    `sentences`, that stops mid-sentence (on a comma, even with a full stop after it, or a
    last sentence left open): not something the person says."""
    for text in leaves(answer):
        said = text.strip()
        if said.endswith(":") or _ANNOUNCES_WHY.search(said.lower()):
            return Failure("empty", f"announces what it does not give: {said[-40:]!r}")
        if said[:1] in (",", ";") or (said[:1] == "." and said[1:2] not in ".0123456789"):
            # ", yes", ". I'm getting ready": the tail of a reply broken before it
            return Failure("empty", f"starts mid-sentence: {said[:40]!r}")
        if sentences and (_ON_COMMA.search(said) or (len(said.split()) > 1 and _trails_off(said))):
            return Failure("empty", f"stops mid-sentence: {said[-40:]!r}")
    return None


_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z])")
# A text ending where its reason should begin ("... and I'm going to tell you why.").
_ANNOUNCES_WHY = re.compile(
    r"\b(?:(?:i'm|i am) going to|i will|i'll|let me) (?:tell|explain to) you why\W*$|"
    r"\bhere(?:'s| is) why\W*$"
)
_ON_COMMA = re.compile(r",[\s.]*$")  # "... (3.67 USD), .": a comma, then at most a full stop
# Words a finished sentence does not end on when it has no full stop ("... rising due to").
_DANGLING = frozenset(
    "a an the and or but of to for with from at in on by as than that when because my your "
    "his her its our their is are was were will would can could should be been into".split()
)

_NEVER_LAST = frozenset("an the my your our their".split())  # words that need one after them


def _trails_off(text: str) -> bool:
    """Whether a text stops where the model stopped, not where a sentence does: on an open
    apostrophe, bracket, dash or asterisk, inside a bracket never closed ("... with Cleo (8"),
    on a word like "the", "to" or "was", or on a word after a sentence that closed ("...
    which was perfect. I then went to work")."""
    if text[-1] in "'\u2019-\u2013\u2014([/&*" or text.rfind("(") > text.rfind(")"):
        return True
    last = text.rsplit(maxsplit=1)[-1].lower()
    if not text[-1].isalnum():  # "... something special for your.": no sentence ends so
        return last.rstrip(".!?") in _NEVER_LAST
    return last in _DANGLING or _SENTENCE_END.search(text) is not None
