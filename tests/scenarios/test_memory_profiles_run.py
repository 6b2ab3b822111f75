"""Memory profiles in whole runs (in-process engines, rules provider): agent types with
their own profiles, and the cognitive profile's layers driving perception and prompts.

Prompts are captured by a recording subclass of the real gateway (`chat` is where every
request goes, rules or HTTP); the rules provider answers, so no model server is needed."""

from __future__ import annotations

import json
import re
from contextlib import AsyncExitStack
from typing import Any

import pytest

from societas.agents.experiments.memory_profiles import read_agent_profiles
from societas.agents.llm import LLMGateway
from societas.agents.runtime.engine import GroupEngine
from societas.agents.runtime.results import TABLES, read_table
from societas.agents.scenario import ScenarioConfigError, load_scenario
from societas.cluster.loop.coordinator import Coordinator
from societas.cluster.loop.local import run_local_async
from societas.cluster.loop.run import RunInterrupted
from societas.testing.emulator import EmulatorConfig, serve

from .conftest import scenario

TALKATIVE = {"chat_prob": 0.6, "friend_chat_prob": 0.9, "message_prob": 0.05}
CAPACITY, N = 2, 3
# Prompts an agent's cognition builds with memory context (batch rating/summaries list
# texts to rate, not memories for the agent to use).
COGNITION_TASKS = {
    "daily_plan",
    "hourly_plan",
    "replan",
    "reaction",
    "thought_update",
    "attitude_update",
    "dialogue_turn",
    "reflection_questions",
    "reflection_insights",
}
LINE = re.compile(r"^\s*(?:-|\d+\.)\s+(.*\S)\s*$")


class RecordingGateway(LLMGateway):
    """The real gateway, each request's task and prompt text kept."""

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.sent: list[tuple[str | None, str]] = []

    async def chat(self, req):
        self.sent.append((req.task, "\n".join(m.content for m in req.messages)))
        return await super().chat(req)


def town(memory: dict[str, Any], **over: Any) -> dict[str, Any]:
    over = {"agents": {"count": 12}, "social": TALKATIVE, "ticks": 16, **over}
    cfg = scenario("town", **over)
    cfg["memory"] = memory
    return cfg


def cognitive(**knobs: Any) -> dict[str, Any]:
    return {
        "sensory_buffer_size": N,
        "attention": {"every": N},
        "working_memory_capacity": CAPACITY,
        "consolidation": {"every": 2 * N},  # facts from every 2 observations
        "metacognition": {"every": 2 * N},  # and a meta-cognition pass
        **knobs,
    }


async def _engine(cfg, tmp_path, embedder, llm=None) -> GroupEngine:
    sc = load_scenario(cfg)
    engine = GroupEngine(sc, 0, list(range(sc.agents.count)), tmp_path, embedder=embedder, llm=llm)
    await engine.setup()
    return engine


def memory_items(prompt: str, texts: set[str]) -> int:
    """Prompt lines that are a stored memory's text ('- text' or '1. text')."""
    return sum(1 for line in prompt.splitlines() if (m := LINE.match(line)) and m[1] in texts)


async def _all_texts(engine: GroupEngine) -> set[str]:
    group = engine.memory
    texts = set(group.hot.texts.take(group.hot.row_of.values()))
    offset = None
    while True:
        page, offset = await group.store.scroll(offset, 1000, with_vectors=False)
        texts |= {p.payload["text"] for p in page}
        if offset is None:
            return texts


async def _run(engine: GroupEngine, ticks: int, each_tick=None) -> None:
    coordinator = Coordinator([engine], seed=engine.scenario.seed)
    for tick in range(ticks):
        await coordinator.step(tick)
        if each_tick is not None:
            each_tick(engine)


