"""Prometheus metrics of a run: what the coordinator serves on `/metrics`.

Names follow Ray's `ray.util.metrics` style with the prefix `societas_`; counters end in
`_total`. Group actors report a `GroupStats` per tick (at `finish_tick`, after the tick's
conversation rounds), every count a delta of that tick, and the coordinator feeds it once to
`RunMetrics.ingest`, so the numbers on `/metrics` are exactly the
sums of what the groups reported (the end-to-end test checks them, scraped by a real
Prometheus, against the run's Parquet results and stores).

LLM figures are labelled with the model and endpoint that served them (`GroupStats.llm_calls`;
`endpoint="rules"` for the in-process rules policy). Latency and event-loop lag arrive as
bucket counts (`BucketCounts`), not samples, and are exposed as Prometheus histograms.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.exposition import start_http_server
from pydantic import BaseModel, ConfigDict, Field

from societas.agents.runtime.protocol import (
    LLM_LATENCY_BUCKETS,
    LOOP_LAG_BUCKETS,
    BucketCounts,
    GroupStats,
    LLMCalls,
)

log = logging.getLogger(__name__)

PREFIX = "societas_"

# Tick durations from tens of milliseconds (rules provider, small groups) to minutes
# (many LLM calls per agent behind a slow endpoint).
TICK_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

# name (without prefix) -> (type, labels, help). The single source for the registry below,
# for deploy/ (the dashboard and scrape config are checked against it) and for the docs.
METRICS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "ticks_total": ("counter", (), "Ticks completed by the coordinator."),
    "tick_seconds": ("histogram", (), "Wall-clock seconds per tick (all groups + routing)."),
    "agent_steps_total": ("counter", ("group",), "Agent steps executed."),
    "llm_requests_total": (
        "counter",
        ("group", "model", "endpoint"),
        "LLM requests answered (cache misses).",
    ),
    "llm_tokens_total": (
        "counter",
        ("group", "model", "endpoint"),
        "LLM tokens, prompt + completion.",
    ),
    "llm_errors_total": (
        "counter",
        ("group", "model", "endpoint"),
        "LLM request attempts that failed (HTTP error, timeout).",
    ),
    "llm_fallbacks_total": (
        "counter",
        ("group", "task"),
        "Structured LLM calls answered by the call site's fallback (unusable model output).",
    ),
    "llm_answers_total": (
        "counter",
        ("group", "task", "source"),
        "Structured LLM answers by answer_source (first_try, repaired, re_asked, fallback, "
        "rules, replayed).",
    ),
    "llm_meaning_check_failures_total": (
        "counter",
        ("group", "task", "kind"),
        "Model answers that parsed but failed a meaning check (copied example, counting...).",
    ),
    "llm_latency_seconds": (
        "histogram",
        ("model", "endpoint"),
        "LLM request latency, one sample per request attempt.",
    ),
    "event_loop_lag_seconds": (
        "histogram",
        ("group",),
        "How late a 20 ms ticker on the group's event loop woke (blocking calls show here).",
    ),
    "embeddings_total": ("counter", ("group",), "Texts embedded."),
    "memories": (
        "gauge",
        ("group", "tier"),
        "Memories held per tier: warm (vector store) + cold (Parquet) is every memory; hot "
        "is the RAM copy of recent warm ones.",
    ),
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
            names |= {full + "_bucket", full + "_sum", full + "_count"}
            if name == "tick_seconds":
                names.add(full + "_created")
        elif kind == "counter":
            names |= {full, full.removesuffix("_total") + "_created"}
        else:
            names.add(full)
    return names


# A task's flat counter prefix -> (metric, label): answers by source, failed meaning checks.
_PER_ANSWER = {
    "source": ("llm_answers_total", "source"),
    "meaning": ("llm_meaning_check_failures_total", "kind"),
}


class MetricsConfig(BaseModel):
    """Where the coordinator serves `/metrics`; loopback unless an operator says otherwise."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    host: str = Field("127.0.0.1", description="Bind address; 0.0.0.0 only behind a firewall.")
    port: int = Field(9464, ge=0, le=65535, description="TCP port; 0 picks a free one.")
    default_model: str = Field("rules", min_length=1, description="Model label without breakdown.")


