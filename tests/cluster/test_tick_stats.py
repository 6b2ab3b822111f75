"""A tick's figures include its conversation rounds: the LLM calls made while agents talk
(dialogue turns, summaries, importance ratings) are reported with that tick, the last one
included, so the `llm` results table, run.json and Prometheus add up to the calls the model
server actually answered. The driver's replay log stays bounded when checkpoints are off.

The model is the bundled emulator, a real aiohttp server on loopback that answers with the
rules policy and counts every chat request it receives: an independent count of the calls.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
import yaml

from societas.agents.runtime.results import TABLES, read_table
from societas.agents.scenario import load_scenario
from societas.cluster.loop.local import partition, run_local
from societas.cluster.loop.run import RunInterrupted
from societas.cluster.observe.metrics import MetricsConfig, RunMetrics
from societas.cluster.ray.runtime import (
    ClusterConfig,
    EngineFactory,
    InProcessGroup,
    RunSpec,
    make_ray_groups,
    run_groups,
    run_on_ray,
)
from societas.testing.emulator import EmulatorConfig, serve

ROOT = Path(__file__).resolve().parents[2]
AGENTS, GROUPS, TICKS = 16, 2, 3


pytestmark = pytest.mark.usefixtures("own_local_ray")


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[Any, str]]:
    """The emulator on loopback, served from a thread (Ray actors and `asyncio.run` callers
    reach it alike); yields (emulator, base URL)."""
    loop = asyncio.new_event_loop()
    ready: dict[str, Any] = {}
    started, stop = threading.Event(), asyncio.Event()

    async def main() -> None:
        async with serve(EmulatorConfig(base_latency_s=0.0)) as (emu, url):
            ready.update(emu=emu, url=url)
            started.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert started.wait(30), "the emulator did not start"
    yield ready["emu"], ready["url"]
    loop.call_soon_threadsafe(stop.set)
    thread.join(10)


def _town(url: str | None = None, ticks: int = TICKS) -> dict[str, Any]:
    """A small town where people talk a lot, every tick (the last one included)."""
    cfg = yaml.safe_load((ROOT / "configs" / "town.yaml").read_text())
    cfg.update(ticks=ticks, groups=GROUPS, start_hour=8)
    cfg["agents"] = {**cfg["agents"], "count": AGENTS}
    cfg["social"] = {**cfg["social"], "chat_prob": 0.9, "friend_chat_prob": 1.0}
    cfg["interventions"] = [{"tick": 1, "kind": "fact", "fact": "festival", "select": {"count": 3}}]
    if url is not None:
        endpoint = {"base_url": url, "model": "emulated", "send_task_hints": True}
        cfg["llm"] = {"endpoints": [endpoint], "timeout_s": 30, "cache": {"mode": "off"}}
    return cfg


def _llm_rows(run_dir: Path) -> list[dict[str, Any]]:
    return read_table(run_dir, "llm").to_pylist()


def _assert_adds_up(run_dir: Path, calls: int) -> None:
    """The `llm` table, run.json's totals and its per-task figures all equal `calls`."""
    rows = _llm_rows(run_dir)
    talk = [r for r in read_table(run_dir, "dialogues").to_pylist() if r["conversation_id"]]
    assert {r["tick"] for r in talk} >= {TICKS - 1}, "people must talk in the last tick"
    assert {(r["tick"], r["group_id"]) for r in rows} == {
        (t, g) for t in range(TICKS) for g in range(GROUPS)
    }
    run = json.loads((run_dir / "run.json").read_text())
    assert sum(r["requests"] for r in rows) == calls
    assert run["totals"]["llm_requests"] == calls
    assert run["llm_requests"] == calls  # the progress line's figure
    assert sum(t["requests"] for t in run["llm_tasks"].values()) == calls
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)
    assert run["totals"]["llm_tokens"] == tokens > 0


def _served(emu: Any) -> int:
    return int(emu.stats["chat_requests"])


def test_local_run_reports_every_llm_call_of_its_conversations(tmp_path, model, bm25_embedder):
    emu, url = model
    before = _served(emu)
    run_local(_town(url), tmp_path, GROUPS, embedder=bm25_embedder)
    calls = _served(emu) - before
    assert calls > 0 and not any(emu.stats["injected"].values())  # no failed attempts
    _assert_adds_up(tmp_path, calls)