@pytest.mark.parametrize("transport", ["rules", "http"])
async def test_cognitive_run_perceives_attends_and_bounds_prompts(
    tmp_path, bm25_embedder, transport
):
    """`http`: every prompt crosses real HTTP on loopback to the bundled emulator (it
    answers with the rules policy from the task hint), as it would to a model server."""
    cfg = town({"profile": "cognitive", "cognitive": cognitive()})
    async with AsyncExitStack() as stack:
        llm_cfg: dict[str, Any] = {"provider": "rules"}
        if transport == "http":
            emulator, url = await stack.enter_async_context(serve(EmulatorConfig()))
            llm_cfg = {"endpoints": [{"base_url": url, "model": "em", "send_task_hints": True}]}
        llm = RecordingGateway(llm_cfg)
        await _cognitive_run(cfg, tmp_path, bm25_embedder, llm)
        if transport == "http":
            assert emulator.stats["tasks"].get("attention", 0) > 0  # attention went over HTTP
            await llm.aclose()


async def _cognitive_run(cfg, tmp_path, bm25_embedder, llm) -> None:
    engine = await _engine(cfg, tmp_path, bm25_embedder, llm)
    biggest: list[int] = []
    try:
        await _run(
            engine,
            16,
            lambda e: biggest.append(
                max((len(s.sensory) for s in e.memory.cognition.agents.values()), default=0)
            ),
        )
        cognition = engine.memory.cognition
        # every perceived event entered a sensory buffer, never more than N held
        assert cognition.counters["raw_events"] > 2 * N and max(biggest) == N
        assert all(len(s.sensory) <= N for s in cognition.agents.values())
        # attention: every N raw events of an agent became one observation memory (LLM batch)
        assert cognition.counters["observations"] > 0
        assert any(task == "attention" for task, _ in llm.sent)
        agent_id = next(iter(cognition.agents))
        hits = await engine.memory.agent(agent_id).stream.search(
            "I noticed", topic="observation", top_k=50
        )
        assert hits and all(h.text.startswith("I noticed:") for h in hits)
        observed = sum(s.observations for s in cognition.agents.values())
        assert observed == cognition.counters["observations"]
        # semantic consolidation: facts (LLM task `facts`) in the graph and as memories
        assert cognition.counters["facts"] > 0 and any(t == "facts" for t, _ in llm.sent)
        assert cognition.counters["meta"] > 0  # meta-cognition ran on its schedule
        learner = next(a for a, s in cognition.agents.items() if s.fact_graph is not None)
        graph = [f[:3] for f in cognition.state(learner).facts_about("I", limit=1000)]
        assert graph and all(rel in ("went to", "noticed") for _, rel, _ in graph)
        semantic = await engine.memory.agent(learner).stream.search(
            "I noticed went", topic="fact", types=["semantic"], top_k=20
        )
        assert {h.text for h in semantic} <= {f"{s} {r} {o}" for s, r, o in graph}
        assert semantic
        # raw perception reached the stream only through attention
        raw = await engine.memory.agent(agent_id).stream.search("the", topic="event", top_k=50)
        assert raw == []
        # prompts: never more memory items than the working memory's capacity
        texts = await _all_texts(engine)
        counts = [memory_items(p, texts) for task, p in llm.sent if task in COGNITION_TASKS]
        assert counts and max(counts) <= CAPACITY
        assert max(len(s.working) for s in cognition.agents.values()) <= CAPACITY
    finally:
        await engine.close()


async def test_default_profile_prompts_hold_more_than_that_capacity(tmp_path, bm25_embedder):
    """The control for the capacity check: the same run without the cognitive profile."""
    llm = RecordingGateway({"provider": "rules"})
    engine = await _engine(town({}), tmp_path, bm25_embedder, llm)
    try:
        await _run(engine, 16)
        texts = await _all_texts(engine)
        counts = [memory_items(p, texts) for task, p in llm.sent if task in COGNITION_TASKS]
        assert max(counts) > CAPACITY
        assert engine.memory.cognition is None
    finally:
        await engine.close()


async def test_agent_types_run_their_own_profiles(tmp_path, bm25_embedder, run):
    types = {"citizen": 2, "trader": 1, "scholar": 1}
    memory = {
        "agent_types": {
            "trader": {"profile": "finmem"},
            "scholar": {"profile": "cognitive", "cognitive": cognitive()},
        }
    }
    cfg = town(memory, agents={"count": 12, "types": types}, ticks=6)
    out = await run(cfg, "typed")
    rows = read_agent_profiles(out).to_pylist()
    sc = load_scenario(cfg)
    from societas.agents.population import population_for

    pop = population_for(sc)
    expect = {"citizen": "default", "trader": "finmem", "scholar": "cognitive"}
    assert [r["agent_id"] for r in rows] == list(range(12))
    for r in rows:
        assert r["agent_type"] == pop.profiles[r["agent_id"]].agent_type
        assert r["memory_profile"] == expect[r["agent_type"]]
    assert {r["memory_profile"] for r in rows} == set(expect.values())


