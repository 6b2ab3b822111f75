"""Assembles the views into one self-contained HTML page (jinja2, plotly.js embedded once)."""

from __future__ import annotations

import dataclasses
import functools
import json
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from societas.cluster.report import (
    activity,
    card,
    conversations,
    effects,
    findings,
    society,
    surveys,
)
from societas.cluster.report import figures as F
from societas.cluster.report.agent_view import AgentView, agent_figure, agent_view
from societas.cluster.report.data import Arm, RunData, common_ticks
from societas.cluster.report.memories import memory_topics

TEMPLATES = Path(__file__).with_name("templates")
KIND_TITLES = {
    "said": "Said (conversations and messages)",
    "decided": "Decided (reactions to events)",
    "thought": "Thought",
    "reflected": "Reflected (insights with evidence)",
    "answered": "Answered in surveys",
}


@functools.cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _version() -> str:
    try:
        return metadata.version("societas")
    except metadata.PackageNotFoundError:
        return "?"


def _base_context(title: str, subtitle: str, runs: list[RunData]) -> dict[str, Any]:
    by_text: dict[str, list[str]] = {}  # a caveat and the runs it holds for
    for r in runs:
        if r.is_rules:
            by_text.setdefault(card.rules_caveat(r), []).append(r.label)
        for text in (card.fallback_caveat(r), card.inputs_caveat(r)):
            if text:
                by_text.setdefault(text, []).append(r.label)
    caveats = [
        text if len(labels) == len(runs) else f"{', '.join(labels)}: {text}"
        for text, labels in by_text.items()
    ]
    return {
        "title": title,
        "subtitle": subtitle,
        "css": (TEMPLATES / "style.css").read_text(),
        "plotlyjs": F.plotlyjs(),
        "caveats": caveats,
        "version": _version(),
    }


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def render_report(arms: list[Arm], out: Path) -> tuple[Path, dict[str, Any]]:
    """Write the report of one run, or of several arms/replicates, to `out` (a
    ReportInputError when the runs cannot be compared on one time axis)."""
    span, span_note = common_ticks(arms)
    ref = arms[0].first
    single = len(arms) == 1
    runs = [r for a in arms for r in a.runs]
    label = ref.config.get("name", "run")
    title = f"societas: {label}" if single else f"societas: {' vs '.join(a.label for a in arms)}"
    ctx = _base_context(title, str(ref.config.get("description", "")), runs)

    cards = [card.run_card(a.first) for a in arms]
    for c, a in zip(cards, arms, strict=True):
        if len(a.runs) > 1:
            c["seed"] = ", ".join(str(r.config.get("seed")) for r in a.runs)
            c["replicates"] = len(a.runs)
    keys = list(dict.fromkeys(k for c in cards for k in c))
    keys = [k for k in keys if k != "versions"] + ["versions"]
    differing = [k for k in keys if len({str(c.get(k)) for c in cards}) > 1]
    config_diff = [] if single else card.config_differences([a.first for a in arms])
    replicates = ""
    if any(len(a.runs) > 1 for a in arms):
        replicates = (
            "Replicates: bands are 95% t-intervals over the seeds' means; the card shows the "
            "first seed's run."
        )

    effect_rows = effects.effects_table(arms)
    summary_effects = [dataclasses.asdict(r) for r in effect_rows]
    sweep_fig = effects.sweep_figure(effect_rows, arms)
    metrics = findings.metrics_for(ref, single)
    found = []
    summary: dict[str, Any] = {
        "arms": [a.label for a in arms],
        "card": cards,
        "effects": summary_effects,
        "ticks_compared": span,
        "findings": {},
    }
    for metric in metrics:
        fig, rows, caption = findings.metric_figure(metric, arms)
        if metric.skip_if_flat and findings.is_flat(rows):
            continue
        found.append(
            {"key": metric.key, "caption": caption, "rows": rows,
             "div": F.div(fig, f"fig-{metric.key}")}
        )  # fmt: skip
        summary["findings"][metric.key] = rows
    timeline = ""
    if metrics and card.interventions_of_arms(arms):
        timeline_fig, _, _ = findings.metric_figure(metrics[0], arms)
        timeline_fig.update_layout(title={"text": f"Interventions over {metric_title(metrics)}"})
        timeline = F.div(timeline_fig, "fig-interventions")

    if single:
        for topic, fig in findings.attitude_heatmaps(ref):
            found.append(
                {"key": f"attitude-distribution-{topic}", "rows": [],
                 "div": F.div(fig, f"fig-attitude-distribution-{topic}"),
                 "caption": "Share of agents in each half-point band of attitude, per tick: "
                 "one hump = consensus, two = a split society."}
            )  # fmt: skip
    survey_fig, survey_rows = surveys.survey_figure(arms)
    if survey_fig is not None:
        found.append(
            {"key": "surveys", "div": F.div(survey_fig, "fig-surveys"), "rows": [],
             "caption": "Choice questions: the share choosing each option; Likert "
             "questions: the share at each point (the mean is in the hover and in "
             "summary.json); both with Wilson 95% intervals. Numbers: the mean with its t "
             "interval over the agents that answered. The hover and summary.json give how "
             "many were asked and how many gave no usable answer (a fallback is no data). "
             "Open answers are quoted below."}
        )  # fmt: skip
        summary["surveys"] = survey_rows
    act: list[Any] = []
    summary["activity_mix_mean"] = {}
    for a in arms[:4]:
        fig, means = activity.activity_figure(a)
        act.append({"label": a.label, "div": F.div(fig, f"fig-activity-{len(act)}")})
        summary["activity_mix_mean"][a.label] = means
    llm_fig, llm_totals = activity.llm_figure(ref)
    summary["llm"] = llm_totals

    net_fig, net_caption = society.network_figure(ref)
    map_fig, map_caption = society.map_figure(ref)
    talk_fig, talk_stats = society.talk_figure(ref)
    summary["conversations"] = talk_stats
    quotes = conversations.samples(ref)
    agent_ids = conversations.sampled_agents(quotes, ref)
    agents = []
    for agent_id in agent_ids:
        view = agent_view(ref, agent_id)
        fig = agent_figure(ref, view)
        agents.append({"view": view, "div": F.div(fig, f"fig-agent-{agent_id}") if fig else ""})
    summary["memory_topics"] = memory_topics(ref.dir)
    summary["sampled_agents"] = agent_ids

    ctx.update(
        card_labels=[a.label for a in arms] if not single else [ref.label],
        card_keys=keys,
        differing=[]
        if single
        else [k for k in differing if k not in {d["setting"] for d in config_diff}],
        config_diff=config_diff,
        cards=cards,
        replicates=replicates,
        span_note=span_note,
        interventions=card.interventions_of_arms(arms),
        several=not single,
        timeline=timeline,
        timeline_caption="The main outcome with the interventions as dashed lines, numbered "
        "as in the table above.",
        bands_note=_bands_note(arms),
        effects=effect_rows,
        sweep_div=F.div(sweep_fig, "fig-sweep") if sweep_fig is not None else "",
        effects_notes=effects.notes(effect_rows, arms) if effect_rows else [],
        findings=found,
        activity=act,
        llm_div=F.div(llm_fig, "fig-llm") if llm_fig is not None else "",
        compare_note="" if single else f"Society views show {ref.label} (the first arm).",
        network_div=F.div(net_fig, "fig-network") if net_fig else "",
        network_caption=net_caption,
        map_div=F.div(map_fig, "fig-map") if map_fig else "",
        map_caption=map_caption,
        talk_div=F.div(talk_fig, "fig-talk") if talk_fig else "",
        talk=talk_stats,
        memory_note=conversations.memory_note(ref),
        quotes=quotes,
        kind_titles=KIND_TITLES,
        agents=agents,
        agent_ids=set(agent_ids),
    )
    html = _env().get_template("report.html.j2").render(**ctx)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html)
    return out, _json_safe(summary)


