"""Real runs for the report tests: small hurricanes (treatment and control), a polarization
run with an intervention, a diffusion run; each once per session, on the rules policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenario_configs import CONFIGS, scenario

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
__all__ = ["ARTIFACTS", "CONFIGS", "scenario"]


def _run(cfg: dict[str, Any], out: Path, embedder: Any, groups: int = 2) -> Path:
    from societas.cluster.loop.local import run_local

    run_local(cfg, out, groups, embedder=embedder)
    return out


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("report-runs")


def _hurricane(warned: bool) -> dict[str, Any]:
    """40 agents, 20 simulated hours: the warning (if warned) at 10:00, landfall at 21:00."""
    cfg = scenario("hurricane", agents={"count": 40}, ticks=40)
    cfg["interventions"] = [
        iv for iv in cfg["interventions"]
        if iv["tick"] < 40 and (warned or not iv.get("trust_gated"))
    ]  # fmt: skip
    cfg["surveys"] = [
        {"id": "afternoon", "day": 0, "hour": 15, "questions": [
            {"id": "safe", "kind": "likert", "scale": 5, "text": "How safe do you feel?"},
            {"id": "plans", "kind": "open", "text": "What will you do tonight?"}]}
    ]  # fmt: skip
    return cfg


@pytest.fixture(scope="session")
def hurricane(runs_root, bm25_embedder) -> Path:
    return _run(_hurricane(True), runs_root / "warned", bm25_embedder)


@pytest.fixture(scope="session")
def hurricane_control(runs_root, bm25_embedder) -> Path:
    """The same society without the mayor's warning (landfall only)."""
    return _run(_hurricane(False), runs_root / "no-warning", bm25_embedder)


@pytest.fixture(scope="session")
def polarization(runs_root, bm25_embedder) -> Path:
    """40 agents, 24 ticks; at tick 4 an event reaches a fifth of them (the treated)."""
    cfg = scenario("polarization", agents={"count": 40}, ticks=24)
    cfg["interventions"] = [
        {"tick": 4, "kind": "event", "select": {"fraction": 0.2},
         "text": "A town meeting explains where the carbon tax money goes.", "importance": 0.8}
    ]  # fmt: skip
    return _run(cfg, runs_root / "polarization", bm25_embedder, groups=1)


@pytest.fixture(scope="session")
def diffusion(runs_root, bm25_embedder) -> Path:
    cfg = scenario("diffusion", agents={"count": 40}, ticks=24, network={"isolated": 4})
    return _run(cfg, runs_root / "diffusion", bm25_embedder, groups=1)
