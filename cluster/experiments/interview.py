"""Interviews and inspection after a run: one agent loaded from the run's last checkpoint
(local or Ray runs write the same format) into a scratch folder, so the run is never changed.

The agent's code is not run and nothing is imported from the run folder: the group is rebuilt
with the built-in blocks only, from the scenario data in config.json.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from societas.agents.environment import SimTime
from societas.agents.experiments.checks import memory_config_of, tick_at
from societas.agents.experiments.schema import Question
from societas.agents.experiments.survey import ask
from societas.agents.llm import LLMGateway
from societas.agents.llm.config import LLMConfig
from societas.agents.runtime.engine import GroupEngine, memory_checkpoint_dir
from societas.cluster import checkpoint as ckpt
from societas.cluster.experiments.branch import run_scenario_of
from societas.cluster.loop.engines import EngineFactory
from societas.cluster.loop.local import partition
from societas.cluster.preflight import check_llm
from societas.memory import GroupMemory


class NoCheckpointError(FileNotFoundError):
    """The run folder holds no complete checkpoint to load an agent from."""


def _last(run_dir: Path) -> int:
    last = ckpt.last_complete(run_dir)
    if last is None:
        raise NoCheckpointError(
            f"{str(run_dir)!r} has no checkpoint, so its agents' memories were not kept; "
            "runs write one every 6 simulated hours by default (cluster.checkpoint_hours) "
            "— rerun with checkpoints on"
        )
    return last


def checkpoint_at(run_dir: Path, cfg: Any, at: tuple[int, int] | None) -> int:
    """The checkpoint an interview loads: the last one, or with `at` (day, hour) the last
    one at or before that time; an error naming the run's span when there is none."""
    last = _last(run_dir)
    if at is None:
        return last
    day, hour = at
    if not 0 <= hour <= 23 or day < 0:
        raise ValueError(f"--at: {day}:{hour} is not DAY:HOUR (day >= 0, hour 0..23)")
    tick = tick_at(cfg, day, hour)
    ticks = ckpt.complete_ticks(run_dir)
    if tick > last:
        raise ValueError(
            f"--at: day {day} {hour:02d}:00 is past the run's last checkpoint "
            f"({_when(cfg, last)}, tick {last})"
        )
    earlier = [t for t in ticks if t <= tick]
    if not earlier:
        raise ValueError(
            f"--at: day {day} {hour:02d}:00 is before the run's first checkpoint "
            f"({_when(cfg, ticks[0])}, tick {ticks[0]})"
        )
    return earlier[-1]


def _when(cfg: Any, tick: int) -> str:
    """'day 0 12:00' for the start of `tick`."""
    t = SimTime.of(tick, cfg.tick_seconds, cfg.start_hour)
    return f"day {t.day} {int(t.t // 3600):02d}:{int(t.t % 3600 // 60):02d}"


@asynccontextmanager
async def open_agent(
    run_dir: str | Path,
    agent_id: int,
    at: tuple[int, int] | None = None,
    llm_config: LLMConfig | None = None,
) -> AsyncIterator[GroupEngine]:
    """The group engine holding `agent_id`, restored from the last checkpoint or the one at
    `at` (day, hour) (scratch copy), answering through the run's LLM or `llm_config`."""
    run_dir = Path(run_dir)
    cfg = run_scenario_of(run_dir)
    last = checkpoint_at(run_dir, cfg, at)
    if not 0 <= agent_id < cfg.agents.count:
        raise ValueError(f"--agent: {agent_id} is not in 0..{cfg.agents.count - 1}")
    manifest, _ = ckpt.load_checkpoint(run_dir, last)
    ids = partition(cfg.agents.count, len(manifest.groups))
    group = next(g for g, part in enumerate(ids) if agent_id in part)
    # Data only: no blocks (code), no scheduled surveys or interventions, no cache writes.
    cfg = cfg.model_copy(update={"blocks": [], "code_dirs": [], "surveys": [], "arms": []})
    llm = llm_config or cfg.llm
    llm = llm.model_copy(update={"cache": llm.cache.model_copy(update={"mode": "off"})})
    scratch = Path(tempfile.mkdtemp(prefix="societas-interview-"))
    engine = EngineFactory(cfg, ids, scratch, gateway=lambda _g: LLMGateway(llm))(group)
    try:
        await engine.setup()
        await engine.restore(str(ckpt.group_dir(run_dir, last, group)))
        now = SimTime.of(last, cfg.tick_seconds, cfg.start_hour)
        assert engine.memory is not None
        engine.memory.clock.set(now.day, now.t)
        yield engine
    finally:
        await engine.close()
        await engine.llm.aclose()
        await asyncio.to_thread(shutil.rmtree, scratch, True)


