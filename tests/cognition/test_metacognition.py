"""Meta-cognition (the cognitive profile's L4) as the model's reflection: its strategy
retunes attention and consolidation as answered, an out-of-range or copied answer falls back
to the rules reflection, and a whole run records each pass's answer source."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import pytest

from societas.agents.cognition import metacognition
from societas.agents.cognition.metacognition import EXAMPLE, MetaStrategy, context_of
from societas.agents.llm import LLMGateway, rules
from societas.agents.llm.meaning import Prompt, check
from societas.agents.runtime.results import read_table
from societas.cluster.loop.local import run_local_async
from societas.memory import GroupMemory, GroupMemoryConfig
from societas.memory.architectures.cognitive import rules_metacognition
from tests.chat_server import chat_server, user_text
from tests.scenario_configs import scenario

from .scripted import gateway_config, scripted

OWN = "Much of what I perceive repeats itself, so I can gather more before I observe."


@pytest.fixture
async def group(tmp_path, bm25_embedder) -> AsyncIterator[GroupMemory]:
    cfg = GroupMemoryConfig(
        profile="cognitive",
        cognitive={
            "sensory_buffer_size": 4,
            "attention": {"every": 4, "importance_at": 0.8},
            "consolidation": {"every": 10},
            "metacognition": {"every": 8},
        },
    )
    g = GroupMemory(cfg, root=tmp_path / "mem", embedder=bm25_embedder)
    await g.add_agents({1: {}})
    yield g
    await g.close()


async def _perceive(g: GroupMemory, n: int, text: str = "the gull cried") -> None:
    for _ in range(n):
        await g.cognition.perceive_many([(1, text)])


def _is_meta(schema: dict[str, Any]) -> bool:
    return schema.get("title") == "MetaStrategy"


async def test_the_models_strategy_retunes_attention_and_consolidation(group) -> None:
    answer = {
        "reflection": OWN,
        "attention_every": 6,
        "attention_importance": 0.9,
        "consolidation_every": 20,
    }
    async with scripted(lambda schema, _msgs: answer) as (url, seen):
        llm = LLMGateway(gateway_config(url))
        group.cognition.metacognition = partial(metacognition.reflect, llm)
        await _perceive(group, 8)  # attention twice, then meta-cognition
        await llm.aclose()
    assert len(seen) == 1 and _is_meta(seen[0]["response_format"]["schema"])
    asked = user_text(seen[0])
    assert "attention_every: 4 (allowed 1 to 16)" in asked  # the settings and their ranges
    assert "consolidation_every: 10 (allowed 3 to 40)" in asked
    assert "novelty of what is perceived: 0.25 over 4 events" in asked  # the report
    triggers = group.cognition.state(1).triggers
    assert (triggers["attention"].every, triggers["attention"].importance_at) == (6, 0.9)
    assert triggers["consolidation"].every == 20
    usage = llm.accounting.tasks["metacognition"]
    assert usage.sources == {"first_try": 1} and usage.fallbacks == 0
    log = group.cognition.log_markdown(1)
    assert f"{OWN} (answer source: first_try) Strategy: attention every 4 → 6;" in log
    before = group.cognition.state(1).observations
    await _perceive(group, 6, "a boat came in")
    assert group.cognition.state(1).observations == before + 1  # now every 6 raw events


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ({"reflection": OWN, "attention_every": 500, "consolidation_every": 20}, "out_of_range"),
        ({**EXAMPLE, "reflection": OWN}, "copied_example"),
        (EXAMPLE, None),  # the example's slot as the reflection: not even valid
    ],
)
async def test_a_bad_or_copied_strategy_falls_back_to_the_rules(group, answer, kind) -> None:
    async with scripted(lambda schema, _msgs: answer) as (url, seen):
        llm = LLMGateway(gateway_config(url))
        group.cognition.metacognition = partial(metacognition.reflect, llm)
        await _perceive(group, 7)
        report = group.cognition.state(1).report(1)  # what the pass will reflect on
        await _perceive(group, 1)
        await llm.aclose()
    rules_says = rules_metacognition(report)
    assert rules_says.attention_every == 5  # repetitive perception: attend less often
    triggers = group.cognition.state(1).triggers
    assert triggers["attention"].every == rules_says.attention_every
    assert triggers["consolidation"].every == 10 and triggers["attention"].importance_at == 0.8
    usage = llm.accounting.tasks["metacognition"]
    assert usage.sources == {"fallback": 1} and usage.fallbacks == 1
    assert len(seen) == llm.config.json_reasks + 1  # asked, re-asked, then the rules
    if kind is not None:
        assert usage.meaning[kind] == len(seen)
    log = group.cognition.log_markdown(1)
    assert f"{rules_says.reflection} (answer source: fallback) Strategy: attention every" in log


def test_the_meaning_check_judges_settings_against_their_ranges_and_the_example(group) -> None:
    ctx = context_of(group.cognition.state(1).report(1))
    prompt = Prompt.of([{"role": "user", "content": metacognition.prompt(ctx)}], None, ctx)

    def kind(**answer: Any) -> str | None:
        failure = check("metacognition", MetaStrategy(reflection=OWN, **answer), prompt, ctx)
        return None if failure is None else failure.kind

    assert kind(attention_every=16, consolidation_every=3) is None  # the range's ends
    assert kind(attention_every=17) == "out_of_range"
    assert kind(consolidation_every=2) == "out_of_range"
    assert kind(attention_importance=0.3) == "out_of_range"
    assert kind(attention_every=7, consolidation_every=33) == "copied_example"
    assert kind(attention_every=7) is None  # one number alike is a choice, not a copy
    assert kind() is None  # nothing changed
    unused = {**ctx, "ranges": {**ctx["ranges"], "consolidation_every": None}}
    answer = MetaStrategy(reflection=OWN, consolidation_every=5)
    failure = check("metacognition", answer, prompt, unused)  # a setting the config lacks
    assert failure is not None and failure.kind == "out_of_range"


async def test_the_rules_policy_answers_as_the_rules_reflection(group) -> None:
    await _perceive(group, 7, "the same bell")
    report = group.cognition.state(1).report(1)
    async with LLMGateway({"provider": "rules"}) as llm:
        first = await metacognition.reflect(llm, report)
        again = await metacognition.reflect(llm, report)
        assert llm.accounting.tasks["metacognition"].sources == {"rules": 2}
    expected = rules_metacognition(report)
    assert first == again
    assert first.reflection == f"{expected.reflection} (answer source: rules)"
    assert first.model_dump(exclude={"reflection"}) == expected.model_dump(exclude={"reflection"})


def _scripted_town(body: dict[str, Any]) -> str:
    """Meta-cognition: attend one event less often and consolidate at the range's low end;
    every other task: the rules policy's answer for the task the request names."""
    hint = body["societas"]
    ctx = hint.get("context") or {}
    if hint["task"] == "metacognition":
        att, con = ctx["ranges"]["attention_every"], ctx["ranges"]["consolidation_every"]
        every = min(att[1], ctx["attention_every"] + 1)
        reflection = "My days repeat, so I gather more events before I note one."
        return json.dumps(
            {"reflection": reflection, "attention_every": every, "consolidation_every": con[0]}
        )
    out = rules.answer(hint["task"], ctx, int(hint.get("seed", 0)))
    return out if isinstance(out, str) else json.dumps(out)


