"""End to end: a short town run on Ray serves /metrics on loopback, a real Prometheus
(Debian's binary, started with deploy/prometheus/prometheus.yml) scrapes it, and the totals
it reports through its HTTP API equal what the run's Parquet results and stores hold."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from societas.agents.llm.gateway import RULES_MODEL
from societas.cluster.observe.metrics import MetricsConfig, RunMetrics
from tests.debian import debian_binary

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
AGENTS, TICKS = 120, 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _query(base: str, expr: str) -> list[dict]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as resp:
        body = json.loads(resp.read())
    assert body["status"] == "success", body
    return body["data"]["result"]


def _scalar(base: str, expr: str) -> float | None:
    result = _query(base, expr)
    return float(result[0]["value"][1]) if result else None


@pytest.fixture
def town_run(tmp_path):
    """A 120-agent, 6-tick town run on local Ray (2 group actors), metrics served on loopback."""
    import ray

    from societas.agents.scenario import load_scenario
    from societas.cluster.ray.runtime import run_on_ray

    root = Path(__file__).resolve().parents[2]
    scenario = load_scenario(root / "configs" / "town.yaml").with_overrides(
        agents=AGENTS, ticks=TICKS, groups=2
    )
    metrics = RunMetrics(MetricsConfig(port=0))
    port = metrics.serve()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        run_on_ray(scenario, tmp_path / "run", 2, metrics=metrics)
    finally:
        ray.shutdown()
    yield tmp_path / "run", port, metrics
    metrics.close()


def _parquet_counts(run_dir: Path) -> dict[str, float]:
    """What the run's Parquet results hold: agent steps, LLM calls and tokens, memories."""
    from societas.agents.runtime.results import read_table

    llm = read_table(run_dir, "llm").to_pylist()
    return {
        "agent_steps": read_table(run_dir, "agent_state").num_rows,
        "llm_requests": sum(r["requests"] for r in llm),
        "llm_tokens": sum(r["prompt_tokens"] + r["completion_tokens"] for r in llm),
        "memories_added": sum(r["memories_added"] for r in llm),
    }


def test_prometheus_scrapes_counters_equal_to_run_totals(town_run, tmp_path):
    run_dir, port, metrics = town_run
    assert metrics.server_address_is_loopback()
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "societas")
    assert job["static_configs"][0]["targets"] == ["127.0.0.1:9464"]
    job["static_configs"][0]["targets"] = [f"127.0.0.1:{port}"]
    cfg_path = tmp_path / "prometheus.yml"
    cfg_path.write_text(yaml.safe_dump(config))
    web = _free_port()
    base = f"http://127.0.0.1:{web}"
    proc = subprocess.Popen(
        [
            debian_binary("prometheus"),
            f"--config.file={cfg_path}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{web}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if (
                    _scalar(base, 'up{job="societas"}') == 1.0
                    and _scalar(base, "sum(societas_ticks_total)") is not None
                ):
                    break
            except OSError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
            assert time.monotonic() < deadline, "Prometheus never scraped the coordinator"
            time.sleep(0.5)
        parquet = _parquet_counts(run_dir)
        totals = json.loads((run_dir / "run.json").read_text())["totals"]
        assert parquet["agent_steps"] == AGENTS * TICKS and parquet["llm_requests"] > 0
        assert parquet["memories_added"] > 0
        expected = {
            "sum(societas_ticks_total)": TICKS,
            "sum(societas_tick_seconds_count)": TICKS,
            "max(societas_tick)": TICKS - 1,
            "sum(societas_agents)": AGENTS,
            "count(societas_group_rss_bytes > 0)": 2,
            # what the Parquet results hold
            "sum(societas_agent_steps_total)": parquet["agent_steps"],
            "sum(societas_llm_requests_total)": parquet["llm_requests"],
            "sum(societas_llm_tokens_total)": parquet["llm_tokens"],
            "sum(societas_llm_latency_seconds_count)": parquet["llm_requests"],
            # every memory is warm (vector store) or cold (Parquet): what the stores hold
            'sum(societas_memories{tier=~"warm|cold"})': parquet["memories_added"],
            # the rest against the run's record (deltas summed once per tick)
            "sum(societas_llm_errors_total)": totals["llm_errors"],
            "sum(societas_embeddings_total)": totals["embeddings"],
            "sum(societas_vector_upserts_total)": totals["vector_upserts"],
            "sum(societas_vector_queries_total)": totals["vector_queries"],
            "sum(societas_messages_total)": totals["messages_out"],
        }
        for expr, want in expected.items():
            assert _scalar(base, expr) == pytest.approx(want), expr
        by_group = {
            r["metric"]["group"]: float(r["value"][1])
            for r in _query(base, "societas_agent_steps_total")
        }
        assert by_group == {"0": 360.0, "1": 360.0}
        labels = {
            (r["metric"]["model"], r["metric"]["endpoint"])
            for r in _query(base, "societas_llm_requests_total")
        }
        assert labels == {(RULES_MODEL, "rules")}  # the model that answered, not a default
        assert _scalar(base, 'sum(societas_memories{tier="hot"})') > 0
        lag = _query(base, "societas_event_loop_lag_seconds_count")
        assert {r["metric"]["group"] for r in lag} == {"0", "1"}
        assert all(float(r["value"][1]) > 0 for r in lag)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