def test_ray_run_reports_every_llm_call_to_parquet_run_json_and_prometheus(tmp_path, model):
    emu, url = model
    metrics = RunMetrics(MetricsConfig(port=0))
    before = _served(emu)
    run_on_ray(_town(url), tmp_path, GROUPS, metrics=metrics, cluster={"checkpoint_every": 2})
    calls = _served(emu) - before
    _assert_adds_up(tmp_path, calls)
    assert metrics.totals["llm_requests_total"] == calls
    labels = {"model": "emulated", "endpoint": url}
    per_group = [metrics.value("llm_requests_total", group=str(g), **labels) for g in (0, 1)]
    assert sum(per_group) == calls
    assert metrics.value("llm_latency_seconds_count", **labels) == calls
    added = sum(r["memories_added"] for r in _llm_rows(tmp_path))
    tiers = [
        metrics.value("memories", group=str(g), tier=t) for g in (0, 1) for t in ("warm", "cold")
    ]
    assert sum(tiers) == added > 0  # the rounds' dialogue memories are counted with their tick


def test_resumed_run_sums_llm_tasks_over_its_invocations(tmp_path, bm25_embedder):
    """The rules policy counts as calls; a run stopped after tick 1 and resumed reports the
    same per-task figures as the uninterrupted run, each tick once."""
    whole = tmp_path / "whole"
    run_local(_town(), whole, GROUPS, embedder=bm25_embedder, cluster={"checkpoint_every": 1})
    calls = json.loads((whole / "run.json").read_text())["llm"]  # the gateways' own counts
    (rules,) = calls.values()
    _assert_adds_up(whole, rules["requests"])

    part = tmp_path / "part"
    ticks: list[int] = []

    def progress(p: Any) -> None:
        ticks.append(p.tick)

    with pytest.raises(RunInterrupted):
        run_local(
            _town(),
            part,
            GROUPS,
            embedder=bm25_embedder,
            cluster={"checkpoint_every": 1},
            on_progress=progress,
            stop=lambda: len(ticks) >= 1,
        )
    run_local(_town(), part, GROUPS, embedder=bm25_embedder, resume=True)
    first, second = (json.loads((d / "run.json").read_text()) for d in (whole, part))
    assert second["start_tick"] == 2 and second["llm_tasks"] == first["llm_tasks"]
    assert _llm_rows(part) == _llm_rows(whole)


def _scenario(ticks: int) -> Any:
    return load_scenario(_town(ticks=ticks))


def test_replay_log_stays_on_disk_without_checkpoints_and_recovery_still_works(
    tmp_path, bm25_embedder
):
    """Checkpoints off: the driver keeps no finished tick's inbox in RAM (they go to
    RUN_DIR/replay), a killed group actor is rebuilt from tick 0 with them, the results equal
    an uninterrupted run's, and the replay files are gone at the end."""
    ticks = 6
    sc = _scenario(ticks)
    ids = partition(AGENTS, GROUPS)
    spec = RunSpec(run_dir=tmp_path / "ref", ticks=ticks, seed=sc.seed, agents=AGENTS)
    ref_groups = [
        InProcessGroup(EngineFactory(sc, ids, tmp_path / "ref")(g)) for g in range(GROUPS)
    ]
    ref, _ = asyncio.run(run_groups(ref_groups, spec, ClusterConfig(checkpoint_every=0)))

    run_dir = tmp_path / "run"
    cfg = ClusterConfig(checkpoint_every=0)
    handles = make_ray_groups(EngineFactory(sc, ids, run_dir), GROUPS, cfg)
    held: list[tuple[int, int, int]] = []  # (tick, inboxes in RAM, ticks on disk) per group

    def on_tick(report: Any) -> None:
        for h in handles:
            held.append((report.tick, h.replay.in_ram, h.replay.on_disk))
        files = sorted((run_dir / "replay").glob("group-*/tick-*.json.gz"))
        assert len(files) == GROUPS * (report.tick + 1)
        if report.tick == 3:
            ray.kill(handles[1].inner.actor, no_restart=True)

    spec = spec.model_copy(update={"run_dir": run_dir})
    result, _ = asyncio.run(run_groups(handles, spec, cfg, on_tick=on_tick))
    assert handles[1].restarts == 1 and handles[0].restarts == 0 and result.checkpoints == []
    assert max(n for _, n, _ in held) == 0, held  # finished ticks never stay in RAM
    assert [d for t, _, d in held if t == ticks - 1] == [ticks] * GROUPS
    assert not (run_dir / "replay").exists()
    assert result.digest == ref.digest and result.totals == ref.totals
    for table in TABLES:
        got, want = (read_table(d, table).to_pylist() for d in (run_dir, tmp_path / "ref"))
        assert got == want, table


