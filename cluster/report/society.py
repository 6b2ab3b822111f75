"""Society views: the social network, where agents are over the day, who talked to whom.

Large societies are sampled or aggregated so the page stays light: the network shows a
breadth-first sample of at most `MAX_NODES` agents (sizes are their full degree), the map
merges homes into grid cells when there are many, and the conversation view is a matrix
between occupations.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import networkx as nx
import numpy as np
import plotly.graph_objects as go

from societas.cluster.report import figures as F
from societas.cluster.report.data import RunData

MAX_NODES = 300
MAX_HOME_POINTS = 400
KIND_COLORS = {
    "home": "#8c8c8c", "work": "#1f77b4", "shop": "#ff7f0e", "cafe": "#e377c2",
    "park": "#2ca02c", "shelter": "#d62728",
}  # fmt: skip


def _sample_nodes(friends: dict[int, list[tuple[int, float]]], n: int, seed: int) -> list[int]:
    """Breadth-first from seeded roots until `MAX_NODES` agents: keeps ties among them."""
    if n <= MAX_NODES:
        return list(range(n))
    rng = np.random.default_rng([seed, 17])
    chosen: dict[int, None] = {}
    while len(chosen) < MAX_NODES:
        queue = deque([int(rng.integers(n))])
        while queue and len(chosen) < MAX_NODES:
            node = queue.popleft()
            if node in chosen:
                continue
            chosen[node] = None
            queue.extend(o for o, _ in friends.get(node, []) if o not in chosen)
    return sorted(chosen)


def _node_colors(run: RunData, nodes: list[int]) -> tuple[list[Any], str, bool]:
    """(values, legend title, continuous?) — opinion if recorded, else evacuation, else job."""
    topics = [t["name"] for t in run.config.get("topics", [])]
    if topics and run.has("attitudes"):
        rows = dict(
            run.rows(
                "SELECT agent_id, value FROM attitudes WHERE topic = ? AND tick = "
                "(SELECT max(tick) FROM attitudes)",
                topics[0],
            )
        )
        return [rows.get(i, np.nan) for i in nodes], f"attitude to {topics[0]} (end)", True
    ivs = sorted(run.interventions, key=lambda iv: int(iv.get("tick", 0)))
    danger = [int(iv["tick"]) for iv in ivs if iv.get("danger")]
    if danger:
        later = [int(iv["tick"]) for iv in ivs if int(iv["tick"]) > danger[0]]
        by = (later[0] if later else run.ticks) - 1
        went = {
            int(r[0])
            for r in run.rows(
                "SELECT DISTINCT agent_id FROM agent_state WHERE place_kind = 'shelter' "
                "AND tick <= ?",
                by,
            )
        }
        when = run.tick_label(by)
        return (
            [f"at a shelter by {when}" if i in went else "not yet" for i in nodes],
            (f"evacuated after the first warning (by {when})"),
            False,
        )
    pop = run.population
    assert pop is not None
    return [pop.profiles[i].occupation for i in nodes], "occupation", False


def network_figure(run: RunData) -> tuple[go.Figure | None, str]:
    """The social network (coloured by opinion or group, sized by degree) and a caption."""
    pop = run.population
    if pop is None:
        return None, "The population could not be rebuilt from config.json."
    nodes = _sample_nodes(pop.friends, len(pop.profiles), run.seed)
    keep = set(nodes)
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(
        (u, v) for u in nodes for v, _ in pop.friends.get(u, []) if v in keep and u < v
    )
    pos = nx.spring_layout(graph, seed=1, iterations=60)
    ex: list[float | None] = []
    ey: list[float | None] = []
    for u, v in graph.edges():
        ex += [pos[u][0], pos[v][0], None]
        ey += [pos[u][1], pos[v][1], None]
    fig = F.new_figure("Social network", "", height=520)
    fig.update_layout(hovermode="closest")
    fig.add_trace(
        go.Scatter(x=ex, y=ey, mode="lines", line={"color": "#ccc", "width": 0.6},
                   hoverinfo="skip", showlegend=False)
    )  # fmt: skip
    values, title, continuous = _node_colors(run, nodes)
    degree = np.array([len(pop.friends.get(i, [])) for i in nodes], dtype=float)
    size = 5 + 14 * np.sqrt(degree / max(1.0, degree.max()))
    hover = [f"{pop.profiles[i].name} (#{i}), {pop.profiles[i].occupation}, "
             f"{len(pop.friends.get(i, []))} ties" for i in nodes]  # fmt: skip
    xy = np.array([pos[i] for i in nodes])
    if continuous:
        fig.add_trace(
            go.Scatter(
                x=xy[:, 0], y=xy[:, 1], mode="markers", text=hover, name=title,
                marker={"size": size, "color": values, "colorscale": "RdBu", "cmin": 0,
                        "cmax": 10, "colorbar": {"title": {"text": title}}},
                hovertemplate="%{text}<br>%{marker.color:.2f}<extra></extra>",
            )
        )  # fmt: skip
    else:
        for k, group in enumerate(sorted(set(values))):
            idx = [j for j, v in enumerate(values) if v == group]
            fig.add_trace(
                go.Scatter(
                    x=xy[idx, 0], y=xy[idx, 1], mode="markers", name=str(group),
                    text=[hover[j] for j in idx], hovertemplate="%{text}<extra></extra>",
                    marker={"size": size[idx], "color": F.PALETTE[k % len(F.PALETTE)]},
                )
            )  # fmt: skip
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, scaleanchor="x")
    shown = f"all {len(nodes)} agents" if len(nodes) == len(pop.profiles) else (
        f"a breadth-first sample of {len(nodes)} of {len(pop.profiles):,} agents")  # fmt: skip
    caption = (f"Ties of the social network at the start ({shown}); colour: {title}; "
               "size: number of ties.")  # fmt: skip
    return fig, caption


def _place_table(run: RunData) -> Any:
    """Register `places(place, kind, x, y, cell)`: homes merged into grid cells when many."""
    import pyarrow as pa

    assert run.population is not None
    places = list(run.population.town.places.values())
    homes = sum(p.kind == "home" for p in places)
    size = float(run.config.get("map", {}).get("size_km", 3.0))
    cells = int(np.ceil(np.sqrt(MAX_HOME_POINTS)))
    step = size / cells

    def cell(p: Any) -> str:
        if p.kind != "home" or homes <= MAX_HOME_POINTS:
            return p.id
        return f"homes {int(p.x // step)},{int(p.y // step)}"

    table = pa.table(
        {"place": [p.id for p in places], "kind": [p.kind for p in places],
         "x": [p.x for p in places], "y": [p.y for p in places],
         "cell": [cell(p) for p in places]}
    )  # fmt: skip
    run.db.register("places", table)
    return homes > MAX_HOME_POINTS


def map_figure(run: RunData) -> tuple[go.Figure | None, str]:
    """Where agents are: places sized by how many agents are there, one frame per 2 hours."""
    if run.population is None or not run.ticks:
        return None, "The town map could not be rebuilt from config.json."
    merged = _place_table(run)
    every = max(1, round(120 / run.tick_minutes))
    cols = run.columns(
        "SELECT s.tick, p.cell, any_value(p.kind) AS kind, avg(p.x) AS x, avg(p.y) AS y, "
        "count(*) AS k FROM agent_state s JOIN places p USING (place) "
        f"WHERE s.tick % {every} = 0 GROUP BY s.tick, p.cell ORDER BY s.tick, p.cell"
    )
    if not cols:
        return None, "No positions recorded."
    ticks = sorted(set(cols["tick"].astype(int).tolist()))
    peak = float(cols["k"].max())

    def frame_data(t: int) -> list[go.Scatter]:
        m = cols["tick"] == t
        kinds = cols["kind"][m].astype(str)
        out = []
        for kind, color in KIND_COLORS.items():
            km = kinds == kind
            k = cols["k"][m][km]
            out.append(
                go.Scatter(
                    x=cols["x"][m][km], y=cols["y"][m][km], mode="markers", name=kind,
                    marker={"color": color, "size": 4 + 30 * np.sqrt(k / peak),
                            "line": {"width": 0.5, "color": "#fff"}},
                    text=[f"{c}: {n} agents" for c, n in zip(cols["cell"][m][km], k,
                                                              strict=True)],
                    hovertemplate="%{text}<extra></extra>",
                )
            )  # fmt: skip
        return out

    fig = F.new_figure("Where agents are over the day", "km", "km", height=560)
    fig.update_layout(hovermode="closest", margin={"b": 110})
    for trace in frame_data(ticks[0]):
        fig.add_trace(trace)
    fig.frames = [go.Frame(data=frame_data(t), name=str(t)) for t in ticks]
    fig.update_layout(
        sliders=[{"active": 0, "y": -0.08, "len": 0.84, "x": 0.09, "font": {"size": 10},
                  "currentvalue": {"prefix": "time: "}, "steps": [
                      {"label": run.tick_label(t).replace("day ", "d"), "method": "animate",
                       "args": [[str(t)], {"mode": "immediate", "frame": {"duration": 0,
                                "redraw": True}, "transition": {"duration": 0}}]}
                      for t in ticks]}],
        updatemenus=[{"type": "buttons", "x": 0.0, "y": -0.08, "xanchor": "left",
                      "yanchor": "top", "showactive": False, "buttons": [
                          {"label": "▶", "method": "animate", "args": [None, {"frame":
                           {"duration": 400, "redraw": True}, "fromcurrent": True}]}]}],
    )  # fmt: skip
    size = float(run.config.get("map", {}).get("size_km", 3.0))
    fig.update_xaxes(range=[-0.1, size + 0.1], constrain="domain")
    fig.update_yaxes(range=[-0.1, size + 0.1], scaleanchor="x", constrain="domain")
    note = " Homes are merged into grid cells (many homes)." if merged else ""
    return fig, (
        "Each marker is a place, its size the number of agents there; move the slider "
        f"(every {every} ticks) or press ▶.{note}"
    )


def talk_figure(run: RunData) -> tuple[go.Figure | None, dict[str, Any]]:
    """Who talked to whom: utterances between occupations, and channel counts."""
    if not run.has("dialogues") or run.population is None:
        return None, {}
    run.profiles_table()
    cols = run.columns(
        "SELECT a.occupation AS src, b.occupation AS dst, count(*) AS k FROM dialogues d "
        "JOIN profiles a ON a.agent_id = d.speaker JOIN profiles b ON b.agent_id = d.listener "
        "GROUP BY 1, 2"
    )
    if not cols:
        return None, {}
    occ = sorted(set(cols["src"].astype(str)) | set(cols["dst"].astype(str)))
    index = {o: i for i, o in enumerate(occ)}
    z = np.zeros((len(occ), len(occ)))
    for s, d, k in zip(cols["src"], cols["dst"], cols["k"], strict=True):
        z[index[str(s)], index[str(d)]] += float(k)
    fig = F.new_figure("Who talked to whom (utterances, by occupation)", "speaker", "listener",
                       height=460)  # fmt: skip
    fig.update_layout(hovermode="closest")
    fig.add_trace(
        go.Heatmap(z=z, x=occ, y=occ, colorscale="Blues", colorbar={"title": {"text": "count"}},
                   hovertemplate="%{y} → %{x}: %{z:.0f}<extra></extra>")
    )  # fmt: skip
    channels = dict(run.rows("SELECT channel, count(*) FROM dialogues GROUP BY 1 ORDER BY 1"))
    stats = {
        "utterances": int(z.sum()),
        "same_occupation_share": round(float(np.trace(z) / max(1.0, z.sum())), 4),
        "pairs": int(run.scalar("SELECT count(*) FROM (SELECT DISTINCT speaker, listener "
                                "FROM dialogues)") or 0),
        "channels": {str(k): int(v) for k, v in channels.items()},
    }  # fmt: skip
    return fig, stats
