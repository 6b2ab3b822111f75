"""validation.html: published figures beside ours, per seed and with intervals, self-contained."""

from __future__ import annotations

import html
from pathlib import Path

from societas.cluster.validation.records import Metric, Report

STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem;color:#222}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{border:1px solid #ccc;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.caveat{background:#fff4d6;border:1px solid #e0b400;padding:.75rem 1rem;font-weight:600}
.bar{position:relative;height:14px;background:#f4f4f4;width:14rem}
.ci{position:absolute;top:5px;height:4px;background:#6b8fd6}
.ours{position:absolute;top:1px;width:3px;height:12px;background:#1d4fb8}
.pub{position:absolute;top:0;width:3px;height:14px;background:#c0392b}
.note{color:#555;font-size:.9em}
"""


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _pos(x: float, top: float) -> float:
    return max(0.0, min(100.0, 100.0 * x / top))


def _bar(m: Metric) -> str:
    """Published (red) and ours with its interval (blue) on one axis."""
    values = [m.published, *(v for v in (m.ours_mean, *m.ours_ci) if v is not None)]
    top = 1.0 if m.kind == "share" else max(1.0, *values) * 1.1
    parts = [f'<span class="pub" style="left:{_pos(m.published, top):.1f}%"></span>']
    low, high = m.ours_ci
    if low is not None and high is not None:
        left, right = _pos(low, top), _pos(high, top)
        parts.append(f'<span class="ci" style="left:{left:.1f}%;width:{right - left:.1f}%"></span>')
    if m.ours_mean is not None:
        parts.append(f'<span class="ours" style="left:{_pos(m.ours_mean, top):.1f}%"></span>')
    return f'<div class="bar" title="red: published, blue: ours">{"".join(parts)}</div>'


def _row(m: Metric, seeds: list[int]) -> str:
    low, high = m.ours_ci
    interval = "n/a" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
    per_seed = "".join(f"<td>{_num(v)}</td>" for v in m.per_seed)
    per_seed += "<td></td>" * (len(seeds) - len(m.per_seed))
    distance = "n/a" if m.ours_mean is None else f"{m.ours_mean - m.published:+.3f}"
    published = f"{m.published:.3f}"
    if m.published_range is not None:
        published += f"<div class='note'>[{m.published_range[0]:g}, {m.published_range[1]:g}]</div>"
    return (
        f"<tr><td><b>{html.escape(m.name)}</b><div class='note'>{html.escape(m.source)}</div>"
        f"</td><td>{published}</td><td>{_num(m.ours_mean)}</td><td>{interval}</td>"
        f"<td>{distance}</td><td>{_bar(m)}</td>{per_seed}"
        f"<td class='note'>{html.escape(m.note)}</td></tr>"
    )


def render(report: Report) -> str:
    """The page's HTML (no scripts, no external resources)."""
    seeds = report.seeds
    head = "".join(f"<th>seed {s}</th>" for s in seeds)
    rows = "".join(_row(m, seeds) for m in report.metrics)
    extra = "".join(
        f"<tr><td>{html.escape(u.name)}</td><td>{_num(u.ours_mean)}</td>"
        f"<td>{html.escape(', '.join(_num(v) for v in u.per_seed))}</td>"
        f"<td class='note'>{html.escape(u.note or u.source)}</td></tr>"
        for u in report.unpublished
    )
    caveat = f'<p class="caveat">{html.escape(report.caveat)}</p>' if report.rules_policy else ""
    unpublished = (
        "<h2>Measured, nothing published to compare with</h2><table><tr><th>measure</th>"
        f"<th>ours (mean)</th><th>per seed</th><th>note</th></tr>{extra}</table>"
        if extra
        else ""
    )
    title = f"Validation: {html.escape(report.suite)}"
    checked = "".join(f"<li>{html.escape(x)}</li>" for x in report.sources)
    where = (
        f"<h2>Where the published figures were checked</h2><ul class='note'>{checked}</ul>"
        f"<p class='note'>Protocol: {html.escape(report.protocol)}</p>"
        if checked
        else ""
    )
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{STYLE}</style></head><body><h1>{title}</h1>{caveat}"
        f"<p>Provider <b>{html.escape(report.provider)}</b>, model "
        f"<b>{html.escape(report.model)}</b>; {report.agents} agents, {report.hours:g} simulated "
        f"hours, seeds {html.escape(', '.join(map(str, seeds)))}; {report.elapsed_s:.1f} s. "
        "Intervals: 95 % t over seeds.</p>"
        "<table><tr><th>metric</th><th>published</th><th>ours (mean)</th><th>ours 95 % CI</th>"
        f"<th>ours - published</th><th>published vs ours</th>{head}<th>note</th></tr>{rows}"
        f"</table>{unpublished}{where}</body></html>"
    )


def write_page(report: Report, path: Path) -> Path:
    """Write validation.html for `report`."""
    path.write_text(render(report), encoding="utf-8")
    return path
