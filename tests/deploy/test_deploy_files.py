"""deploy/: every file parses; manifests validate against the Kubernetes schemas (offline,
kubernetes-validate) or, for CRDs, structurally with their pod templates validated as Pods;
the launcher YAMLs validate against Ray's own cluster-launcher schema; the dashboard and
scrape configs use only metrics that cluster/observe/metrics.py exports; run configs validate."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import jsonschema
import pytest
import yaml

from societas.cluster.observe.metrics import METRICS, PREFIX, exposed_names
from societas.cluster.ray.runtime import ClusterConfig

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S_VERSION = "1.33"
kv = pytest.importorskip(
    "kubernetes_validate", reason="kubernetes-validate is not installed (dev extra)"
)


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _k8s_docs() -> list[tuple[str, dict]]:
    out = []
    paths = sorted((DEPLOY / "kuberay").glob("*.yaml"))
    for path in [*paths, DEPLOY / "prometheus" / "podmonitor.yaml"]:
        out += [(path.name, d) for d in _docs(path)]
    return out


def test_every_deploy_file_parses():
    files = [p for p in DEPLOY.rglob("*") if p.is_file()]
    assert len(files) >= 12
    for path in files:
        if path.suffix in (".yaml", ".yml"):
            assert _docs(path), path
        elif path.suffix == ".json":
            json.loads(path.read_text())
    for name in (
        "Dockerfile",
        "README.md",
        "kuberay/raycluster.yaml",
        "kuberay/rayjob.yaml",
        "kuberay/configmap.yaml",
        "launcher/aws.yaml",
        "launcher/gcp.yaml",
        "qdrant/values.yaml",
        "qdrant/run-config.yaml",
        "prometheus/prometheus.yml",
        "prometheus/podmonitor.yaml",
        "grafana/societas-dashboard.json",
    ):
        assert (DEPLOY / name).is_file(), name


def test_core_kinds_validate_against_kubernetes_schemas():
    core = [(n, d) for n, d in _k8s_docs() if d["apiVersion"] == "v1"]
    assert {d["kind"] for _, d in core} == {"ConfigMap", "PersistentVolumeClaim"}
    for _name, doc in core:
        kv.validate(doc, K8S_VERSION, strict=True)


def _pod_templates(spec: dict) -> list[dict]:
    groups = [spec["headGroupSpec"], *spec.get("workerGroupSpecs", [])]
    return [g["template"] for g in groups]


def test_ray_crds_are_well_formed_and_their_pods_validate():
    crds = [(n, d) for n, d in _k8s_docs() if d["apiVersion"] == "ray.io/v1"]
    assert sorted(d["kind"] for _, d in crds) == ["RayCluster", "RayJob"]
    for _name, doc in crds:
        with pytest.raises(kv.SchemaNotFoundError):  # CRDs: no upstream schema, hence below
            kv.validate(doc, K8S_VERSION, strict=True)
        spec = doc["spec"] if doc["kind"] == "RayCluster" else doc["spec"]["rayClusterSpec"]
        assert spec["rayVersion"] == "2.60.0"
        for template in _pod_templates(spec):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": template["metadata"],
                "spec": template["spec"],
            }
            kv.validate(pod, K8S_VERSION, strict=True)
            env = {e["name"]: e for c in template["spec"]["containers"] for e in c["env"]}
            assert env["RAY_AUTH_MODE"]["value"] == "token"
            assert env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "ray-auth"
            assert env["SOCIETAS_CLUSTER_CONFIG"]["value"] == "/etc/societas/cluster.yaml"
            mounts = {
                m["mountPath"] for c in template["spec"]["containers"] for m in c["volumeMounts"]
            }
            assert {"/etc/societas", "/home/ray/runs"} <= mounts
            vols = {v["name"]: v for v in template["spec"]["volumes"]}
            assert vols["run-config"]["configMap"]["name"] == "societas-run-config"
        workers = spec["workerGroupSpecs"]
        assert all("societas_group" in w["rayStartParams"]["resources"] for w in workers)
        head_ports = {
            p["name"]: p["containerPort"]
            for p in spec["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"]
        }
        assert head_ports["sim-metrics"] == 9464 and head_ports["dashboard"] == 8265


def test_rayjob_entrypoint_is_a_real_societas_command():
    from typer.main import get_command

    from societas.cluster.cli import app

    job = _docs(DEPLOY / "kuberay" / "rayjob.yaml")[0]
    argv = shlex.split(job["spec"]["entrypoint"])
    assert argv[:2] == ["societas", "run"] and argv[2] == "/etc/societas/run.yaml"
    run = get_command(app).commands["run"]  # type: ignore[attr-defined]
    known = {opt for p in run.params for opt in getattr(p, "opts", [])}
    flags = [a for a in argv if a.startswith("--")]
    assert set(flags) <= known, set(flags) - known


def test_run_configs_validate():
    from societas.agents.scenario import load_scenario
    from societas.cluster.ray.runtime import load_cluster_config

    cm = _docs(DEPLOY / "kuberay" / "configmap.yaml")[0]
    scenario = load_scenario(yaml.safe_load(cm["data"]["run.yaml"]))
    assert scenario.agents.count == 10000 and scenario.llm.provider == "rules"
    cluster = ClusterConfig.model_validate(yaml.safe_load(cm["data"]["cluster.yaml"]))
    assert cluster.placement == "resource" and cluster.resource == "societas_group"
    assert cluster.metrics.port == 9464
    qdrant_run = load_scenario(DEPLOY / "qdrant" / "run-config.yaml")
    vs = qdrant_run.memory.vector_store
    assert vs.backend == "qdrant" and vs.api_key_env == "QDRANT_API_KEY"
    assert "svc" in (vs.url or "") and vs.shard_key_per_group
    path = DEPLOY / "cluster.test.yaml"
    try:
        path.write_text(cm["data"]["cluster.yaml"])
        assert load_cluster_config(path) == cluster
    finally:
        path.unlink()


def test_qdrant_values_are_distributed_with_replication():
    values = _docs(DEPLOY / "qdrant" / "values.yaml")[0]
    assert values["replicaCount"] == 3
    assert values["config"]["cluster"]["enabled"] is True
    assert values["config"]["storage"]["collection"]["replication_factor"] == 2
    assert "secretKeyRef" in values["apiKey"]["valueFrom"]


def test_launcher_yamls_validate_against_rays_schema():
    import ray.autoscaler

    schema = json.loads((Path(ray.autoscaler.__file__).parent / "ray-schema.json").read_text())
    for name in ("aws.yaml", "gcp.yaml"):
        doc = _docs(DEPLOY / "launcher" / name)[0]
        jsonschema.validate(doc, schema)
        assert doc["head_node_type"] in doc["available_node_types"]
        workers = [t for n, t in doc["available_node_types"].items() if n != doc["head_node_type"]]
        assert all(t["resources"].get("societas_group", 0) > 0 for t in workers)
        assert "RAY_AUTH_MODE=token" in " ".join(doc["docker"]["run_options"])


def _metric_names(text: str) -> set[str]:
    return set(re.findall(r"\b" + PREFIX + r"[a-z_]+", text))


def test_dashboard_uses_only_real_metrics_and_covers_them_all():
    dash = json.loads((DEPLOY / "grafana" / "societas-dashboard.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    used = set().union(*(_metric_names(e) for e in exprs))
    assert used, "the dashboard queries no societas metric"
    assert used <= exposed_names(), used - exposed_names()
    base = {re.sub(r"_(bucket|sum|count)$", "", n) for n in used}
    assert {PREFIX + m for m in METRICS} <= base, {PREFIX + m for m in METRICS} - base
    assert len({p["id"] for p in dash["panels"]}) == len(dash["panels"])


def test_scrape_configs_point_at_the_coordinator():
    prom = _docs(DEPLOY / "prometheus" / "prometheus.yml")[0]
    job = next(j for j in prom["scrape_configs"] if j["job_name"] == "societas")
    assert job["static_configs"][0]["targets"] == ["127.0.0.1:9464"]
    assert job["metrics_path"] == "/metrics"
    pm = _docs(DEPLOY / "prometheus" / "podmonitor.yaml")[0]
    assert pm["kind"] == "PodMonitor"
    endpoint = pm["spec"]["podMetricsEndpoints"][0]
    assert endpoint["port"] == "sim-metrics" and endpoint["path"] == "/metrics"
    assert pm["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"] == "head"
    for text in (
        (DEPLOY / "prometheus" / "prometheus.yml").read_text(),
        (DEPLOY / "prometheus" / "podmonitor.yaml").read_text(),
    ):
        assert _metric_names(text) <= exposed_names()


def test_dockerfile_copies_every_package_and_runs_societas():
    text = (DEPLOY / "Dockerfile").read_text()
    assert text.startswith("#") and "\nFROM python:3.11" in text
    for folder in ("societas", "cluster", "agents", "memory"):
        assert f"COPY {folder} ./{folder}" in text
    assert "pip install ." in text and "USER ray" in text
    assert '"societas"' in text
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert ".venv" in ignore
