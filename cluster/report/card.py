"""The run card (what was simulated, on what, at what cost) and the interventions table."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any

from societas.agents.llm.accounting import MEANING_PREFIX, split_counts
from societas.agents.llm.config import calls_label
from societas.agents.runtime.memory_policies import COLUMNS as POLICY_COLUMNS
from societas.cluster.report.data import RunData

RULES_CAVEAT = (
    "This run used the rules policy: agents' choices, words and reflections come from "
    "deterministic rules, not a language model. Read the results as a test of the "
    "simulation's mechanics, not as language-model (or human) behaviour."
)


def rules_caveat(run: RunData) -> str:
    """The caveat of a run the rules policy answered, whole or but for some tasks (a model
    for the surveys): a reader learns which words came from a model before reading them."""
    asked = run.model_tasks
    if not asked:
        return RULES_CAVEAT
    models = ", ".join(m for m in run.run.get("llm") or {} if "rules" not in m) or "a model"
    return (
        f"A language model ({models}) answered only these tasks: {', '.join(asked)}. The rules "
        "policy answered every other task: those choices, words and reflections come from "
        "deterministic rules, not a language model. Read them as a test of the simulation's "
        "mechanics, not as language-model (or human) behaviour."
    )


# A model task whose answers fell back at least this often gets a caveat on the page.
NOTABLE_FALLBACK = 0.1


def fallback_caveat(run: RunData) -> str:
    """The caveat of a run whose model answers often fell back to defaults written in code,
    naming each such task and its share ("" when none did), from run.json's answer sources:
    a reader learns that those tasks' choices and words are not the model's."""
    sources = run.answer_sources
    notable, fell, asked = [], 0, 0
    for task in run.model_tasks:
        answers = {s: int(n) for s, n in sources[task].items() if s != "rules"}
        total, fallbacks = sum(answers.values()), answers.get("fallback", 0)
        fell, asked = fell + fallbacks, asked + total
        if total and fallbacks / total >= NOTABLE_FALLBACK:
            why = refusals(run, task)
            notable.append(f"{task} {fallbacks / total:.0%} ({fallbacks:,} of {total:,}{why})")
    if not notable:
        return ""
    return (
        f"The language model's structured answers often fell back to defaults written in code: "
        f"{', '.join(notable)}; {fell:,} of {asked:,} model answers in all. Those tasks' "
        "choices, plans and words are the fallback's, not the model's: read them as the "
        "simulation's defaults, or leave out rows with answer_source = fallback."
    )


def inputs_caveat(run: RunData) -> str:
    """The caveat of a run resumed with inputs (code, prompts, profiles, edges) that changed
    since it started, naming each and the tick from which the changed ones ran ("" when
    none did): its rows come from two versions of what the researcher gave it."""
    segments = run.run.get("segments") or []
    found = []
    for change in run.run.get("inputs_changed") or []:
        files = ", ".join(f"{label} {how}" for label, how in (change.get("changes") or {}).items())
        resume = change.get("resume")
        start = (
            segments[resume].get("start_tick")
            if isinstance(resume, int) and resume < len(segments)
            else None
        )
        found.append(f"from tick {start}: {files}" if start is not None else files)
    if not found:
        return ""
    return (
        "This run was resumed with inputs that had changed since it started "
        f"(`resume --allow-changed-inputs`): {'; '.join(found)}. Its rows before and after "
        "come from different code, prompts or data."
    )


def refusals(run: RunData, task: str, most: int = 3) -> str:
    """Why `task`'s replies were refused, the commonest first ("; replies refused: 18 not
    the asked JSON, 4 copied_prompt"), every ask counted; "" when none is recorded."""
    tasks = run.run.get("llm_tasks") or {}
    counts = {"not the asked JSON": int((tasks.get(task) or {}).get("invalid") or 0)}
    counts |= {why: int(n) for why, n in split_counts(tasks, MEANING_PREFIX).get(task, {}).items()}
    top = sorted(((n, why) for why, n in counts.items() if n), key=lambda x: (-x[0], x[1]))
    listed = ", ".join(f"{n:,} {why}" for n, why in top[:most])
    return f"; replies refused: {listed}" if listed else ""


