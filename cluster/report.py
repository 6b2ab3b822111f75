"""`societas report RUN_DIR`: PNG plots (matplotlib, Agg), `report.html` and `summary.json`
from a run's Parquet results. Each scenario's outcome has its own plot: activity mix (town),
evacuation (hurricane), attitude distribution (polarization), income/consumption/work hours
(ubi), diffusion curve (diffusion); needs and LLM tokens for every run."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from societas.agents.runtime.results import read_table

CATEGORIES = ("sleep", "home", "eat", "work", "shop", "leisure", "social", "evacuate")


def _col(table: Any, name: str) -> np.ndarray:
    return table.column(name).to_numpy(zero_copy_only=False)


def _per_tick(ticks: np.ndarray, values: np.ndarray, n_ticks: int) -> np.ndarray:
    """Mean of `values` per tick 0..n_ticks-1 (NaN where a tick has no rows)."""
    sums = np.bincount(ticks, weights=values.astype(float), minlength=n_ticks)
    counts = np.bincount(ticks, minlength=n_ticks)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def _save(fig: Any, out: Path, name: str) -> str:
    path = out / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


class Report:
    """Reads one run directory and produces plots and summary metrics."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.config = json.loads((self.run_dir / "config.json").read_text())
        run_json = self.run_dir / "run.json"
        self.run = json.loads(run_json.read_text()) if run_json.exists() else {}
        self.state = read_table(self.run_dir, "agent_state")
        self.ticks = int(_col(self.state, "tick").max()) + 1 if self.state.num_rows else 0
        self.agents = int(np.unique(_col(self.state, "agent_id")).size)
        self.plots: list[tuple[str, str, str]] = []  # (title, file, caption)
        self.summary: dict[str, Any] = {
            "scenario": self.config.get("name"),
            "agents": self.agents,
            "ticks": self.ticks,
            "groups": self.config.get("groups"),
            "seed": self.config.get("seed"),
            "llm_provider": self.config.get("llm", {}).get("provider"),
            "memories_total": self.run.get("memories_total"),
            "agent_steps_per_s": self.run.get("agent_steps_per_s"),
        }
        self.plot_dir = self.run_dir / "plots"
        self.plot_dir.mkdir(exist_ok=True)

    def add(self, title: str, file: str, caption: str) -> None:
        self.plots.append((title, file, caption))

    # ------------------------------------------------------------------ plots
    def activity_mix(self) -> None:
        tick, cat = _col(self.state, "tick"), _col(self.state, "category")
        shares = {c: _per_tick(tick, cat == c, self.ticks) for c in CATEGORIES}
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.stackplot(np.arange(self.ticks), *shares.values(), labels=CATEGORIES)
        ax.set(xlabel="tick", ylabel="share of agents", ylim=(0, 1), title="Activity mix over time")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
        mean = {c: round(float(np.nanmean(v)), 4) for c, v in shares.items()}
        self.summary["activity_mix_mean"] = mean
        self.add(
            "Activity mix",
            _save(fig, self.plot_dir, "activity_mix"),
            "Share of agents per activity kind at each tick.",
        )

    def needs(self) -> None:
        t = read_table(self.run_dir, "needs")
        if not t.num_rows:
            return
        tick = _col(t, "tick")
        fig, ax = plt.subplots(figsize=(8, 4))
        final = {}
        for need in ("hunger", "energy", "safety", "social"):
            series = _per_tick(tick, _col(t, need), self.ticks)
            ax.plot(series, label=need)
            final[need] = round(float(series[-1]), 4)
        ax.set(
            xlabel="tick",
            ylabel="mean satisfaction (0..1)",
            ylim=(0, 1.02),
            title="Needs over time",
        )
        ax.legend()
        self.summary["needs_final_mean"] = final
        self.add(
            "Needs",
            _save(fig, self.plot_dir, "needs"),
            "Mean satisfaction of each need (1 = satisfied).",
        )

    def llm(self) -> None:
        t = read_table(self.run_dir, "llm")
        if not t.num_rows:
            return
        tick = _col(t, "tick")
        tokens = np.bincount(
            tick,
            weights=_col(t, "prompt_tokens") + _col(t, "completion_tokens"),
            minlength=self.ticks,
        )
        requests = np.bincount(tick, weights=_col(t, "requests"), minlength=self.ticks)
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.bar(np.arange(len(tokens)), tokens, color="tab:purple")
        ax.set(
            xlabel="tick",
            ylabel="tokens (prompt + completion)",
            title=f"LLM tokens per tick ({self.summary['llm_provider']})",
        )
        ax2 = ax.twinx()
        ax2.plot(requests, color="black", lw=1)
        ax2.set_ylabel("requests")
        self.summary["llm"] = {"requests": int(requests.sum()), "tokens": int(tokens.sum())}
        self.add(
            "LLM tokens",
            _save(fig, self.plot_dir, "llm_tokens"),
            "Bars: tokens per tick; line: requests. With provider 'rules' the tokens are "
            "the prompts' estimated size (no model is called).",
        )

    def diffusion(self) -> None:
        facts = [f["id"] for f in self.config.get("facts", [])]
        if not facts:
            return
        t = read_table(self.run_dir, "knowledge")
        tick, fact = _col(t, "tick"), _col(t, "fact")
        isolated = self.config.get("network", {}).get("isolated", 0)
        fig, ax = plt.subplots(figsize=(8, 4))
        out = {}
        for f in facts:
            learned = np.bincount(tick[fact == f], minlength=self.ticks)[: self.ticks]
            curve = np.cumsum(learned) / self.agents
            ax.plot(curve, label=f)
            half = np.nonzero(curve > 0.5)[0]
            ids = _col(t, "agent_id")[fact == f]
            out[f] = {
                "final_share": round(float(curve[-1]), 4),
                "knowers": int(learned.sum()),
                "ticks_to_50pct": int(half[0]) if half.size else None,
                "knowers_in_isolated": int(np.sum(ids >= self.agents - isolated))
                if isolated
                else 0,
            }
        ax.set(
            xlabel="tick",
            ylabel="share of agents who know it",
            ylim=(0, 1.02),
            title="Diffusion of seeded facts",
        )
        if isolated:
            ax.axhline(
                (self.agents - isolated) / self.agents, ls="--", c="grey", label="connected share"
            )
        ax.legend()
        self.summary["diffusion"] = out
        self.add(
            "Diffusion curve",
            _save(fig, self.plot_dir, "diffusion"),
            "Cumulative share of agents who know each seeded fact.",
        )

    def attitudes(self) -> None:
        topics = [t["name"] for t in self.config.get("topics", [])]
        if not topics:
            return
        t = read_table(self.run_dir, "attitudes")
        out = {}
        for topic in topics:
            mask = _col(t, "topic") == topic
            tick, value = _col(t, "tick")[mask], _col(t, "value")[mask]
            hist = np.zeros((20, self.ticks))
            for k in range(self.ticks):
                hist[:, k], _ = np.histogram(value[tick == k], bins=20, range=(0, 10))
            var = np.array([value[tick == k].var() for k in range(self.ticks)])
            fig, ax = plt.subplots(figsize=(8, 4))
            im = ax.imshow(
                hist / max(1, self.agents),
                origin="lower",
                aspect="auto",
                extent=(0, self.ticks, 0, 10),
                cmap="viridis",
            )
            fig.colorbar(im, ax=ax, label="share of agents")
            echo = "on" if self.config["exposure"]["echo_chamber"] else "off"
            ax.set(
                xlabel="tick",
                ylabel=f"attitude to {topic} (0 against .. 10 for)",
                title=f"Attitude distribution over time: {topic} (echo chamber {echo})",
            )
            ax2 = ax.twinx()
            ax2.plot(np.arange(self.ticks) + 0.5, var, color="white", lw=2)
            ax2.set_ylabel("variance (white line)")
            out[topic] = {
                "variance_first": round(float(var[0]), 4),
                "variance_last": round(float(var[-1]), 4),
                "mean_last": round(float(value[tick == self.ticks - 1].mean()), 4),
            }
            self.add(
                f"Attitudes: {topic}",
                _save(fig, self.plot_dir, f"attitudes_{topic}"),
                "Heat map: distribution of attitudes per tick; line: variance.",
            )
        self.summary["attitudes"] = out

    def evacuation(self) -> None:
        ivs = self.config.get("interventions", [])
        if not any(iv["kind"] == "event" and iv.get("danger") for iv in ivs):
            return
        tick, kind = _col(self.state, "tick"), _col(self.state, "place_kind")
        ids = _col(self.state, "agent_id")
        share = _per_tick(tick, kind == "shelter", self.ticks)
        trust = self._trust()
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.plot(share, lw=2, c="black", label="all agents")
        if trust is not None:
            cuts = np.quantile(trust, [1 / 3, 2 / 3])
            level = np.digitize(trust[ids], cuts)
            for k, name in enumerate(("low trust", "mid trust", "high trust")):
                m = level == k
                ax.plot(_per_tick(tick[m], kind[m] == "shelter", self.ticks), label=name)
        for iv in ivs:
            if iv["kind"] == "event":
                ax.axvline(iv["tick"], ls="--", c="grey")
                ax.text(
                    iv["tick"], 0.98, (iv.get("text") or "")[:28], rotation=90, va="top", fontsize=7
                )
        ax.set(
            xlabel="tick",
            ylabel="share of agents at a shelter",
            ylim=(0, 1.02),
            title="Evacuation to shelters",
        )
        ax.legend(loc="center right")
        warn = min((iv["tick"] for iv in ivs if iv["kind"] == "event"), default=0)
        self.summary["evacuation"] = {
            "share_before_first_event": round(float(share[max(0, warn - 1)]), 4),
            "share_max": round(float(np.nanmax(share)), 4),
            "share_final": round(float(share[-1]), 4),
            "tick_of_max": int(np.nanargmax(share)),
        }
        self.add(
            "Evacuation",
            _save(fig, self.plot_dir, "evacuation"),
            "Share of agents at a shelter; by tercile of trust in government. Dashed: events.",
        )

    def _trust(self) -> np.ndarray | None:
        from societas.agents.population import population_for
        from societas.agents.scenario import load_scenario

        try:
            pop = population_for(load_scenario(self.config))
        except Exception:
            return None
        return np.array([p.trust for p in pop.profiles])

    def ubi(self) -> None:
        ivs = [iv for iv in self.config.get("interventions", []) if iv["kind"] == "policy"]
        if not ivs:
            return
        tick, ids = _col(self.state, "tick"), _col(self.state, "agent_id")
        transfers = _col(self.state, "transfers")
        recipients = np.unique(ids[(tick == self.ticks - 1) & (transfers > 0)])
        is_rec = np.isin(ids, recipients)
        fig, axes = plt.subplots(1, 3, figsize=(12, 4))
        out: dict[str, Any] = {"recipients": int(recipients.size)}
        t0 = ivs[0]["tick"]
        for ax, (col, label) in zip(
            axes,
            (
                ("income", "monthly income"),
                ("consumption", "monthly consumption"),
                ("work_hours", "planned work hours / day"),
            ),
            strict=True,
        ):
            v = _col(self.state, col)
            for mask, name in ((is_rec, "recipients"), (~is_rec, "others")):
                series = _per_tick(tick[mask], v[mask], self.ticks)
                ax.plot(series, label=name)
                out[f"{col}_{name}_before"] = round(float(series[max(0, t0 - 1)]), 4)
                out[f"{col}_{name}_after"] = round(float(series[-1]), 4)
            ax.axvline(t0, ls="--", c="grey")
            ax.set(xlabel="tick", title=label)
            ax.legend()
        fig.suptitle(f"Basic income of {ivs[0].get('amount')} per month from tick {t0}")
        self.summary["ubi"] = out
        self.add(
            "Basic income",
            _save(fig, self.plot_dir, "ubi"),
            "Means of recipients vs others; dashed: the policy starts.",
        )

    # ------------------------------------------------------------------ output
    def write(self) -> Path:
        for part in (
            self.activity_mix,
            self.needs,
            self.llm,
            self.diffusion,
            self.attitudes,
            self.evacuation,
            self.ubi,
        ):
            part()
        (self.run_dir / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        title = f"societas report: {self.summary['scenario']}"
        sections = "\n".join(
            f"<h2>{html.escape(t)}</h2><p>{html.escape(c)}</p>"
            f'<img src="plots/{html.escape(f)}" alt="{html.escape(t)}">'
            for t, f, c in self.plots
        )
        doc = (
            f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>body{{font-family:sans-serif;max-width:1000px;margin:auto}}"
            f"img{{max-width:100%}}pre{{background:#f4f4f4;padding:8px}}</style></head>"
            f"<body><h1>{html.escape(title)}</h1>"
            f"<p>{html.escape(self.config.get('description', ''))}</p>"
            f"<pre>{html.escape(json.dumps(self.summary, indent=2))}</pre>"
            f"{sections}</body></html>\n"
        )
        path = self.run_dir / "report.html"
        path.write_text(doc)
        return path


def write_report(run_dir: str | Path) -> Path:
    """Plots, `summary.json` and `report.html` for one run directory; returns the HTML path."""
    return Report(Path(run_dir)).write()