def test_checkpoints_drop_the_replay_log(tmp_path):
    """Checkpoints on: the log holds the ticks since the last checkpoint only, in RAM."""
    from synthetic_groups import SyntheticConfig, SyntheticFactory

    from societas.cluster.loop.groups import ResilientGroup

    factory = SyntheticFactory(SyntheticConfig(agents=60, groups=2, seed=3))
    handles = [ResilientGroup(InProcessGroup(factory(g))) for g in range(2)]
    held: list[int] = []

    def on_tick(report: Any) -> None:
        held.extend(h.replay.in_ram + h.replay.on_disk for h in handles)

    spec = RunSpec(run_dir=tmp_path, ticks=10, seed=3, agents=60)
    result, _ = asyncio.run(
        run_groups(handles, spec, ClusterConfig(checkpoint_every=3), on_tick=on_tick)
    )
    assert result.checkpoints == [3, 6, 9, 10]
    assert held == [n for t in range(10) for n in [t % 3 + 1] * 2], held  # at on_tick: before
    assert not (tmp_path / "replay").exists()  # nothing spilled with checkpoints on


@pytest.fixture(scope="module")
def five_ticks(tmp_path_factory):
    """An uninterrupted in-process run of 5 ticks: what a run with a lost group must equal."""
    run_dir = tmp_path_factory.mktemp("five")
    sc = _scenario(5)
    factory = EngineFactory(sc, partition(AGENTS, GROUPS), run_dir)
    spec = RunSpec(run_dir=run_dir, ticks=5, seed=sc.seed, agents=AGENTS)
    handles = [InProcessGroup(factory(g)) for g in range(GROUPS)]
    result, _ = asyncio.run(run_groups(handles, spec, ClusterConfig(checkpoint_every=2)))
    return run_dir, result


@pytest.mark.parametrize("where", ["round", "finish"])
def test_group_lost_in_a_conversation_round_or_at_finish_is_counted_once(
    tmp_path, five_ticks, where
):
    """A group actor dies in tick 3's first conversation round, or in its `finish_tick` after
    the rounds: it is rebuilt from the tick-2 checkpoint, replays tick 2 and redoes what it
    lost of tick 3; results equal the uninterrupted run's and Prometheus counts every LLM call
    once (replayed ticks' figures were reported by the original and are dropped)."""
    from faulty_engines import DyingEngineFactory

    ref_dir, ref = five_ticks
    sc, run_dir, marker = _scenario(5), tmp_path / "run", tmp_path / "died.json"
    factory = DyingEngineFactory(
        sc, partition(AGENTS, GROUPS), run_dir, group_id=1, crash_tick=3, marker=marker, where=where
    )
    cfg = ClusterConfig(checkpoint_every=2, keep_checkpoints=0)
    handles = make_ray_groups(factory, GROUPS, cfg)
    metrics = RunMetrics(MetricsConfig(port=0))
    spec = RunSpec(run_dir=run_dir, ticks=5, seed=sc.seed, agents=AGENTS)
    result, _ = asyncio.run(run_groups(handles, spec, cfg, metrics=metrics))
    assert json.loads(marker.read_text())["where"] == where
    assert handles[1].restarts == 1 and result.recoveries == 1
    assert result.digest == ref.digest
    for key in ref.totals:  # vector_upserts included: a restore rewrites nothing unchanged
        assert result.totals[key] == ref.totals[key], key
    for table in TABLES:
        got, want = (read_table(d, table).to_pylist() for d in (run_dir, ref_dir))
        assert got == want, table
    reported = sum(r["requests"] for r in _llm_rows(run_dir))
    assert metrics.totals["llm_requests_total"] == reported == result.totals["llm_requests"]
    assert result.llm_tasks == ref.llm_tasks
