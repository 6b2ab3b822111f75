"""The rules policy (not a language model): every task answers valid, deterministic output."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from societas.agents.llm import rules
from societas.agents.llm.gateway import RULES_MODEL, LLMGateway
from societas.agents.llm.meaning import Population
from societas.agents.llm.tasks import TASK_SCHEMAS, AttitudeUpdate, Reaction

CONTEXTS = {
    "importance": {"items": ["ate lunch", "my friend died in a fire"]},
    "reflection_questions": {
        "statements": ["the hurricane is coming", "hurricane shelters"],
        "n": 2,
    },
    "reflection_insights": {
        "question": "What do I think about hurricane?",
        "statements": ["the hurricane is coming", "ate lunch"],
    },
    "daily_plan": {
        "profile": {"home": "flat 3", "workplace": "school", "occupation": "teacher"},
        "needs": {"social": 0.1},
    },
    "hourly_plan": {"activity": "teach maths", "hour": 9},
    "reaction": {"name": "Ann", "event": "a flood reached the street"},
    "dialogue_turn": {
        "speaker": "Ann",
        "listener": "Bob",
        "memories": ["the mayor resigned"],
        "history": [],
        "turn": 0,
        "max_turns": 4,
    },
    "thought_update": {"recent": ["won the lottery"], "needs": {"hunger": 0.1}},
    "attitude_update": {
        "topic": "ubi",
        "attitude": 5.0,
        "recent": ["I support ubi, it is fair", "ubi would help"],
    },
    "consolidation": {"texts": ["went to the park", "walked in the park"]},
}


def test_every_schema_task_has_a_rule() -> None:
    assert set(TASK_SCHEMAS) <= set(rules.known_tasks())


@pytest.mark.parametrize("task", sorted(CONTEXTS))
async def test_rule_output_validates_and_is_deterministic(task: str) -> None:
    gw = LLMGateway({"provider": "rules"})
    schema = TASK_SCHEMAS[task]
    if task == "importance":
        out = rules.answer(task, CONTEXTS[task])
        assert isinstance(out, dict)
        scores = [schema.model_validate(r) for r in out["results"]]
        assert scores[1].score > scores[0].score  # type: ignore[attr-defined]
        return
    msgs = [{"role": "user", "content": task}]
    a = await gw.json(msgs, schema, task=task, context=CONTEXTS[task])
    b = await gw.json(msgs, schema, task=task, context=CONTEXTS[task])
    assert a == b
    assert gw.accounting.models[RULES_MODEL].requests == 2
    assert "not a language model" in RULES_MODEL


async def test_rules_follow_inputs() -> None:
    gw = LLMGateway({"provider": "rules"})
    msgs = [{"role": "user", "content": "x"}]
    flood = await gw.json(msgs, Reaction, task="reaction", context=CONTEXTS["reaction"])
    calm = await gw.json(
        msgs, Reaction, task="reaction", context={"name": "Ann", "event": "a cat sat on a mat"}
    )
    assert flood.react and flood.new_activity and not calm.react
    pro = await gw.json(
        msgs, AttitudeUpdate, task="attitude_update", context=CONTEXTS["attitude_update"]
    )
    con = await gw.json(
        msgs,
        AttitudeUpdate,
        task="attitude_update",
        context={**CONTEXTS["attitude_update"], "recent": ["ubi is a waste, I oppose ubi"]},
    )
    assert pro.attitude > 5.5 and con.attitude < 4.5


def test_seed_changes_jittered_answers() -> None:
    items = {"items": [f"walked to the shop {i}" for i in range(30)]}
    a = rules.answer("importance", items, seed=1)
    b = rules.answer("importance", items, seed=2)
    assert a != b and a == rules.answer("importance", items, seed=1)


@pytest.mark.parametrize(
    "context",
    [
        {"name": "Ann", "people": ["Bob", "Zoë", "Ann"], "place": "café", "n": 2},
        {"people": ("Bob", "Zoë"), "zz": {"people": ["x"]}},
        {"people": ["Bob", 3, {"k": "v"}]},  # not all names: encoded with the rest
        {"people": ["Bob"], "note": "\x00people\x00"},  # a value holding the stand-in
        {"people": []},
        {"n": 1},
    ],
)
def test_seeded_rng_hashes_the_whole_call(context: dict) -> None:
    """The draws depend on the JSON of (task, context, seed) exactly, plain lists of names
    included."""
    blob = json.dumps(["talk", context, 7], sort_keys=True, default=str, ensure_ascii=False)
    seed = int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big")
    expected = random.Random(seed).random()
    assert rules.seeded_rng("talk", context, 7).random() == expected
    assert rules.seeded_rng("talk", context, 7).random() == expected
    other = {**context, "people": ["Bob", "Zoë", "Ann", "Eve"]}
    assert rules.seeded_rng("talk", other, 7).random() != expected


def test_a_population_enters_the_seed_by_its_hash() -> None:
    """A `Population` (what call sites pass as `people`) is hashed once; the draws depend on
    its names all the same: same names, same draws; one name more, other draws."""
    people = Population(["Ann", "Bob", "Zoë"])
    context = {"name": "Ann", "people": people, "n": 2}
    stand_in = {**context, "people": people.digest}
    blob = json.dumps(["talk", stand_in, 7], sort_keys=True, default=str, ensure_ascii=False)
    expected = random.Random(int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big"))
    assert rules.seeded_rng("talk", context, 7).random() == expected.random()
    same = {**context, "people": Population(["Ann", "Bob", "Zoë"])}
    assert (
        rules.seeded_rng("talk", same, 7).random() == rules.seeded_rng("talk", context, 7).random()
    )
    more = {**context, "people": Population(["Ann", "Bob", "Eve", "Zoë"])}
    assert (
        rules.seeded_rng("talk", more, 7).random() != rules.seeded_rng("talk", context, 7).random()
    )