async def test_a_full_memory_town_on_a_model_records_each_passs_answer_source(
    tmp_path, bm25_embedder
) -> None:
    out = tmp_path / "run"
    async with chat_server(_scripted_town) as (url, seen):
        endpoint = {"base_url": url, "model": "scripted", "send_task_hints": True}
        cfg = scenario("town-full-memory", agents={"count": 10}, ticks=24)
        cfg["interventions"] = [i for i in cfg["interventions"] if i["tick"] < 24]
        cfg["llm"] = {"endpoints": [endpoint]}
        await run_local_async(cfg, out, embedder=bm25_embedder)
    asked = [b for b in seen if b["societas"]["task"] == "metacognition"]
    passes = sum(read_table(out, "memory_policies").column("meta_cognition").to_pylist())
    assert asked and passes == len(asked)  # every pass asked the model once
    tasks = json.loads((out / "run.json").read_text())["llm_tasks"]
    assert tasks["metacognition"]["source.first_try"] == passes
    assert tasks["metacognition"]["fallbacks"] == 0
    logs = [p.read_text() for p in sorted((out / "memory_logs").glob("agent-*.md"))]
    noted = sum(t.count("(answer source: first_try) Strategy: ") for t in logs)
    assert noted == passes
    assert sum(t.count("attention every 4 → 5") for t in logs) > 0  # as the model answered
