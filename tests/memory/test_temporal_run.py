"""Temporal links and the contradiction check in a real run (town scenario, rules provider,
two in-process groups): each participant's memories of one routed conversation — the other's
lines, then its summary — are linked in order by `temporal` associations, and the LLM
contradiction judge (answered by the rules provider through the gateway) runs on schedule."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from societas.agents.cognition.persona import plain_name
from societas.agents.runtime.engine import GroupEngine
from societas.agents.runtime.results import read_table
from societas.agents.scenario import load_scenario
from societas.cluster.loop.coordinator import Coordinator
from societas.cluster.loop.local import partition
from tests.scenario_configs import scenario

TALKATIVE = {"chat_prob": 0.6, "friend_chat_prob": 0.9, "message_prob": 0.02}


def town(**policies: Any) -> dict[str, Any]:
    cfg = scenario("town", agents={"count": 16}, social=TALKATIVE, groups=2, ticks=24)
    cfg["memory"] = {"policies": policies}
    return cfg


async def _run(tmp_path, embedder, cfg) -> tuple[list[GroupEngine], dict[int, int]]:
    sc = load_scenario(cfg)
    parts = partition(16, 2)
    owner = {a: g for g, ids in enumerate(parts) for a in ids}
    engines = [GroupEngine(sc, g, ids, tmp_path, embedder=embedder) for g, ids in enumerate(parts)]
    for e in engines:
        await e.setup()
    await Coordinator(engines, seed=sc.seed).run(sc.ticks)
    return engines, owner


def _temporal_next(engine: GroupEngine) -> dict[int, list[tuple[int, float]]]:
    nxt: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for a in engine.memory.associations.directed:
        if a.type == "temporal":
            nxt[a.source].append((a.target, a.strength))
    return nxt


async def test_a_conversation_s_memories_are_linked_in_order(tmp_path, bm25_embedder) -> None:
    cfg = town(temporal={"enabled": True}, contradiction={"enabled": True})
    engines, owner = await _run(tmp_path, bm25_embedder, cfg)
    try:
        lines = defaultdict(list)
        for r in read_table(tmp_path, "dialogues").to_pylist():
            if r["conversation_id"]:
                lines[r["conversation_id"]].append(r)
        checked = 0
        for cid, rows in sorted(lines.items()):
            rows.sort(key=lambda r: r["turn"])
            a, b = rows[0]["speaker"], rows[0]["listener"]
            for me, other in ((a, b), (b, a)):
                engine = engines[owner[me]]
                heard = [r["text"] for r in rows if r["speaker"] == other]
                if not heard:
                    continue
                name = plain_name(engine.population.profiles[other].name)
                expected = [f"{name} said: {text}" for text in heard]
                nxt = _temporal_next(engine)
                mem = engine.memory.agent(me).stream
                # the chain starting at the first line this agent heard in `cid`
                starts = [m for m in nxt if m >> 40 == owner[me]]
                found = False
                for start in starts:
                    chain = [start]
                    while len(chain) <= len(expected) and nxt.get(chain[-1]):
                        ((target, strength),) = nxt[chain[-1]]
                        assert strength == 0.9 and target > chain[-1]  # in the order stored
                        chain.append(target)
                    try:
                        records = await mem.get_by_ids(chain)
                    except KeyError:
                        continue  # another agent's chain
                    texts = [r.text for r in records]
                    if texts[: len(expected)] == expected and len(texts) == len(expected) + 1:
                        summary = records[-1]
                        assert summary.topic == "dialogue"
                        assert not summary.text.startswith(f"{name} said: ")
                        assert {r.agent_id for r in records} == {me}
                        found = True
                        break
                assert found, (cid, me, expected)
                checked += 1
            if checked >= 6:
                break
        assert checked >= 2
        # the contradiction check ran through the gateway (rules provider) on schedule
        calls = sum(e.memory.policy_state.counters["contradiction_calls"] for e in engines)
        assert calls > 0
        usage = engines[0].llm.accounting.task("contradiction")
        assert usage.json_calls > 0
    finally:
        for e in engines:
            await e.close()


async def test_temporal_off_keeps_one_summary_per_conversation(tmp_path, bm25_embedder) -> None:
    engines, _ = await _run(tmp_path, bm25_embedder, town())
    try:
        for e in engines:
            assert not any(a.type == "temporal" for a in e.memory.associations.directed)
            names = {p.name for p in e.population.profiles}
            said = [
                t
                for t in e.memory.hot.texts.take(e.memory.hot.row_of.values())
                if t.split(" said: ", 1)[0] in names
            ]
            assert said == []  # no per-line memories unless the policy asks for them
    finally:
        for e in engines:
            await e.close()


async def test_llm_judge_answers_a_batch_of_pairs_in_one_gateway_call() -> None:
    from societas.agents.llm.gateway import RULES_MODEL, LLMGateway
    from societas.agents.runtime.memory_checks import judge_contradictions

    gw = LLMGateway({"provider": "rules"})
    pairs = [
        ("the bakery is open today", "the bakery is not open today"),
        ("the bakery is open today", "the river is frozen"),
        ("I trust the mayor", "I distrust the mayor"),
    ]
    assert await judge_contradictions(gw, pairs, seed=3) == [True, False, True]
    assert gw.accounting.models[RULES_MODEL].requests == 1  # one call for the whole batch
    assert await judge_contradictions(gw, []) == []
    assert gw.accounting.models[RULES_MODEL].requests == 1