def _llm_calls(stats: GroupStats, default_model: str) -> list[LLMCalls]:
    """The group's per-(model, endpoint) calls; a group that reports only totals (a test
    engine) gets them under the default model at endpoint `unknown`. The breakdown must add
    up to the totals: a mismatch is a bug in the group, raised here rather than exposed."""
    if not stats.llm_calls:
        if not (stats.llm_requests or stats.llm_tokens or stats.llm_errors):
            return []
        return [
            LLMCalls(
                model=default_model,
                endpoint="unknown",
                requests=stats.llm_requests,
                tokens=stats.llm_tokens,
                errors=stats.llm_errors,
            )
        ]
    for field in ("requests", "tokens", "errors"):
        parts = sum(getattr(c, field) for c in stats.llm_calls)
        total = getattr(stats, "llm_" + field)
        if parts != total:
            raise ValueError(
                f"group {stats.group_id} tick {stats.tick}: llm_calls {field} add up to "
                f"{parts}, llm_{field} is {total}"
            )
    return stats.llm_calls


class BucketHistogram:
    """A Prometheus histogram fed with bucket counts (`BucketCounts`) rather than samples;
    registered as a custom collector (prometheus_client's Histogram only takes samples)."""

    def __init__(self, name: str, help_: str, labels: tuple[str, ...], le: tuple[float, ...]):
        self.name, self.help, self.labels, self.le = name, help_, labels, le
        self._series: dict[tuple[str, ...], BucketCounts] = {}

    def add(self, label_values: tuple[str, ...], counts: BucketCounts) -> None:
        """Add one report's counts to the series of these label values."""
        if tuple(counts.le) != self.le:
            raise ValueError(f"{self.name}: buckets {counts.le} differ from {self.le}")
        acc = self._series.setdefault(label_values, BucketCounts.empty(self.le))
        acc.counts = [a + b for a, b in zip(acc.counts, counts.counts, strict=True)]
        acc.sum += counts.sum

    def count(self, **labels: str) -> int:
        """Samples counted in one series (0 when absent)."""
        got = self._series.get(tuple(labels[k] for k in self.labels))
        return 0 if got is None else got.count

    def collect(self) -> list[HistogramMetricFamily]:
        """The exposition: cumulative buckets per series."""
        fam = HistogramMetricFamily(self.name, self.help, labels=list(self.labels))
        for values, c in sorted(list(self._series.items())):
            cumulative, buckets = 0, []
            for bound, n in zip([*self.le, float("inf")], c.counts, strict=True):
                cumulative += n
                buckets.append(
                    ("+Inf" if bound == float("inf") else repr(float(bound)), cumulative)
                )
            fam.add_metric(list(values), buckets, c.sum)
        return [fam]


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
            elif name == "tick_seconds":
                self._m[name] = Histogram(
                    full, help_, labels, buckets=TICK_BUCKETS, registry=self.registry
                )
            else:
                le = LLM_LATENCY_BUCKETS if name == "llm_latency_seconds" else LOOP_LAG_BUCKETS
                self._m[name] = BucketHistogram(full, help_, labels, le)
                self.registry.register(self._m[name])

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
            for calls in _llm_calls(stats, self.config.default_model):
                labels = {"group": g, "model": calls.model, "endpoint": calls.endpoint}
                for name, value in (
                    ("llm_requests_total", calls.requests),
                    ("llm_tokens_total", calls.tokens),
                    ("llm_errors_total", calls.errors),
                ):
                    m[name].labels(**labels).inc(value)
                    self._add(name, value)
                if calls.latency.count:
                    m["llm_latency_seconds"].add((calls.model, calls.endpoint), calls.latency)
            for task, counters in stats.llm_tasks.items():  # this tick's, per task
                failed = counters.get("fallbacks", 0) + counters.get("failed", 0)
                if failed < 0:
                    raise ValueError(f"group {g} tick {stats.tick}: negative fallbacks {failed}")
                if failed:
                    m["llm_fallbacks_total"].labels(group=g, task=task).inc(failed)
                    self._add("llm_fallbacks_total", failed)
                for key, n in counters.items():  # flat `source.<s>`, `meaning.<kind>` keys
                    prefix, _, what = key.partition(".")
                    found = _PER_ANSWER.get(prefix)
                    if found is not None and what and n > 0:
                        metric, label = found
                        m[metric].labels(group=g, task=task, **{label: what}).inc(n)
                        self._add(metric, n)
            if stats.loop_lag is not None:
                m["event_loop_lag_seconds"].add((g,), stats.loop_lag)
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
