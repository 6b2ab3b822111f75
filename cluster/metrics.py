"""Prometheus metrics of a run (design §7): what the coordinator serves on `/metrics`.

Names follow Ray's `ray.util.metrics` style with the prefix `societas_`; counters end in
`_total`. Group actors report a `GroupStats` per tick and the coordinator feeds it to
`RunMetrics.ingest`, so the numbers on `/metrics` are exactly the sums of what the groups
reported (the end-to-end test checks this against a real Prometheus server).

Per-model LLM figures: `GroupStats` carries one total per kind (`llm_requests`,
`llm_tokens`, `llm_errors`). A group that talks to several models adds a per-model breakdown
in `GroupStats.extra` under the keys `llm.<model>.requests`, `llm.<model>.tokens`,
`llm.<model>.errors` and `llm.<model>.latency_s` (sum of request seconds); without them
the totals are labelled with the run's default model (e.g. `rules`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import start_http_server
from pydantic import BaseModel, ConfigDict, Field

from societas.agents.runtime.protocol import GroupStats

log = logging.getLogger(__name__)

PREFIX = "societas_"

# Tick durations from tens of milliseconds (rules provider, small groups) to minutes
# (many LLM calls per agent behind a slow endpoint).
TICK_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
LLM_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

# name (without prefix) -> (type, labels, help). The single source for the registry below,
# for deploy/ (the dashboard and scrape config are checked against it) and for the docs.
METRICS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "ticks_total": ("counter", (), "Ticks completed by the coordinator."),
    "tick_seconds": ("histogram", (), "Wall-clock seconds per tick (all groups + routing)."),
    "agent_steps_total": ("counter", ("group",), "Agent steps executed."),
    "llm_requests_total": ("counter", ("group", "model"), "LLM requests (cache misses)."),
    "llm_tokens_total": ("counter", ("group", "model"), "LLM tokens, prompt + completion."),
    "llm_errors_total": ("counter", ("group", "model"), "LLM requests that failed."),
    "llm_latency_seconds": (
        "histogram",
        ("model",),
        "LLM request latency (per-tick mean per group and model, weighted by requests).",
    ),
    "embeddings_total": ("counter", ("group",), "Texts embedded."),
    "memories": ("gauge", ("group", "tier"), "Memories held per tier (hot, warm, cold)."),
    "vector_upserts_total": ("counter", ("group",), "Points written to the vector store."),
    "vector_queries_total": ("counter", ("group",), "Vector store queries."),
    "messages_total": ("counter", ("group",), "Messages sent across tick boundaries."),
    "group_rss_bytes": ("gauge", ("group",), "Resident memory of the group's process."),
    "agents": ("gauge", ("group",), "Agents owned by the group."),
    "tick": ("gauge", (), "Last completed tick."),
}


def exposed_names() -> set[str]:
    """Every sample name Prometheus can see (counters `_total`, histograms' series)."""
    names: set[str] = set()
    for name, (kind, _labels, _help) in METRICS.items():
        full = PREFIX + name
        if kind == "histogram":
            names |= {full + "_bucket", full + "_sum", full + "_count", full + "_created"}
        elif kind == "counter":
            names |= {full, full.removesuffix("_total") + "_created"}
        else:
            names.add(full)
    return names


class MetricsConfig(BaseModel):
    """Where the coordinator serves `/metrics`; loopback unless an operator says otherwise."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    host: str = Field("127.0.0.1", description="Bind address; 0.0.0.0 only behind a firewall.")
    port: int = Field(9464, ge=0, le=65535, description="TCP port; 0 picks a free one.")
    default_model: str = Field("rules", min_length=1, description="Model label without breakdown.")


def _model_breakdown(stats: GroupStats, default_model: str) -> dict[str, dict[str, float]]:
    """Per-model LLM figures from `extra` (see module doc), or the totals under one model."""
    per: dict[str, dict[str, float]] = {}
    for key, value in stats.extra.items():
        if not key.startswith("llm."):
            continue
        model, _, field = key[4:].rpartition(".")
        if model and field in {"requests", "tokens", "errors", "latency_s"}:
            per.setdefault(model, {})[field] = float(value)
    if per:
        return per
    return {
        default_model: {
            "requests": float(stats.llm_requests),
            "tokens": float(stats.llm_tokens),
            "errors": float(stats.llm_errors),
        }
    }


class RunMetrics:
    """The run's Prometheus registry, its optional HTTP server and the totals it has seen."""

    def __init__(self, config: MetricsConfig | None = None) -> None:
        self.config = config or MetricsConfig()
        self.registry = CollectorRegistry(auto_describe=True)
        self._lock = threading.Lock()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.totals: dict[str, float] = {}
        self._m: dict[str, Any] = {}
        for name, (kind, labels, help_) in METRICS.items():
            full = PREFIX + name
            if kind == "counter":
                # prometheus_client appends `_total` itself.
                self._m[name] = Counter(
                    full.removesuffix("_total"), help_, labels, registry=self.registry
                )
            elif kind == "gauge":
                self._m[name] = Gauge(full, help_, labels, registry=self.registry)
            else:
                buckets = TICK_BUCKETS if name == "tick_seconds" else LLM_LATENCY_BUCKETS
                self._m[name] = Histogram(
                    full, help_, labels, buckets=buckets, registry=self.registry
                )

    # -- serving -------------------------------------------------------------------------
    def serve(self) -> int:
        """Start the `/metrics` HTTP server (daemon thread); returns the bound port."""
        if self._server is None:
            try:
                self._server, self._thread = start_http_server(
                    self.config.port, addr=self.config.host, registry=self.registry
                )
            except OSError as err:
                if self.config.port == 0:
                    raise
                # Another run (or exporter) holds the port: serve on a free one rather than
                # lose the run; the bound port is logged and returned.
                self._server, self._thread = start_http_server(
                    0, addr=self.config.host, registry=self.registry
                )
                log.warning(
                    "metrics port %s is busy (%s); serving /metrics on %s:%s instead",
                    self.config.port,
                    err.strerror,
                    self.config.host,
                    self._server.server_port,
                )
        return int(self._server.server_port)

    def server_address_is_loopback(self) -> bool:
        """Whether the server listens on a loopback address only."""
        if self._server is None:
            return False
        import ipaddress

        host = self._server.server_address[0]
        return host == "localhost" or ipaddress.ip_address(host).is_loopback

    @property
    def port(self) -> int | None:
        """Bound port, or None when not serving."""
        return None if self._server is None else int(self._server.server_port)

    def close(self) -> None:
        """Stop the HTTP server, if any."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._server = self._thread = None

    # -- ingest --------------------------------------------------------------------------
    def _add(self, key: str, value: float) -> None:
        self.totals[key] = self.totals.get(key, 0.0) + value

    def ingest(self, stats: GroupStats, agents: int | None = None) -> None:
        """Add one group's per-tick stats to the counters and set its gauges."""
        g = str(stats.group_id)
        m = self._m
        with self._lock:
            for name, value in (
                ("agent_steps_total", stats.agent_steps),
                ("embeddings_total", stats.embeddings),
                ("vector_upserts_total", stats.vector_upserts),
                ("vector_queries_total", stats.vector_queries),
                ("messages_total", stats.messages_out),
            ):
                if value < 0:
                    raise ValueError(f"group {g} tick {stats.tick}: negative {name} {value}")
                m[name].labels(group=g).inc(value)
                self._add(name, value)
            for model, fig in _model_breakdown(stats, self.config.default_model).items():
                for field, name in (
                    ("requests", "llm_requests_total"),
                    ("tokens", "llm_tokens_total"),
                    ("errors", "llm_errors_total"),
                ):
                    value = fig.get(field, 0.0)
                    m[name].labels(group=g, model=model).inc(value)
                    self._add(name, value)
                n = int(fig.get("requests", 0))
                latency = fig.get("latency_s")
                if n > 0 and latency is not None:
                    # GroupStats carries a sum, not samples: observe the mean n times so
                    # the histogram's count equals the request count.
                    hist = m["llm_latency_seconds"].labels(model=model)
                    for _ in range(n):
                        hist.observe(latency / n)
            for tier, count in stats.memories_by_tier.items():
                m["memories"].labels(group=g, tier=tier).set(count)
            m["group_rss_bytes"].labels(group=g).set(stats.rss_bytes)
            if agents is not None:
                m["agents"].labels(group=g).set(agents)

    def ingest_many(self, stats: Iterable[GroupStats]) -> None:
        """Ingest the stats of every group for one tick."""
        for s in stats:
            self.ingest(s)

    def tick_done(self, tick: int, seconds: float) -> None:
        """Record one completed tick and its wall-clock duration."""
        with self._lock:
            self._m["ticks_total"].inc()
            self._m["tick_seconds"].observe(seconds)
            self._m["tick"].set(tick)
            self._add("ticks_total", 1)

    def value(self, name: str, **labels: str) -> float:
        """One sample's current value from the registry (0 when absent); for tests and logs."""
        full = PREFIX + name
        got = self.registry.get_sample_value(full, labels or None)
        return 0.0 if got is None else float(got)

    def __enter__(self) -> RunMetrics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
