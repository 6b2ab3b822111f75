"""Samples of what agents said, decided, thought, reflected and answered in surveys.

Each quote names its agent and links to the agent's page in the report, and a quote of a
model's text or decision its answer_source; the agents quoted are the sample that gets agent
pages. Samples are drawn deterministically (hash order), so
the same run gives the same page.
"""

from __future__ import annotations

from typing import Any

from societas.cluster.report import memories as M
from societas.cluster.report.data import RunData

THOUGHT_TOPICS = ("cognition", "thought")
PER_KIND = 6
MAX_AGENTS = 8


def _names(run: RunData) -> dict[int, str]:
    pop = run.population
    return {p.id: p.name for p in pop.profiles} if pop is not None else {}


def _source(run: RunData, table: str) -> str:
    """The SQL for a table's `answer_source` ('' for runs written before it existed)."""
    if not run.has(table):
        return "''"
    cols = {c[0] for c in run.db.execute(f"DESCRIBE {table}").fetchall()}
    return "answer_source" if "answer_source" in cols else "''"


def samples(run: RunData) -> dict[str, list[dict[str, Any]]]:
    """{kind: [quote]}: said, decided, thought, reflected, answered (kinds with rows only);
    a quote of model text says its answer_source."""
    names = _names(run)
    out: dict[str, list[dict[str, Any]]] = {}
    said = run.rows(
        f"SELECT tick, speaker, listener, channel, text, {_source(run, 'dialogues')} "
        "FROM dialogues ORDER BY hash(tick, speaker, listener, text) LIMIT ?",
        PER_KIND,
    )
    out["said"] = [
        {"agent": int(s), "name": names.get(int(s), str(s)), "when": run.tick_label(int(t)),
         "to": int(li), "to_name": names.get(int(li), str(li)), "how": ch, "text": tx,
         "source": src}
        for t, s, li, ch, tx, src in sorted(said)
    ]  # fmt: skip
    decided = run.rows(
        f"SELECT tick, agent_id, kind, detail, {_source(run, 'events')} FROM events "
        "WHERE kind NOT IN ('policy') ORDER BY hash(tick, agent_id, kind) LIMIT ?",
        PER_KIND,
    )
    out["decided"] = [
        {"agent": int(a), "name": names.get(int(a), str(a)), "when": run.tick_label(int(t)),
         "how": k, "text": d, "source": src}
        for t, a, k, d, src in sorted(decided)
    ]  # fmt: skip
    if run.has("reflections"):
        refl = run.rows(
            f"SELECT tick, agent_id, text, evidence_ids, {_source(run, 'reflections')} "
            "FROM reflections ORDER BY hash(agent_id, memory_id) LIMIT ?",
            PER_KIND,
        )
        out["reflected"] = [
            {"agent": int(a), "name": names.get(int(a), str(a)), "when": run.tick_label(int(t)),
             "how": f"{len([e for e in str(ev or '').split(',') if e.strip()])} evidence "
                    "memories", "text": tx, "source": src}
            for t, a, tx, ev, src in sorted(refl)
        ]  # fmt: skip
    kinds = [] if run.has("thoughts") else [("thought", THOUGHT_TOPICS)]
    if run.has("thoughts"):
        thought = run.rows(
            f"SELECT tick, agent_id, thought, emotion, intensity, {_source(run, 'thoughts')} "
            "FROM thoughts ORDER BY hash(tick, agent_id) LIMIT ?",
            PER_KIND,
        )
        out["thought"] = [
            {"agent": int(a), "name": names.get(int(a), str(a)), "when": run.tick_label(int(t)),
             "how": f"{em} {float(i or 0):.1f}", "text": tx, "source": src}
            for t, a, tx, em, i, src in sorted(thought)
        ]  # fmt: skip
    if "reflected" not in out:
        kinds.append(("reflected", M.REFLECTION_TOPICS))
    for kind, topics in kinds:
        rows = M.sample_memories(run.dir, topics, 400)
        picked = rows[:: max(1, len(rows) // PER_KIND)][:PER_KIND]
        out[kind] = [
            {"agent": int(r["agent_id"]), "name": names.get(int(r["agent_id"]), ""),
             "when": M.time_label(r["day"], r["time"]), "how": f"importance {r['importance']:.2f}",
             "text": r["text"], "evidence": len(r.get("evidence") or [])}
            for r in picked
        ]  # fmt: skip
    if run.has("surveys"):
        cols = [c[0] for c in run.db.execute("DESCRIBE surveys").fetchall()]
        cur = run.db.execute(
            f"SELECT * FROM surveys ORDER BY hash(agent_id, question_id) LIMIT {PER_KIND}"
        )
        answered = []
        for row in cur.fetchall():
            r = dict(zip(cols, row, strict=True))
            a = int(r.get("agent_id", -1))
            answered.append(
                {"agent": a, "name": names.get(a, str(a)),
                 "when": f"day {r.get('day')} {r.get('time', '')}",
                 "how": f"{r.get('survey', '')} · {r.get('question_id', '')}",
                 "text": str(r.get("answer_text", "")), "source": r.get("answer_source") or ""}
            )  # fmt: skip
        out["answered"] = answered
    return {k: v for k, v in out.items() if v}


def sampled_agents(quotes: dict[str, list[dict[str, Any]]], run: RunData) -> list[int]:
    """Agents quoted (in order of appearance), up to MAX_AGENTS; agent 0.. if none."""
    seen: dict[int, None] = {}
    depth = max((len(rows) for rows in quotes.values()), default=0)
    for i in range(depth):  # round-robin over kinds: every kind quoted gets linked agents
        for rows in quotes.values():
            if i < len(rows) and 0 <= rows[i]["agent"] < max(1, run.agents):
                seen[rows[i]["agent"]] = None
    chosen = list(seen)[:MAX_AGENTS]
    if not chosen:
        chosen = list(range(min(3, run.agents)))
    return chosen


def memory_note(run: RunData) -> str:
    """Says where thoughts and reflections come from, or why they are missing."""
    tick, _, _ = M.memory_files(run.dir)
    if tick is None:
        return (
            "Thoughts and reflections are read from the run's checkpoints; this run has none, "
            "so only what agents said and decided is shown."
        )
    return f"Thoughts and reflections: the agents' memories at the checkpoint of tick {tick}."
