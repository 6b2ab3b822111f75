"""Thought and attitude updates as the AgentSociety seed specifies them: 20 memories, the
seed's 21 emotion words, and the demographic fields of the generated population in the
prompt."""

from __future__ import annotations

import csv
import re
from typing import Any

import pytest

from societas.agents.blocks.state import attributes_of
from societas.agents.cognition import update_attitude, update_thought
from societas.agents.cognition.emotions import OCC_WORDS
from societas.agents.demographics import CONSUMPTION, FIELDS, RACES, RELIGIONS
from societas.agents.llm.gateway import LLMGateway
from societas.agents.population import population_for
from societas.agents.scenario import load_scenario
from societas.memory import GroupMemory, GroupMemoryConfig, MemoryConfig
from tests.chat_server import user_text

from .scripted import gateway_config, scripted


@pytest.fixture
async def town_group(tmp_path, bm25_embedder):
    """A group memory with the run's schema holding agent 0 of a generated town."""
    pop = population_for(load_scenario({"agents": {"count": 8}, "network": {"k": 2}}))
    g = GroupMemory(
        GroupMemoryConfig(),
        MemoryConfig.from_list(attributes_of()),
        root=tmp_path / "mem",
        embedder=bm25_embedder,
    )
    await g.add_agents({0: pop.profiles[0].kv()})
    g.clock.set(1, 7 * 3600.0)
    yield g, pop.profiles[0]
    await g.close()