async def open_memory(
    run_dir: str | Path,
    group: int,
    root: str | Path,
    *,
    at: tuple[int, int] | None = None,
    retrieval: dict[str, Any] | None = None,
    embedder: Any = None,
) -> GroupMemory:
    """Group `group`'s memory as the run's last checkpoint (or the one at `at`, day and hour)
    holds it, restored under `root`; `retrieval` overrides ranking settings, so several
    rankings can be compared on the same memories. The caller closes it."""
    run_dir = Path(run_dir)
    cfg = run_scenario_of(run_dir)
    tick = checkpoint_at(run_dir, cfg, at)
    source = memory_checkpoint_dir(ckpt.group_dir(run_dir, tick, group), group)
    if not source.is_dir():
        raise ValueError(f"group: the checkpoint at tick {tick} has no group {group}")
    config = cfg.memory.model_copy(update={"group_id": group})
    if retrieval:  # validated as the scenario's own retrieval section would be
        ranking = type(config.retrieval).model_validate(
            {**config.retrieval.model_dump(), **retrieval}
        )
        config = config.model_copy(update={"retrieval": ranking})
    return await GroupMemory.restore(
        source, Path(root), config=config, memory_config=memory_config_of(cfg), embedder=embedder
    )


INTERVIEWS = "interviews.jsonl"  # in the run folder: every interview asked, with provenance


async def interview_async(
    run_dir: str | Path,
    agent_id: int,
    question: str,
    memories: int = 5,
    at: tuple[int, int] | None = None,
    llm_config: LLMConfig | None = None,
    given_by: str = "--endpoint",
) -> dict[str, Any]:
    """The agent's answer to an open question, from its persona, status and memories at the
    last checkpoint (or at `at`), by the run's LLM or `llm_config` (task `interview`, given by
    the option `given_by`); appended with its answer_source to the run's interviews.jsonl."""
    if not question.strip():
        raise ValueError("QUESTION: ask something (got an empty question)")
    scenario = run_scenario_of(Path(run_dir))
    given = None if llm_config is None else given_by
    await reachable(llm_config or scenario.llm, given, task="interview")
    tick = checkpoint_at(Path(run_dir), scenario, at)
    async with open_agent(run_dir, agent_id, at, llm_config) as engine:
        q = Question(id="interview", kind="open", text=question.strip())
        (answer,) = await ask(engine, [(agent_id, q)], memories=memories, task="interview")
        gw = engine.llm
        by_rules = gw.answers_by_rules("interview")
        endpoints = (
            [] if by_rules else [gw.config.endpoints[i] for i in gw.config.route("interview")]
        )
        out = {
            "agent_id": agent_id,
            "name": engine.agents[agent_id].profile.name,
            "checkpoint_tick": tick,
            "question": q.text,
            "answer": answer.text,
            "answer_source": answer.answer_source,
            "fallback_reason": answer.fallback_reason,
            "llm": "rules" if by_rules else gw.config.provider,
            "model": "rules (not a language model)" if by_rules else endpoints[0].model,
        }
    await asyncio.to_thread(_append, Path(run_dir) / INTERVIEWS, out)
    return out


def _append(path: Path, record: dict[str, Any]) -> None:
    """One JSON line at the end of `path`."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")


async def reachable(
    llm: LLMConfig, given_by: str | None = "--endpoint", task: str | None = None
) -> None:
    """A clear error when an endpoint of `llm` (those serving `task`, when given) does not
    answer with its model (before loading anything), naming the option that gave it, or
    (`given_by` None) its place in the run's own config."""
    if task is not None and llm.to_rules(task):
        return
    wanted = None if task is None else llm.route(task)
    problems = await asyncio.to_thread(check_llm, llm, endpoints=wanted)
    if not problems:
        return
    problem = problems[0]
    down = problem.setting.endswith(".base_url")
    if given_by is None:
        what = f"{problem.setting}: {problem.value}, the run's model for interviews,"
        if down:
            why = f"is not reachable ({problem.message}); start it"
        else:
            why = f"{problem.message}; {problem.hint}"
        raise ValueError(f"{what} {why}, or answer with --endpoint URL --model NAME or --llm FILE")
    if down:
        raise ValueError(f"{given_by}: {problem.value} is not reachable ({problem.message})")
    raise ValueError(f"{given_by}: {problem.line()}")


def interview(
    run_dir: str | Path,
    agent_id: int,
    question: str,
    at: tuple[int, int] | None = None,
    llm_config: LLMConfig | None = None,
    given_by: str = "--endpoint",
) -> dict[str, Any]:
    """Synchronous `interview_async`."""
    return asyncio.run(
        interview_async(
            run_dir, agent_id, question, at=at, llm_config=llm_config, given_by=given_by
        )
    )


