"""One agent, everything the run kept about it: the view behind the report's agent pages,
`societas report RUN --agent ID` and `societas inspect` (one code path: call `agent_view`).

Profile (the generated population), status over time (agent_state + needs), memories with
importance and reflections with their evidence (last checkpoint), relationships
(`relationships` table when the run has one, else the social network's ties), conversations
and survey answers (results tables).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
from pydantic import BaseModel, Field

from societas.cluster.report import figures as F
from societas.cluster.report import memories as M
from societas.cluster.report.data import ReportInputError, RunData

NEEDS = ("hunger", "energy", "safety", "social")


class AgentView(BaseModel):
    """What a reader sees of one agent (JSON-ready; `inspect` may print it as it likes)."""

    agent_id: int
    name: str
    profile: dict[str, Any] = Field(default_factory=dict)
    status: dict[str, Any] = Field(default_factory=dict, description="KV at the last checkpoint")
    checkpoint_tick: int | None = None
    timeline: dict[str, list[Any]] = Field(default_factory=dict, description="per tick")
    memories: list[dict[str, Any]] = Field(default_factory=list)
    reflections: list[dict[str, Any]] = Field(default_factory=list)
    relationships: list[dict[str, Any]] = Field(default_factory=list)
    conversations: list[dict[str, Any]] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)
    surveys: list[dict[str, Any]] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def _run(run: RunData | str | Path) -> RunData:
    return run if isinstance(run, RunData) else RunData(Path(run))


def _names(run: RunData) -> dict[int, str]:
    pop = run.population
    return {p.id: p.name for p in pop.profiles} if pop is not None else {}


def agent_view(
    run: RunData | str | Path,
    agent_id: int,
    *,
    memory_limit: int = 60,
    conversation_limit: int = 40,
) -> AgentView:
    """Everything the run kept about one agent; a bad id is a ReportInputError naming it."""
    run = _run(run)
    if not 0 <= agent_id < max(1, run.agents):
        raise ReportInputError(
            f"--agent: {agent_id} is not an agent of this run (ids 0..{run.agents - 1})"
        )
    names = _names(run)
    view = AgentView(agent_id=agent_id, name=names.get(agent_id, f"agent {agent_id}"))
    pop = run.population
    if pop is not None:
        prof = dataclasses.asdict(pop.profiles[agent_id])
        prof["trust in government"] = round(float(prof.pop("trust")), 3)
        view.profile = {
            k: _plain(v)
            for k, v in prof.items()
            if k != "id" and not k.startswith("_") and v not in ({}, [], None, "")
        }
    _timeline(run, view)
    _memory_parts(run, view, memory_limit)
    _reflections(run, view, memory_limit)
    _relationships(run, view, names)
    view.conversations = [
        {
            "when": run.tick_label(int(t)),
            "speaker": int(s),
            "speaker_name": names.get(int(s), str(s)),
            "listener": int(li),
            "listener_name": names.get(int(li), str(li)),
            "channel": ch,
            "place": pl,
            "text": tx,
        }
        for t, s, li, ch, pl, tx in run.rows(
            "SELECT tick, speaker, listener, channel, place, text FROM dialogues "
            "WHERE speaker = ? OR listener = ? ORDER BY tick, speaker, listener LIMIT ?",
            agent_id,
            agent_id,
            conversation_limit,
        )
    ]
    view.events = [
        {"when": run.tick_label(int(t)), "kind": k, "detail": d}
        for t, k, d in run.rows(
            "SELECT tick, kind, detail FROM events WHERE agent_id = ? ORDER BY tick LIMIT 50",
            agent_id,
        )
    ]
    if run.has("surveys"):
        cols = [c[0] for c in run.db.execute("DESCRIBE surveys").fetchall()]
        cur = run.db.execute(
            "SELECT * FROM surveys WHERE agent_id = ? ORDER BY ALL LIMIT 50", [agent_id]
        )
        view.surveys = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    return view


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 3)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _timeline(run: RunData, view: AgentView) -> None:
    cols = run.columns(
        "SELECT s.tick, s.place, s.place_kind, s.activity, s.category, s.currency, s.emotion, "
        "n.hunger, n.energy, n.safety, n.social FROM agent_state s LEFT JOIN needs n "
        "ON n.tick = s.tick AND n.agent_id = s.agent_id WHERE s.agent_id = ? ORDER BY s.tick",
        view.agent_id,
    )
    if not cols:
        view.notes.append("no agent_state rows for this agent")
        return
    view.timeline = {
        k: [(_plain(float(x)) if isinstance(x, float | np.floating) else _py(x)) for x in v]
        for k, v in cols.items()
    }


def _py(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def _memory_parts(run: RunData, view: AgentView, limit: int) -> None:
    tick, _, _ = M.memory_files(run.dir)
    view.checkpoint_tick = tick
    if tick is None:
        view.notes.append(
            "this run has no checkpoint: memories, reflections and the final status are kept "
            "in checkpoints (enable them to see them here)"
        )
        return
    view.status = {k: _plain(v) for k, v in M.agent_status(run.dir, view.agent_id).items()}
    rows = M.agent_memories(run.dir, view.agent_id, limit=5000)
    for r in rows:
        r["when"] = M.time_label(r.pop("day"), r.pop("time"))
        r["evidence"] = [int(e) for e in (r.get("evidence") or [])]
    view.reflections = [r for r in rows if r["topic"] in M.REFLECTION_TOPICS or r["evidence"]]
    view.memories = rows[:limit]


def _reflections(run: RunData, view: AgentView, limit: int) -> None:
    """Reflections with their evidence: the `reflections` table when the run has one (else
    the checkpoint's memories with evidence), evidence texts from the checkpoint."""
    if run.has("reflections"):
        importance = {int(r["id"]): r["importance"] for r in view.reflections}
        view.reflections = [
            {"id": int(mid), "when": run.tick_label(int(t)), "text": text,
             "importance": importance.get(int(mid)),
             "evidence": [int(e) for e in str(ev or "").split(",") if e.strip()]}
            for t, mid, text, ev in run.rows(
                "SELECT tick, memory_id, text, evidence_ids FROM reflections "
                "WHERE agent_id = ? ORDER BY tick DESC, memory_id DESC LIMIT ?",
                view.agent_id,
                limit,
            )
        ]  # fmt: skip
    view.reflections = view.reflections[:limit]
    by_id = M.memories_by_id(run.dir, sorted({e for r in view.reflections for e in r["evidence"]}))
    for r in view.reflections:
        r["evidence_texts"] = [
            {"id": e, "text": by_id[e]["text"] if e in by_id else "(not in the last checkpoint)"}
            for e in r["evidence"]
        ]


def _relationships(run: RunData, view: AgentView, names: dict[int, str]) -> None:
    if run.has("relationships"):
        cols = [c[0] for c in run.db.execute("DESCRIBE relationships").fetchall()]
        cur = run.db.execute(
            "SELECT * FROM relationships WHERE agent_id = ? "
            "QUALIFY row_number() OVER (PARTITION BY other_id ORDER BY tick DESC) = 1 "
            "ORDER BY other_id",
            [view.agent_id],
        )
        for row in cur.fetchall():
            rel = dict(zip(cols, row, strict=True))
            rel["other_name"] = names.get(int(rel["other_id"]), "")
            rel["source"] = "relationships table (last update)"
            view.relationships.append({k: _plain(_py(v)) for k, v in rel.items()})
        return
    pop = run.population
    if pop is None:
        return
    for other, weight in pop.friends.get(view.agent_id, []):
        view.relationships.append(
            {
                "other_id": int(other),
                "other_name": names.get(int(other), ""),
                "tie strength": round(float(weight), 3),
                "source": "social network at the start",
            }
        )


def agent_figure(run: RunData, view: AgentView) -> go.Figure | None:
    """Needs over time, and what the agent did (hover) on a strip below."""
    tl = view.timeline
    if not tl:
        return None
    x = run.hours(np.asarray(tl["tick"]))
    fig = F.new_figure(f"{view.name}: needs and activity over time", "satisfaction", height=340)
    for i, need in enumerate(NEEDS):
        if need in tl:
            fig.add_trace(
                go.Scatter(x=x, y=tl[need], name=need, line={"color": F.PALETTE[i], "width": 2})
            )
    cats = [str(c) for c in tl["category"]]
    palette = {c: F.PALETTE[(i + 4) % len(F.PALETTE)] for i, c in enumerate(sorted(set(cats)))}
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[-0.08] * len(x),
            mode="markers",
            marker={"symbol": "square", "size": 8, "color": [palette[c] for c in cats]},
            name="activity (hover)",
            text=[f"{a} @ {p} ({e})" for a, p, e in zip(tl["activity"], tl["place"],
                                                         tl["emotion"], strict=True)],
            hovertemplate="%{text}",
        )
    )  # fmt: skip
    F.time_axis(fig, run)
    fig.update_yaxes(range=[-0.15, 1.05])
    F.intervention_lines(fig, run, label=False)
    return fig
