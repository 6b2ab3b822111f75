"""`RunMetrics`: GroupStats in, the right samples out over real HTTP on loopback."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from societas.agents.runtime.protocol import (
    LLM_LATENCY_BUCKETS,
    LOOP_LAG_BUCKETS,
    BucketCounts,
    GroupStats,
    LLMCalls,
)
from societas.cluster.observe.metrics import (
    METRICS,
    PREFIX,
    MetricsConfig,
    RunMetrics,
    exposed_names,
)


def _scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        assert resp.status == 200
        text = resp.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _stats(group: int, tick: int, **kw) -> GroupStats:
    return GroupStats(group_id=group, tick=tick, **kw)


@pytest.fixture
def served():
    m = RunMetrics(MetricsConfig(port=0))
    port = m.serve()
    yield m, port
    m.close()


def test_server_binds_loopback_by_default_and_serves_every_metric(served):
    m, port = served
    assert m._server.server_address[0] == "127.0.0.1"
    assert MetricsConfig().host == "127.0.0.1" and MetricsConfig().port == 9464
    m.ingest(_stats(0, 0, agent_steps=1, memories_by_tier={"hot": 1}, llm_requests=1), agents=1)
    m.tick_done(0, 0.2)
    scraped = {name for name, _ in _scrape(port)}
    # Every declared metric is exposed under its declared name, nothing undeclared.
    assert scraped <= exposed_names()
    for name, (kind, _labels, _help) in METRICS.items():
        probe = PREFIX + name + ("_count" if kind == "histogram" else "")
        observed_only = ("llm_fallbacks_total", "llm_answers_total")
        observed_only += ("llm_meaning_check_failures_total",)
        if name in ("llm_latency_seconds", "event_loop_lag_seconds", *observed_only):
            continue  # only exposed once observed (next tests)
        assert probe in scraped, probe


def test_counters_are_sums_of_group_stats_over_http(served):
    m, port = served
    for tick in range(3):
        for group in (0, 1):
            m.ingest(
                _stats(
                    group,
                    tick,
                    agent_steps=10 + group,
                    llm_requests=2,
                    llm_tokens=50,
                    llm_errors=group,
                    embeddings=7,
                    vector_upserts=3,
                    vector_queries=4,
                    messages_out=5 * group,
                    memories_by_tier={"hot": 100 * (tick + 1), "warm": tick},
                    rss_bytes=1000 + tick,
                ),
                agents=10 + group,
            )
        m.tick_done(tick, 0.1 * (tick + 1))
    got = _scrape(port)
    g0, g1 = (("group", "0"),), (("group", "1"),)
    assert got[(PREFIX + "agent_steps_total", g0)] == 30
    assert got[(PREFIX + "agent_steps_total", g1)] == 33
    assert got[(PREFIX + "messages_total", g1)] == 15
    unknown = (("endpoint", "unknown"),)  # no per-model breakdown: the default model
    assert got[(PREFIX + "llm_requests_total", (*unknown, *g0, ("model", "rules")))] == 6
    assert got[(PREFIX + "llm_errors_total", (*unknown, *g1, ("model", "rules")))] == 3
    assert got[(PREFIX + "llm_tokens_total", (*unknown, *g1, ("model", "rules")))] == 150
    assert got[(PREFIX + "memories", (("group", "0"), ("tier", "hot")))] == 300  # gauge: last
    assert got[(PREFIX + "group_rss_bytes", g1)] == 1002
    assert got[(PREFIX + "agents", g1)] == 11
    assert got[(PREFIX + "ticks_total", ())] == 3
    assert got[(PREFIX + "tick", ())] == 2
    assert got[(PREFIX + "tick_seconds_count", ())] == 3
    assert got[(PREFIX + "tick_seconds_sum", ())] == pytest.approx(0.6)
    assert got[(PREFIX + "tick_seconds_bucket", (("le", "0.25"),))] == 2
    assert m.totals["agent_steps_total"] == 63
    assert m.totals["vector_queries_total"] == 24


def _with_le(labels: tuple, le: str) -> tuple:
    return tuple(sorted((*labels, ("le", le))))


def _latency(*samples: float) -> BucketCounts:
    h = BucketCounts.empty(LLM_LATENCY_BUCKETS)
    for x in samples:
        h.observe(x)
    return h


def test_llm_figures_are_labelled_by_model_and_endpoint_with_latency_histograms(served):
    m, port = served
    url = "http://127.0.0.1:8000/v1"
    calls = [
        LLMCalls(
            model="qwen.vl", endpoint=url, requests=3, tokens=300, errors=1,
            latency=_latency(0.2, 0.3, 0.4, 7.0),
        ),  # model names may contain dots
        LLMCalls(
            model="rules", endpoint="rules", requests=2, tokens=20, latency=_latency(1e-5, 2e-5)
        ),
    ]  # fmt: skip
    lag = BucketCounts.empty(LOOP_LAG_BUCKETS)
    for x in (0.0001, 0.003, 0.2):
        lag.observe(x)
    for tick in range(2):
        stats = _stats(
            3, tick, llm_requests=5, llm_tokens=320, llm_errors=1, llm_calls=calls, loop_lag=lag
        )
        m.ingest(stats)
    got = _scrape(port)
    q = (("endpoint", url), ("group", "3"), ("model", "qwen.vl"))
    assert got[(PREFIX + "llm_requests_total", q)] == 6
    assert got[(PREFIX + "llm_tokens_total", q)] == 600
    assert got[(PREFIX + "llm_errors_total", q)] == 2
    r = (("endpoint", "rules"), ("group", "3"), ("model", "rules"))
    assert got[(PREFIX + "llm_requests_total", r)] == 4
    assert m.totals["llm_requests_total"] == 10 and m.totals["llm_errors_total"] == 2
    lat = (("endpoint", url), ("model", "qwen.vl"))
    assert got[(PREFIX + "llm_latency_seconds_count", lat)] == 8
    assert got[(PREFIX + "llm_latency_seconds_sum", lat)] == pytest.approx(15.8)
    assert got[(PREFIX + "llm_latency_seconds_bucket", _with_le(lat, "0.25"))] == 2
    assert got[(PREFIX + "llm_latency_seconds_bucket", _with_le(lat, "0.5"))] == 6
    assert got[(PREFIX + "llm_latency_seconds_bucket", _with_le(lat, "+Inf"))] == 8
    rl = (("endpoint", "rules"), ("model", "rules"))
    assert got[(PREFIX + "llm_latency_seconds_bucket", _with_le(rl, "0.0001"))] == 4
    g3 = ("group", "3")
    assert got[(PREFIX + "event_loop_lag_seconds_count", (g3,))] == 6
    assert got[(PREFIX + "event_loop_lag_seconds_bucket", _with_le((g3,), "0.001"))] == 2
    assert got[(PREFIX + "event_loop_lag_seconds_bucket", _with_le((g3,), "0.005"))] == 4
    assert got[(PREFIX + "event_loop_lag_seconds_sum", (g3,))] == pytest.approx(2 * 0.2031)


def test_totals_without_a_breakdown_go_to_the_default_model_and_a_wrong_one_is_refused():
    m = RunMetrics(MetricsConfig(default_model="m0"))
    m.ingest(_stats(0, 0, llm_requests=4, llm_tokens=40))
    assert m.value("llm_requests_total", group="0", model="m0", endpoint="unknown") == 4
    bad = [LLMCalls(model="a", endpoint="b", requests=1, tokens=10)]
    with pytest.raises(ValueError, match="llm_calls requests add up to 1, llm_requests is 2"):
        m.ingest(_stats(0, 1, llm_requests=2, llm_tokens=10, llm_calls=bad))
    with pytest.raises(ValueError, match="buckets"):
        m.ingest(_stats(0, 2, loop_lag=BucketCounts.empty((1.0,))))


def test_negative_counts_are_rejected_and_config_is_strict():
    m = RunMetrics()
    with pytest.raises(ValueError, match="negative agent_steps_total"):
        m.ingest(_stats(0, 1, agent_steps=-1))
    with pytest.raises(ValueError, match="port"):
        MetricsConfig(port=70000)
    with pytest.raises(ValueError, match="hots"):
        MetricsConfig(hots="0.0.0.0")


def test_close_frees_the_port():
    m = RunMetrics(MetricsConfig(port=0))
    port = m.serve()
    m.close()
    again = RunMetrics(MetricsConfig(port=port))
    assert again.serve() == port
    again.close()
    assert again.port is None


def test_busy_port_falls_back_to_a_free_one(caplog):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        metrics = RunMetrics(MetricsConfig(port=busy))
        port = metrics.serve()
        try:
            assert port != busy and port > 0
            assert f"metrics port {busy} is busy" in caplog.text
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
                assert b"societas_ticks_total" in resp.read()
        finally:
            metrics.close()


async def test_llm_calls_over_http_carry_model_endpoint_latency_and_failed_attempts():
    """The gateway against the emulator (a real HTTP server on loopback, 30 % of answers 500s
    that are retried): the per-tick figures name the model and base URL, count each failed
    attempt, put one latency sample per attempt, and add up to the accounting's totals."""
    import asyncio

    from societas.agents.llm.gateway import LLMGateway
    from societas.agents.runtime.stats import Deltas, llm_calls_delta
    from societas.testing.emulator import EmulatorConfig, serve

    async with serve(EmulatorConfig(base_latency_s=0.02, rate_500=0.3, seed=3)) as (_emu, url):
        gateway = LLMGateway(
            {
                "endpoints": [{"base_url": url, "model": "emulated"}],
                "timeout_s": 5,
                "retry": {"max_attempts": 10, "base_delay_s": 0.005, "max_delay_s": 0.02},
            }
        )
        try:
            asks = [[{"role": "user", "content": f"hello {i}"}] for i in range(20)]
            await asyncio.gather(*(gateway.complete(ask) for ask in asks))
        finally:
            await gateway.aclose()
    deltas = Deltas()
    (calls,) = llm_calls_delta(deltas, gateway.accounting)
    assert (calls.model, calls.endpoint) == ("emulated", url)
    assert calls.requests == 20 and calls.errors > 0
    retried = sum(n for k, n in gateway.accounting.events.items() if k.startswith("retry."))
    assert calls.errors == retried  # every failed attempt was retried (none gave up)
    assert calls.latency.count == calls.requests + calls.errors
    assert calls.latency.sum >= 0.02 * calls.requests  # the emulator's latency is in there
    tokens = sum(m.prompt_tokens + m.completion_tokens for m in gateway.accounting.models.values())
    assert calls.tokens == tokens
    assert llm_calls_delta(deltas, gateway.accounting) == []  # reported once, never again
    m = RunMetrics()
    m.ingest(
        _stats(0, 0, llm_requests=20, llm_tokens=tokens, llm_errors=calls.errors, llm_calls=[calls])
    )
    labels = {"model": "emulated", "endpoint": url}
    assert m.value("llm_latency_seconds_count", **labels) == 20 + calls.errors
    assert m.value("llm_errors_total", group="0", **labels) == calls.errors