def inspect_agent(run_dir: str | Path, agent_id: int, memory_limit: int = 30) -> dict[str, Any]:
    """Profile, status, memories by tier with importance, relationships, survey answers:
    the report's agent view (cluster.report.agent_view) from the last checkpoint."""
    from societas.cluster.report.agent_view import agent_view

    run_dir = Path(run_dir)
    cfg = run_scenario_of(run_dir)
    _last(run_dir)
    if not 0 <= agent_id < cfg.agents.count:
        raise ValueError(f"--agent: {agent_id} is not in 0..{cfg.agents.count - 1}")
    view = agent_view(run_dir, agent_id, memory_limit=memory_limit)
    data = view.model_dump(mode="json")
    data["prompts"] = recent_prompts(run_dir, view.name)
    if not data["prompts"] and cfg.llm.provider == "rules":
        data["notes"].append("prompts are kept in llm-cache for runs on a model, not for rules")
    return data


def recent_prompts(run_dir: Path, name: str, limit: int = 5) -> list[dict[str, str]]:
    """The agent's last prompts and answers from the run's LLM response cache (model runs)."""
    from societas.agents.cognition.persona import plain_name

    found: list[dict[str, str]] = []
    marker = f"You are {plain_name(name)},"  # prompts name people without their ids
    for segment in sorted((run_dir / "llm-cache").glob("segment-*.jsonl")):
        with segment.open(encoding="utf-8") as fh:
            for line in fh:
                if marker not in line:
                    continue
                try:
                    entry = json.loads(line)
                    messages = entry["request"]["messages"]
                except (ValueError, KeyError, TypeError):
                    continue
                if messages and marker in str(messages[0].get("content", "")):
                    prompt = str(messages[-1].get("content", ""))
                    found.append({"prompt": prompt[-400:], "answer": str(entry["text"])[:400]})
    return found[-limit:]


def _answer_note(row: dict[str, Any]) -> str:
    """Where a survey answer came from, and for a fallback why, as `interview` prints it."""
    source = row.get("answer_source")
    if source is None:
        return ""
    reason = row.get("fallback_reason")
    return f" [{source}: {reason}]" if source == "fallback" and reason else f" [{source}]"


def format_view(view: dict[str, Any], memories: int = 15) -> str:
    """A terminal page of one agent's view."""
    lines = [
        f"# agent {view['agent_id']}: {view['name']} (checkpoint tick {view['checkpoint_tick']})"
    ]
    lines.append("\n## profile")
    lines += [f"  {k}: {v}" for k, v in view["profile"].items()]
    lines.append("\n## status")
    lines += [f"  {k}: {v}" for k, v in sorted(view["status"].items()) if k != "social_network"]
    by_tier: dict[str, list[dict[str, Any]]] = {}
    for m in view["memories"]:
        by_tier.setdefault(str(m.get("tier", "?")), []).append(m)
    for tier, rows in sorted(by_tier.items()):
        lines.append(f"\n## memories: {tier} ({len(rows)})")
        for m in rows[:memories]:
            imp = m.get("importance")
            imp_s = f"{float(imp):.2f}" if isinstance(imp, int | float) else "?"
            lines.append(
                f"  [{m.get('when', '')}] ({m.get('topic')}, importance {imp_s}) "
                f"{m.get('text', '')}"
            )
    if view["reflections"]:
        lines.append("\n## reflections")
        lines += [f"  {r.get('text', '')} <- {r.get('evidence')}" for r in view["reflections"][:10]]
    lines.append("\n## relationships")
    for r in view["relationships"][:20]:
        rest = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("other_id", "other_name"))
        lines.append(f"  {r.get('other_id')} {r.get('other_name', '')}: {rest}")
    if view["surveys"]:
        lines.append("\n## questions and answers (surveys)")
        for s in view["surveys"][-20:]:
            lines.append(
                f"  day {s.get('day')} {s.get('time')} {s.get('survey')}/{s.get('question_id')}: "
                f"{s.get('answer_text')}{_answer_note(s)}"
            )
    if view.get("prompts"):
        lines.append("\n## recent prompts and answers (LLM cache)")
        for p in view["prompts"]:
            lines.append(f"  > {' '.join(p['prompt'].split())[-200:]}")
            lines.append(f"  < {' '.join(p['answer'].split())[:200]}")
    if view["conversations"]:
        lines.append("\n## recent conversations")
        for c in view["conversations"][-10:]:
            lines.append(
                f"  [{c['when']}] {c['speaker_name']} -> {c['listener_name']}: {c['text']}"
            )
    lines += [f"\nnote: {n}" for n in view["notes"]]
    return "\n".join(lines)
