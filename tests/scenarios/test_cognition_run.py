"""Generative-agent cognition in whole runs on in-process groups: reflections resting on
stored memories, multi-turn conversations across groups remembered by both sides,
relationships, hourly plans, LLM consolidation on its schedule, and a resumed run with
conversations and plans in progress equal to an uninterrupted one."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from typing import Any

import pytest

from societas.agents.cognition.persona import plain_name
from societas.agents.runtime.engine import GroupEngine
from societas.agents.runtime.results import TABLES, read_table
from societas.agents.scenario import load_scenario
from societas.cluster.loop.coordinator import Coordinator
from societas.cluster.loop.local import partition, run_local_async
from societas.cluster.loop.run import RunInterrupted

from .conftest import scenario

TALKATIVE = {"chat_prob": 0.6, "friend_chat_prob": 0.9, "message_prob": 0.02}


def town(**over: Any) -> dict[str, Any]:
    """A small, talkative town (two groups) with consolidation every 6 ticks."""
    cfg = scenario("town", agents={"count": 24}, social=TALKATIVE, groups=2, **over)
    cfg["memory"] = {"policies": {"consolidation": {"enabled": True, "run_every_ticks": 6}}}
    return cfg


async def test_a_day_of_cognition_across_two_groups(tmp_path, bm25_embedder) -> None:
    sc = load_scenario(town(ticks=40))
    parts = partition(24, 2)
    owner = {a: g for g, ids in enumerate(parts) for a in ids}
    engines = [
        GroupEngine(sc, g, ids, tmp_path, embedder=bm25_embedder) for g, ids in enumerate(parts)
    ]
    for e in engines:
        await e.setup()
    summary = await Coordinator(engines, seed=sc.seed).run(sc.ticks)
    try:
        assert summary.conversations > 0 and summary.cross_group_conversations > 0
        # reflections: rows whose memory and evidence ids are stored memories of the agent
        refl = read_table(tmp_path, "reflections").to_pylist()
        assert refl
        for row in refl:
            mem = engines[owner[row["agent_id"]]].memory.agent(row["agent_id"])
            (stored,) = await mem.stream.get_by_ids([row["memory_id"]])
            assert stored.topic == "reflection" and stored.text == row["text"]
            evidence = [int(x) for x in row["evidence_ids"].split(",") if x]
            assert evidence and len(await mem.stream.get_by_ids(evidence)) == len(evidence)
        # conversations: turns 0..n-1, speakers alternating, several turns on average
        lines = defaultdict(list)
        for r in read_table(tmp_path, "dialogues").to_pylist():
            if r["conversation_id"]:
                lines[r["conversation_id"]].append(r)
        assert lines
        for rows in lines.values():
            rows.sort(key=lambda r: r["turn"])
            assert [r["turn"] for r in rows] == list(range(len(rows)))
            assert all(a["speaker"] == b["listener"] for a, b in pairwise(rows))
        assert sum(len(v) for v in lines.values()) / len(lines) >= 3
        cross = [v for v in lines.values() if owner[v[0]["speaker"]] != owner[v[0]["listener"]]]
        assert cross
        # both sides of a cross-group conversation: relationship rows, KV and a summary memory
        rel = read_table(tmp_path, "relationships").to_pylist()
        cid = cross[0][0]["conversation_id"]
        a, b = cross[0][0]["speaker"], cross[0][0]["listener"]
        assert {(r["agent_id"], r["other_id"]) for r in rel if r["conversation_id"] == cid} == {
            (a, b),
            (b, a),
        }
        for me, other in ((a, b), (b, a)):
            engine = engines[owner[me]]
            assert str(other) in engine.agents[me].state["relationships"]
            name = plain_name(engine.population.profiles[other].name)  # as prompts say it
            hits = await engine.memory.agent(me).stream.search(name, topic="dialogue", top_k=20)
            assert any(name in h.text for h in hits)
        # hourly plans: 5-15 minute actions filling each decomposed hour
        hours = defaultdict(int)
        for r in read_table(tmp_path, "plans").to_pylist():
            if r["level"] == "action":
                assert 5 <= r["duration_min"] <= 15
                hours[(r["agent_id"], r["hour"], r["tick"])] += r["duration_min"]
        assert hours and set(hours.values()) == {60}
        # consolidation ran on its schedule with the LLM (rules) summary
        assert sum(e.memory.counters["consolidated"] for e in engines) > 0
    finally:
        for e in engines:
            await e.close()


async def test_resumed_run_with_conversations_in_progress_matches(tmp_path, bm25_embedder) -> None:
    cfg = town(ticks=10)
    whole, split = tmp_path / "whole", tmp_path / "split"
    await run_local_async(cfg, whole, embedder=bm25_embedder)
    ticks_done = {"n": 0}

    def stop_after_five() -> bool:  # stops at 8:30, mid-hour: hourly plans in progress
        ticks_done["n"] += 1
        return ticks_done["n"] >= 5

    with pytest.raises(RunInterrupted):
        await run_local_async(cfg, split, embedder=bm25_embedder, stop=stop_after_five)
    await run_local_async(cfg, split, embedder=bm25_embedder, resume=True)
    talk = read_table(whole, "dialogues").to_pylist()
    ticks = {r["tick"] for r in talk if r["conversation_id"]}
    assert min(ticks) < 5 <= max(ticks)  # conversations before and after the interruption
    for table in TABLES:
        assert read_table(whole, table).equals(read_table(split, table)), table
