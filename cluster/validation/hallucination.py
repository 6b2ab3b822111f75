"""End-of-run interviews checked for names of people, places or events that do not exist."""

from __future__ import annotations

import re
from collections.abc import Iterable

from societas.cluster.validation.measured import Measured
from societas.cluster.validation.tables import RunTables

QUESTIONS = (
    "Who is running for mayor in the town election?",
    "Is anyone holding a party soon? Who is hosting it, and where?",
    "Who have you talked to in the last two days, and about what?",
)
PLACES = (
    "Smallville Hobbs Cafe Oak Hill College Willows Market Pharmacy Harvey Supply Store Rose "
    "Crown Pub Johnson Park Town Hall Library Dorm House Apartment Valentine Valentine's"
)
COMMON = (
    "I I'm I've I'd I'll Me My Mine We Our You Your He She They It The A An And But So Yes No "
    "Not Oh Well Hi Hello Sure Also As At In On Of To For With From By If When Where Who What "
    "Why How This That These Those There Here Mr Mrs Ms Dr Today Tomorrow Yesterday Monday "
    "Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June "
    "July August September October November December AM PM Day Day's"
)
NOTE = (
    "share of interview answers with a capitalised word, not at a sentence's start, that is no "
    "resident, place, fact word, day or month (an automatic check and a proxy: the paper judged "
    "by hand, against each memory stream, the answers to 'Do you know of <name>?')"
)
_WORD = re.compile(r"[A-Z][a-zA-Z'\-]+")


def known_words(run: RunTables) -> set[str]:
    """Every word that may be capitalised in a truthful answer about this town."""
    words = set(PLACES.split()) | set(COMMON.split())
    for profile in run.population.profiles:
        words |= set(str(profile.name).split())
    for fact in run.scenario.facts:
        words |= set(_WORD.findall(fact.text))
    return {w.strip("'s") or w for w in words} | words


def invented(answer: str, known: set[str]) -> list[str]:
    """Capitalised words past a sentence's start that name nothing in the town."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?:;\n])\s+", answer):
        for i, match in enumerate(_WORD.finditer(sentence)):
            word = match.group(0)
            if i == 0 and match.start() == len(sentence) - len(sentence.lstrip()):
                continue
            if word not in known and word.removesuffix("'s") not in known:
                found.append(word)
    return found


def share_invented(answers: Iterable[str], known: set[str]) -> tuple[float | None, str]:
    """(share of answers naming something unknown, 'k/n')."""
    texts = [a for a in answers if a and a.strip()]
    if not texts:
        return None, "0/0"
    bad = sum(1 for a in texts if invented(a, known))
    return bad / len(texts), f"{bad}/{len(texts)}"


def measure(run: RunTables, agents: int | None = None) -> Measured:
    """Interview each resident (or the first `agents`) at the run's end and check answers."""
    from societas.cluster.experiments.interview import interview

    if run.scenario.llm.provider == "rules":
        return Measured(None, "not applicable under the rules: the policy writes no free text")
    known = known_words(run)
    answers: list[str] = []
    for agent in range(min(agents or run.n_agents, run.n_agents)):
        for question in QUESTIONS:
            out = interview(run.folder, agent, question)
            if out.get("answer_source") not in ("fallback", "rules"):
                answers.append(str(out.get("answer", "")))
    value, detail = share_invented(answers, known)
    return Measured(value, NOTE, detail)