async def test_only_cognitive_agents_perceive_through_attention(tmp_path, bm25_embedder):
    memory = {"agent_types": {"scholar": {"profile": "cognitive", "cognitive": cognitive()}}}
    cfg = town(memory, agents={"count": 12, "types": {"citizen": 1, "scholar": 1}}, ticks=10)
    engine = await _engine(cfg, tmp_path, bm25_embedder)
    try:
        await _run(engine, 10)
        group = engine.memory
        scholars = {a for a, t, _ in group.profiles.rows() if t == "scholar"}
        assert set(group.cognition.agents) <= scholars
        topics: dict[int, set[str]] = {}
        for row, agent in enumerate(group.hot.agent_ids):
            topics.setdefault(agent, set()).add(group.hot.topics[row])
        citizens = set(engine.agents) - scholars
        assert any("activity" in topics.get(a, set()) for a in citizens)  # stored directly
        assert not any("activity" in topics.get(a, set()) for a in scholars)  # perceived
        # resume: the restored memory gives every agent the same profile
        ckpt = tmp_path / "ckpt"
        ckpt.mkdir()
        await engine.checkpoint(str(ckpt))
        again = await _engine(cfg, tmp_path / "again", bm25_embedder)
        try:
            await again.restore(str(ckpt))
            assert again.memory.profiles.rows() == group.profiles.rows()
            assert again.memory.cognition.get_state() == group.cognition.get_state()
        finally:
            await again.close()
    finally:
        await engine.close()


def test_bad_profile_names_fail_before_work_starts():
    bad = town({"agent_types": {"trader": {"profile": "finmen"}}}, agents={"types": {"trader": 1}})
    with pytest.raises(ScenarioConfigError, match=r"memory\.agent_types\.trader\.profile.*finmen"):
        load_scenario(bad)
    missing = town({"agent_types": {"trader": {"profile": "finmem"}}})
    with pytest.raises(ScenarioConfigError, match=r"memory\.agent_types\.trader: no agent has"):
        load_scenario(missing)
    with pytest.raises(ScenarioConfigError, match=r"memory\.profile.*cogntive"):
        load_scenario(town({"profile": "cogntive"}))
    with pytest.raises(ScenarioConfigError, match=r"agents\.types\.trader: weight"):
        load_scenario(town({}, agents={"count": 12, "types": {"trader": -1.0}}))


async def test_a_resumed_cognitive_run_equals_an_uninterrupted_one(tmp_path, bm25_embedder):
    """Sensory buffers, unattended events and working memory are in the checkpoint: after
    a resume, results and the layers are those of the run that never stopped."""
    cfg = town({"profile": "cognitive", "cognitive": cognitive()}, ticks=10)
    whole, split = tmp_path / "whole", tmp_path / "split"
    await run_local_async(cfg, whole, embedder=bm25_embedder)
    done = {"n": 0}

    def stop_after_five() -> bool:
        done["n"] += 1
        return done["n"] >= 5

    with pytest.raises(RunInterrupted):
        await run_local_async(cfg, split, embedder=bm25_embedder, stop=stop_after_five)
    stopped = _cognitive_states(split)
    assert stopped and any(s["agents"] for s in stopped.values())  # layers to carry over
    await run_local_async(cfg, split, embedder=bm25_embedder, resume=True)
    for table in TABLES:
        assert read_table(whole, table).equals(read_table(split, table)), table
    assert _cognitive_states(whole)[10] == _cognitive_states(split)[10]


def _cognitive_states(run_dir) -> dict[int, dict[str, Any]]:
    """The cognitive layers in each checkpoint of a run, by its tick."""
    out = {}
    for state in sorted(run_dir.glob("**/group-0000-memory/state.json")):
        data = json.loads(state.read_text())
        tick = int(re.findall(r"tick=(\d+)", str(state))[-1])
        out[tick] = data["cognitive"]
    return out
