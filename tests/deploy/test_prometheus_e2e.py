"""End to end: a short town run serves /metrics on loopback, a real Prometheus (Debian's
binary, started with deploy/prometheus/prometheus.yml) scrapes it, and the counters it
reports through its HTTP API equal the run's own totals."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from societas.cluster.metrics import MetricsConfig, RunMetrics
from societas.cluster.ray_runtime import ClusterConfig, InProcessGroup, RunSpec, run_groups

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(
    PROMETHEUS is None,
    reason="Debian's `prometheus` binary is not installed (.ci/run installs it with apt-get; "
    "apt was unavailable on this machine)",
)


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
    """A 120-agent, 6-tick town run (2 in-process groups) with metrics served on loopback."""
    from societas.agents.runtime.engine import GroupEngine
    from societas.agents.scenario import load_scenario
    from societas.cluster.local import partition

    root = Path(__file__).resolve().parents[2]
    scenario = load_scenario(root / "configs" / "town.yaml").with_overrides(
        agents=120, ticks=6, groups=2
    )
    metrics = RunMetrics(MetricsConfig(port=0))
    port = metrics.serve()
    engines = [
        InProcessGroup(GroupEngine(scenario, g, ids, tmp_path))
        for g, ids in enumerate(partition(120, 2))
    ]
    spec = RunSpec(run_dir=tmp_path, ticks=6, seed=scenario.seed, agents=120)
    result, _ = asyncio.run(run_groups(engines, spec, ClusterConfig(), metrics=metrics))
    yield result, port, metrics
    metrics.close()


def test_prometheus_scrapes_counters_equal_to_run_totals(town_run, tmp_path):
    result, port, metrics = town_run
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
            PROMETHEUS,
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
        totals = result.totals
        assert totals["agent_steps"] == 120 * 6 and totals["llm_requests"] > 0
        expected = {
            "sum(societas_ticks_total)": 6,
            "sum(societas_agent_steps_total)": totals["agent_steps"],
            "sum(societas_llm_requests_total)": totals["llm_requests"],
            "sum(societas_llm_tokens_total)": totals["llm_tokens"],
            "sum(societas_llm_errors_total)": totals["llm_errors"],
            "sum(societas_embeddings_total)": totals["embeddings"],
            "sum(societas_vector_upserts_total)": totals["vector_upserts"],
            "sum(societas_vector_queries_total)": totals["vector_queries"],
            "sum(societas_messages_total)": totals["messages_out"],
            "sum(societas_tick_seconds_count)": 6,
            "max(societas_tick)": 5,
            "count(societas_group_rss_bytes > 0)": 2,
            "sum(societas_agents)": 120,
        }
        for expr, want in expected.items():
            assert _scalar(base, expr) == pytest.approx(want), expr
        by_group = {
            r["metric"]["group"]: float(r["value"][1])
            for r in _query(base, "societas_agent_steps_total")
        }
        assert by_group == {"0": 360.0, "1": 360.0}
        models = {r["metric"]["model"] for r in _query(base, "societas_llm_requests_total")}
        assert models == {"rules"}
        assert _scalar(base, 'sum(societas_memories{tier="hot"})') > 0
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
