"""`RunMetrics`: GroupStats in, the right samples out over real HTTP on loopback."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from societas.agents.runtime.protocol import GroupStats
from societas.cluster.metrics import METRICS, PREFIX, MetricsConfig, RunMetrics, exposed_names


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
        if name == "llm_latency_seconds":
            continue  # only observed with a latency breakdown (next test)
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
    assert got[(PREFIX + "llm_requests_total", (("group", "0"), ("model", "rules")))] == 6
    assert got[(PREFIX + "llm_errors_total", (("group", "1"), ("model", "rules")))] == 3
    assert got[(PREFIX + "llm_tokens_total", (("group", "1"), ("model", "rules")))] == 150
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


def test_per_model_breakdown_and_latency_histogram():
    m = RunMetrics()
    m.ingest(
        _stats(
            3,
            0,
            llm_requests=5,
            extra={
                "llm.gpt-4o.requests": 4,
                "llm.gpt-4o.tokens": 400,
                "llm.gpt-4o.latency_s": 2.0,
                "llm.qwen.vl.requests": 1,  # model names may contain dots
                "llm.qwen.vl.errors": 1,
                "other": 9,
            },
        )
    )
    assert m.value("llm_requests_total", group="3", model="gpt-4o") == 4
    assert m.value("llm_tokens_total", group="3", model="gpt-4o") == 400
    assert m.value("llm_errors_total", group="3", model="qwen.vl") == 1
    assert m.value("llm_requests_total", group="3", model="rules") == 0
    assert m.value("llm_latency_seconds_count", model="gpt-4o") == 4
    assert m.value("llm_latency_seconds_sum", model="gpt-4o") == pytest.approx(2.0)
    assert m.value("llm_latency_seconds_bucket", model="gpt-4o", le="0.5") == 4
    assert m.value("llm_latency_seconds_bucket", model="gpt-4o", le="0.25") == 0


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
