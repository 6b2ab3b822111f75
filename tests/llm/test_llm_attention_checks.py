"""Attention checks in importance batches: a model's batch carries a mundane and a poignant
moment at seeded places; ratings that miss them are re-asked, then fall back, and the checks'
own ratings are never returned. A scripted rater on loopback proves it end to end."""

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
from societas.agents.llm.batching import batch_schema
from societas.agents.llm.gateway import LLMGateway
from societas.agents.llm.meaning import (
    CORRECTIONS,
    MUNDANE_MAX,
    POIGNANT_MIN,
    Prompt,
    check,
)
from societas.agents.llm.tasks import ImportanceScore

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
