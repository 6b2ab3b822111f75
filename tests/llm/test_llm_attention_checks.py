"""Attention checks in importance and contradiction batches: a model's batch carries checks
whose answer is plain at seeded places; answers that miss them are re-asked, then fall back,
and the checks' own answers are never returned. A scripted model on loopback proves it."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from societas.agents.cognition.importance import (
    FALLBACK_SCORE,
    MUNDANE,
    POIGNANT,
    rate_with_source,
    with_anchors,
)
from societas.agents.llm import rules
from societas.agents.llm.batching import batch_schema, with_checks
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.meaning import (
    CORRECTIONS,
    MUNDANE_MAX,
    POIGNANT_MIN,
    Prompt,
    check,
)
from societas.agents.llm.tasks import ImportanceScore
from societas.agents.runtime.memory_checks import (
    CHECK_POOLS,
    CONTRADICTING,
    UNRELATED,
    judge_contradictions,
)
from societas.memory.policies.contradictions import rule_contradicts

from ..chat_server import chat_server, user_text

TEXTS = ["walked to the market", "the bakery burned down", "read a book", "met Bob at the cafe"]


def items_of(body: dict[str, Any]) -> list[str]:
    """The numbered items of a batched rating prompt."""
    listing = user_text(body).split("Items:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(". ", 1)[1] for line in listing.splitlines()]


def attentive(body: dict[str, Any]) -> str:
    """Rates the checks as the scale says (1 and 10) and every other item 5."""
    scores = [1 if t in MUNDANE else 10 if t in POIGNANT else 5 for t in items_of(body)]
    return json.dumps({"results": [{"score": s} for s in scores]})


def flat(body: dict[str, Any]) -> str:
    """Rates every item 5, the checks too: not attending."""
    return json.dumps({"results": [{"score": 5} for _ in items_of(body)]})


def gateway(url: str, checks: bool = True) -> LLMGateway:
    endpoint = {"base_url": url, "model": "rater", "structured_output": "json_object_schema"}
    return LLMGateway(
        {"endpoints": [endpoint], "fallback_stop": {"enabled": False}, "attention_checks": checks}
    )


@pytest.mark.parametrize("seed", range(50))
def test_the_rules_policy_rates_every_check_as_the_scale_says(seed: int) -> None:
    """The emulator answers by the rules policy: its own ratings pass every check."""
    for text in MUNDANE:
        assert rules.importance_score(text, random.Random(seed)) <= MUNDANE_MAX
    for text in POIGNANT:
        assert rules.importance_score(text, random.Random(seed)) >= POIGNANT_MIN


def test_checks_go_to_seeded_places_and_keep_the_items_order() -> None:
    items, (low, high) = with_anchors(TEXTS, 7)
    assert (items, [low, high]) == with_anchors(TEXTS, 7)
    assert len(items) == len(TEXTS) + 2 and low != high
    assert items[low] in MUNDANE and items[high] in POIGNANT
    assert [t for i, t in enumerate(items) if i not in (low, high)] == TEXTS
    places = {tuple(with_anchors(TEXTS, seed)[1]) for seed in range(40)}
    assert len(places) > 5  # not always the same places: a model cannot learn them


@pytest.mark.parametrize(
    ("low", "high", "kind"),
    [(1, 10, None), (3, 7, None), (4, 10, "missed_anchor"), (1, 6, "missed_anchor")],
)
def test_the_meaning_check_reads_the_checks_ratings(low: int, high: int, kind: str | None) -> None:
    batch = batch_schema(ImportanceScore, 4)(
        results=[ImportanceScore(score=s) for s in (5, low, 8, high)]
    )
    prompt = Prompt.of([{"role": "user", "content": "Rate."}], None, {}, "importance")
    failure = check("importance", batch, prompt, {"anchors": [1, 3]})
    assert (failure.kind if failure else None) == kind
    assert "missed_anchor" in CORRECTIONS


async def test_an_attentive_rater_is_used_and_the_checks_left_out() -> None:
    async with chat_server(attentive, model="rater") as (url, seen), gateway(url) as gw:
        rated = await rate_with_source(gw, TEXTS, "Ann", seed=3)
    assert rated == [(0.5, "first_try")] * len(TEXTS)
    assert len(seen) == 1 and len(items_of(seen[0])) == len(TEXTS) + 2
    counts = gw.accounting.snapshot()["tasks"]["importance"]
    assert not any(k.startswith("meaning.") for k in counts)


async def test_a_rater_that_misses_the_checks_is_reasked_then_falls_back() -> None:
    async with chat_server(flat, model="rater") as (url, seen), gateway(url) as gw:
        rated = await rate_with_source(gw, TEXTS, "Ann", seed=3)
    assert rated == [(FALLBACK_SCORE / 10, "fallback")] * len(TEXTS)  # never the 5s
    assert len(seen) >= 2  # asked, then re-asked with the correction
    assert CORRECTIONS["missed_anchor"] in user_text(seen[-1]) or any(
        m.get("content") == CORRECTIONS["missed_anchor"] for m in seen[-1]["messages"]
    )
    counts = gw.accounting.snapshot()["tasks"]["importance"]
    assert counts["meaning.missed_anchor"] >= 1 and counts["source.fallback"] >= 1


async def test_the_rules_policy_is_not_asked_the_checks() -> None:
    """Its answers are those of the batch alone, as before checks existed."""
    async with LLMGateway({"provider": "rules"}) as gw:
        rated = await rate_with_source(gw, TEXTS, "Ann", seed=3)
    expected = rules.answer("importance", {"name": "Ann", "items": TEXTS}, 3)
    assert isinstance(expected, dict)
    assert [score for score, _ in rated] == [r["score"] / 10 for r in expected["results"]]


async def test_checks_turned_off_ask_the_batch_alone() -> None:
    """`llm.attention_checks: false`: the same rater's answers are used as given."""
    async with chat_server(flat, model="rater") as (url, seen), gateway(url, False) as gw:
        rated = await rate_with_source(gw, TEXTS, "Ann", seed=3)
    assert rated == [(0.5, "first_try")] * len(TEXTS)
    assert len(seen) == 1 and items_of(seen[0]) == TEXTS