def metric_title(metrics: list[findings.Metric]) -> str:
    return metrics[0].title[0].lower() + metrics[0].title[1:]


def _bands_note(arms: list[Arm]) -> str:
    if any(len(a.runs) > 1 for a in arms):
        return (
            "Shaded bands: 95% intervals over replicate runs (seeds). With several arms the "
            "lower panel shows each arm minus the first; each chart's note says how."
        )
    note = "Shaded bands: 95% intervals over agents within the run (one seed)."
    if len(arms) > 1:
        note += " The lower panel shows each arm minus the first; each chart's note says how."
    return note + " Replicate with `societas run CONFIG --seeds 0,1,2` for bands over seeds."


def render_agent_page(run: RunData, view: AgentView, out: Path) -> Path:
    """A page for one agent (`societas report RUN --agent ID`)."""
    ctx = _base_context(
        f"societas: agent #{view.agent_id} {view.name}",
        f"{run.config.get('name', '')} · {run.dir}",
        [run],
    )
    fig = agent_figure(run, view)
    ctx.update(view=view, fig_div=F.div(fig, "fig-agent") if fig else "")
    out.write_text(_env().get_template("agent_page.html.j2").render(**ctx))
    return out


def write_summary(path: Path, summary: dict[str, Any]) -> Path:
    path.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return path