def _thinks(first: str):
    """Answers a thought with `first` as its emotion, and with 'Gratitude' when re-asked."""

    def reply(schema: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        props = schema.get("properties") or {}
        if "thought" in props:
            again = any(m["role"] == "assistant" for m in messages)
            word = "Gratitude" if again else first
            return {"thought": "The neighbours were kind today.", "emotion": word, "intensity": 0.7}
        if "attitude" in props:
            return {"attitude": 7.0, "reason": "The neighbours spoke well of the plan."}
        if "results" in props:
            return {"results": [{"score": 4} for _ in range(props["results"].get("minItems", 1))]}
        return {}

    return reply


async def _day_of(group, n: int, word: str) -> None:
    mem = group.agent(0)
    for i in range(n):
        group.clock.set(1, 7 * 3600.0 + 300.0 * i)
        await mem.stream.add("event", f"moment {i}: a neighbour talked about the {word}")


async def test_thought_reads_twenty_memories_and_answers_a_seed_word(town_group) -> None:
    group, profile = town_group
    await _day_of(group, 25, "garden")
    async with scripted(_thinks("Bored")) as (url, seen), LLMGateway(gateway_config(url)) as llm:
        out = await update_thought(group.agent(0), llm)
    first = user_text(seen[0])
    assert len(re.findall(r"^- moment \d+", first, flags=re.MULTILINE)) == 20
    assert all(w in first for w in OCC_WORDS)  # the 21 words are offered
    assert f"belonging to the {profile.race} race and identifying as {profile.religion}" in first
    assert f"reside in a {profile.residence} area" in first and profile.skill in first
    assert f"family consumption level of {profile.family_consumption}" in first
    # 'Bored' is no seed word: asked again, and the word the model then gives is stored
    assert out.emotion == "Gratitude" and out.answer_source == "re_asked"
    mem = group.agent(0)
    assert await mem.status.get("emotion_types") == "Gratitude"
    assert (await mem.status.get("emotion"))["joy"] == 7  # the intensity the word raises


def _no_seed_word(schema: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Answers every thought with a word that is none of the seed's, even when re-asked."""
    if "thought" in (schema.get("properties") or {}):
        return {"thought": "The bridge is closed today.", "emotion": "Bored", "intensity": 0.9}
    return {}


async def test_a_thought_with_no_usable_answer_changes_nothing(town_group) -> None:
    """A fallback is no feeling of the agent's: the thought and emotion in force stay, no
    memory is added, and the answer says what is in force."""
    group, _ = town_group
    await _day_of(group, 3, "garden")
    mem = group.agent(0)
    async with scripted(_thinks("Gratitude")) as (url, _), LLMGateway(gateway_config(url)) as llm:
        await update_thought(mem, llm)
    kept = {k: await mem.status.get(k) for k in ("thought", "emotion", "emotion_types")}
    stored = await group.memory_count()
    async with scripted(_no_seed_word) as (url, _), LLMGateway(gateway_config(url)) as llm:
        out = await update_thought(mem, llm)
    assert out.answer_source == "fallback"
    assert (out.thought, out.emotion, out.intensity) == (kept["thought"], "Gratitude", 0.7)
    assert {k: await mem.status.get(k) for k in kept} == kept
    assert await group.memory_count() == stored


async def test_a_stance_with_no_usable_answer_changes_nothing(town_group) -> None:
    group, _ = town_group
    await _day_of(group, 3, "tax")
    mem = group.agent(0)
    before, stored = await mem.status.get("attitude", default={}), await group.memory_count()

    def off_scale(schema: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"attitude": 42, "reason": "I changed my mind."}

    async with scripted(off_scale) as (url, _), LLMGateway(gateway_config(url)) as llm:
        out = await update_attitude(mem, llm, "tax")
    assert out.answer_source == "fallback" and out.attitude == 5.0
    assert await mem.status.get("attitude", default={}) == before
    assert await group.memory_count() == stored  # no note of a stance re-evaluated


async def test_attitude_reads_twenty_memories_with_the_self_description(town_group) -> None:
    group, profile = town_group
    await _day_of(group, 24, "tax")
    async with scripted(_thinks("Hope")) as (url, seen), LLMGateway(gateway_config(url)) as llm:
        out = await update_attitude(group.agent(0), llm, "tax")
    (asked,) = [b for b in seen if '"attitude"' in user_text(b)]
    text = user_text(asked)
    assert len(re.findall(r"^- moment \d+", text, flags=re.MULTILINE)) == 20
    assert f"marital status is {profile.marriage_status}" in text
    assert f"education level is {profile.education}" in text
    assert out.attitude == 7.0 and (await group.agent(0).status.get("attitude"))["tax"] == 7.0


async def test_rules_thought_stores_a_seed_word(town_group) -> None:
    group, _ = town_group
    await group.agent(0).stream.add("event", "A fire broke out and we had to evacuate")
    out = await update_thought(group.agent(0), LLMGateway({"provider": "rules"}))
    assert out.emotion in OCC_WORDS and out.answer_source == "rules"
    assert await group.agent(0).status.get("emotion_types") == out.emotion == "Fear"


def test_population_draws_the_seed_fields_deterministically() -> None:
    def profiles(seed: int):
        cfg = load_scenario({"seed": seed, "agents": {"count": 300}, "network": {"k": 2}})
        return population_for(cfg).profiles

    a, b, other = profiles(5), profiles(5), profiles(6)
    assert [p.kv()[f] for p in a for f in FIELDS] == [p.kv()[f] for p in b for f in FIELDS]
    assert [p.race for p in a] != [p.race for p in other]
    assert {p.race for p in a} <= set(RACES) and len({p.race for p in a}) >= 3
    assert {p.religion for p in a} <= set(RELIGIONS)
    assert all(p.skill and p.marriage_status and p.residence and p.education for p in a)
    young = [p.marriage_status for p in a if p.age < 25]
    assert not young or young.count("single") > len(young) / 2
    rich = max(a, key=lambda p: p.income)
    poor = min(a, key=lambda p: p.income)
    assert CONSUMPTION.index(rich.family_consumption) > CONSUMPTION.index(poor.family_consumption)


def test_a_profiles_file_sets_the_seed_fields(tmp_path) -> None:
    path = tmp_path / "people.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["name", "race", "religion", "skill"])
        w.writeheader()
        for i in range(4):
            w.writerow({"name": f"Person {i}", "race": "asian", "religion": "buddhism",
                        "skill": "pottery"})  # fmt: skip
    cfg = load_scenario({"agents": {"profiles": str(path)}, "network": {"k": 2}})
    p = population_for(cfg).profiles[2]
    assert (p.race, p.religion, p.skill) == ("asian", "buddhism", "pottery")
    assert p.kv()["race"] == "asian" and p.residence  # what the file leaves out is drawn