PAIRS = [
    ("the cafe was busy", "the cafe was not busy"),
    ("walked to the park", "Bob bought apples"),
    ("the mayor spoke at noon", "the mayor gave a speech at noon"),
]


def judged_pairs(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The (A, B) memories of a contradiction prompt's numbered items."""
    out = []
    for item in items_of(body):
        a, b = item.split('" B: "', 1)
        out.append((a.removeprefix('A: "'), b.removesuffix('"')))
    return out


def careful_judge(body: dict[str, Any]) -> str:
    """Judges the checks as plain sense says and every other pair contradictory."""
    verdicts = [pair not in UNRELATED for pair in judged_pairs(body)]
    return json.dumps({"results": [{"contradictory": v} for v in verdicts]})


def yes_judge(body: dict[str, Any]) -> str:
    """Judges every pair contradictory, the unrelated check too: not attending."""
    return json.dumps({"results": [{"contradictory": True} for _ in judged_pairs(body)]})


def half_judge(body: dict[str, Any]) -> str:
    """Attends once: judges the first unrelated pair it meets unrelated and every other pair
    contradictory, so a batch with one unrelated check would pass and one with two cannot."""
    pairs = judged_pairs(body)
    first = next(i for i, pair in enumerate(pairs) if pair in UNRELATED)
    return json.dumps({"results": [{"contradictory": i != first} for i in range(len(pairs))]})


@pytest.mark.parametrize("seed", range(6))
def test_contradiction_checks_are_two_plain_pairs_of_each_kind(seed: int) -> None:
    assert all(rule_contradicts(a, b) for a, b in CONTRADICTING)
    assert not any(rule_contradicts(a, b) for a, b in UNRELATED)
    items, places = with_checks(PAIRS, seed, CHECK_POOLS)
    checks = [items[i] for i in places]
    assert [c in CONTRADICTING for c in checks] == [True, False, True, False]
    assert [c in UNRELATED for c in checks] == [False, True, False, True]
    assert len(set(checks)) == 4  # no pair asked twice
    assert [p for i, p in enumerate(items) if i not in places] == PAIRS


async def test_a_judge_that_attends_to_half_the_checks_is_reasked_then_finds_nothing() -> None:
    async with chat_server(half_judge, model="judge") as (url, _seen), gateway(url) as gw:
        verdicts = await judge_contradictions(gw, PAIRS, seed=2)
    assert verdicts == [False, False, False]
    counts = gw.accounting.snapshot()["tasks"]["contradiction"]
    assert counts["meaning.missed_check"] >= 1 and counts["source.fallback"] == 1


async def test_an_attentive_judge_is_used_and_the_checks_left_out() -> None:
    async with chat_server(careful_judge, model="judge") as (url, seen), gateway(url) as gw:
        verdicts = await judge_contradictions(gw, PAIRS, seed=2)
    assert verdicts == [True, True, True]
    assert len(seen) == 1 and len(judged_pairs(seen[0])) == len(PAIRS) + 4
    counts = gw.accounting.snapshot()["tasks"]["contradiction"]
    assert counts["source.first_try"] == 1
    assert not any(k.startswith("meaning.") for k in counts)


async def test_a_judge_that_misses_the_checks_is_reasked_then_finds_nothing() -> None:
    async with chat_server(yes_judge, model="judge") as (url, seen), gateway(url) as gw:
        verdicts = await judge_contradictions(gw, PAIRS, seed=2)
    assert verdicts == [False, False, False]  # never its "all contradictory"
    assert len(seen) >= 2
    assert any(m.get("content") == CORRECTIONS["missed_check"] for m in seen[-1]["messages"])
    counts = gw.accounting.snapshot()["tasks"]["contradiction"]
    assert counts["meaning.missed_check"] >= 1 and counts["source.fallback"] == 1


async def test_the_rules_policy_judges_the_pairs_alone() -> None:
    async with LLMGateway({"provider": "rules"}) as gw:
        verdicts = await judge_contradictions(gw, PAIRS, seed=2)
    assert verdicts == [rule_contradicts(a, b) for a, b in PAIRS]