def _versions(run: RunData) -> dict[str, str]:
    recorded = run.run.get("versions") or run.config.get("versions")
    if isinstance(recorded, dict) and recorded:
        return {str(k): str(v) for k, v in recorded.items()}
    out = {"python": platform.python_version()}
    for dist in ("societas", "ray", "pyarrow", "qdrant-edge-py", "fastembed", "openai"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    out["(note)"] = "run.json records no versions: these are the report's environment"
    return out


def _llm_totals(run: RunData) -> dict[str, Any]:
    by_model = run.run.get("llm") or {}
    total: dict[str, Any] = {
        "calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": 0.0,
    }
    fallbacks = 0
    for stats in by_model.values():
        if not isinstance(stats, dict):
            continue
        total["calls"] += int(stats.get("requests", 0))
        total["prompt_tokens"] += int(stats.get("prompt_tokens", 0))
        total["completion_tokens"] += int(stats.get("completion_tokens", 0))
        total["cost_usd"] += float(stats.get("cost_usd", 0.0) or 0.0)
        fallbacks += int(stats.get("fallbacks", 0) or 0)
    fallbacks = int(run.run.get("llm_fallbacks", fallbacks) or fallbacks)
    if not by_model:
        total["calls"] = int(run.run.get("llm_requests", 0))
        total["prompt_tokens"] = int(run.run.get("llm_tokens", 0))
    elif run.run.get("resumed") and int(run.run.get("schema_version", 1)) < 3:
        # before version 3, a resumed run's `llm` held its last invocation only
        total["calls"] = int(run.run.get("llm_requests", total["calls"]))
    total["fallbacks"] = fallbacks
    total["models"] = ", ".join(by_model) or "—"
    return total


def _calls_by_model(run: RunData) -> str:
    """' (smollm2: 186, rules (not a language model): 1,138)' when more than one answered."""
    by_model = {m: st for m, st in (run.run.get("llm") or {}).items() if isinstance(st, dict)}
    if len(by_model) < 2:
        return ""
    return (
        " (" + ", ".join(f"{m}: {int(st.get('requests', 0)):,}" for m, st in by_model.items()) + ")"
    )


def answer_sources(run: RunData) -> str:
    """Per task, the shares of its answers by source ('daily_plan: 83% fallback, 17%
    first_try'), from run.json's llm_tasks; what a reader needs before trusting the text."""
    tasks = run.run.get("llm_tasks") or {}
    parts = []
    for task, counters in sorted(tasks.items()):
        found = {
            k.removeprefix("source."): int(v)
            for k, v in (counters or {}).items()
            if str(k).startswith("source.") and v
        }
        total = sum(found.values())
        if total:
            shares = ", ".join(
                f"{n / total:.0%} {s}" for s, n in sorted(found.items(), key=lambda x: -x[1])
            )
            parts.append(f"{task}: {shares} (of {total:,})")
    return "; ".join(parts) or "not recorded"


def memory_policy_totals(run: RunData) -> dict[str, int]:
    """Each memory mechanism's count over the whole run (`memory_policies`; {} without it)."""
    if not run.has("memory_policies"):
        return {}
    sums = ", ".join(f"coalesce(sum({c}), 0)" for c in POLICY_COLUMNS)
    (row,) = run.rows(f"SELECT {sums} FROM memory_policies")
    return {c: int(v) for c, v in zip(POLICY_COLUMNS, row, strict=True)}


def memory_policies_label(run: RunData) -> str:
    """'consolidations 12, promotions 40, ...' (mechanisms that acted), else why none."""
    totals = memory_policy_totals(run)
    if not totals:
        return "not recorded"
    acted = [f"{c.replace('_', ' ')} {n:,}" for c, n in totals.items() if n]
    return ", ".join(acted) or "none acted"


def embedder_of(config: dict[str, Any]) -> str:
    emb = config.get("memory", {}).get("embedding", {})
    kind = emb.get("kind", "?")
    if kind == "bm25":
        return f"bm25 (sparse, {emb.get('bm25_engine', '')})"
    if kind == "openai":
        return f"openai-protocol: {(emb.get('openai') or {}).get('model', '?')}"
    return str(kind)


def run_card(run: RunData) -> dict[str, Any]:
    """The facts a reader needs to judge a run, as label -> value (rendered as a table)."""
    cfg = run.config
    llm = cfg.get("llm", {})
    endpoints = llm.get("endpoints") or []
    models = sorted({str(e.get("model")) for e in endpoints if e.get("model")})
    totals = _llm_totals(run)
    days = run.ticks * run.tick_minutes / 1440.0
    return {
        "scenario": cfg.get("name"),
        "seed": cfg.get("seed"),
        "agents": run.agents,
        "simulated time": f"{run.ticks} ticks × {run.tick_minutes} min = {days:.2f} days "
        f"(from {run.tick_label(0)} to {run.tick_label(max(0, run.ticks - 1))})",
        "groups": run.run.get("groups", cfg.get("groups")),
        "mode": run.run.get("mode", "?"),
        "LLM provider": llm.get("provider"),
        "LLM models": ", ".join(models) or totals["models"],
        "embedder": embedder_of(cfg),
        "wall time": f"{float(run.run.get('wall_s', 0.0)):.1f} s",
        "agent-steps/s": f"{float(run.run.get('agent_steps_per_s', 0.0)):,.0f}",
        calls_label(str(llm.get("provider", ""))): f"{totals['calls']:,}"
        + (
            f" over {len(run.run.get('segments') or [])} segments (resumed)"
            if run.run.get("resumed")
            else _calls_by_model(run)
        ),
        "LLM tokens": f"{int(run.run.get('llm_tokens', 0)):,} over the whole run"
        if run.run.get("resumed")
        else f"{totals['prompt_tokens']:,} prompt + {totals['completion_tokens']:,} completion",
        "LLM cost": f"${totals['cost_usd']:.4f}",
        "LLM fallbacks": f"{totals['fallbacks']:,}",
        "LLM answer sources": answer_sources(run),
        "memories": f"{int(run.run.get('memories_total', 0) or 0):,}",
        "memory policies": memory_policies_label(run),
        "checkpoints": ", ".join(str(c) for c in run.run.get("checkpoints", []) or []) or "none",
        "versions": ", ".join(f"{k} {v}" for k, v in _versions(run).items()),
    }


def _who(select: dict[str, Any] | None) -> str:
    if not select or select.get("all"):
        return "all agents"
    parts = [f"{k}={v}" for k, v in select.items() if v not in (None, False)]
    return ", ".join(parts) or "all agents"


def interventions_table(run: RunData) -> list[dict[str, Any]]:
    """One row per intervention: number, when, kind, who, what."""
    rows = []
    for i, iv in enumerate(run.interventions, start=1):
        what = iv.get("text") or ""
        if iv.get("kind") == "policy":
            what = f"{iv.get('policy') or 'policy'}: {iv.get('amount')} per month. {what}"
        if iv.get("fact"):
            what = f"fact {iv['fact']}: {what}"
        flags = [f for f in ("danger", "all_clear", "trust_gated") if iv.get(f)]
        rows.append(
            {
                "n": i,
                "tick": iv.get("tick"),
                "when": run.tick_label(int(iv.get("tick", 0))),
                "kind": iv.get("kind"),
                "who": _who(iv.get("select")),
                "what": what.strip(),
                "flags": ", ".join(flags),
            }
        )
    return rows


def _flat(data: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(data, dict):
        out: dict[str, str] = {}
        for k, v in data.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    if isinstance(data, list) and any(isinstance(v, dict | list) for v in data):
        return {prefix[:-1]: f"{len(data)} item(s), see the tables"}
    if isinstance(data, list) and not data:
        return {prefix[:-1]: "none"}
    return {prefix[:-1]: str(data)}


IGNORED = ("versions", "name", "description", "memory.", "results.", "cluster.")


def config_differences(runs: list[RunData], limit: int = 12) -> list[dict[str, Any]]:
    """Settings whose values differ between the runs compared (what makes the arms arms)."""
    flats = [_flat(r.config) for r in runs]
    keys = sorted(set().union(*flats))
    rows = []
    for key in keys:
        if key.startswith(IGNORED):
            continue
        values = [f.get(key, "—") for f in flats]
        if len(set(values)) > 1:
            rows.append({"setting": key, "values": values})
    return rows[:limit]


def interventions_of_arms(arms: list[Any]) -> list[dict[str, Any]]:
    """The interventions of every arm, once each, with the arms that have them."""
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for arm in arms:
        for row in interventions_table(arm.first):
            key = (row["tick"], row["kind"], row["who"], row["what"])
            rows.setdefault(key, {**row, "arms": []})["arms"].append(arm.label)
    out = sorted(rows.values(), key=lambda r: (r["tick"], r["n"]))
    for i, row in enumerate(out, start=1):
        row["n"] = i
        row["arms"] = "all" if len(row["arms"]) == len(arms) else ", ".join(row["arms"])
    return out
