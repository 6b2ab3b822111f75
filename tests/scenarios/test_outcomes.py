"""Scenario outcomes on the rules provider: diffusion, hurricane, UBI, polarization."""

from __future__ import annotations

import numpy as np
import pytest

from societas.agents.runtime.results import read_table
from societas.cluster.report import write_report

from .conftest import scenario


def _np(table, col):
    return table.column(col).to_numpy(zero_copy_only=False)


async def test_diffusion_reaches_most_of_the_connected_society_and_no_isolated(run):
    cfg = scenario(
        "diffusion", agents={"count": 60}, network={"k": 4, "isolated": 10, "rewire_p": 0.2}
    )
    out = await run(cfg)
    k = read_table(out, "knowledge")
    ids = set(_np(k, "agent_id").tolist())
    assert len(ids & set(range(50))) > 25, len(ids)
    assert not ids & set(range(50, 60))
    ticks = _np(k, "tick")
    assert ticks.min() == 0 and ticks.max() > 0  # spread over time, tick by tick


async def test_hurricane_warning_raises_evacuation(run):
    over = {"agents": {"count": 40}, "ticks": 28}
    cfg = scenario("hurricane", **over)
    cfg["interventions"] = [iv for iv in cfg["interventions"] if iv["tick"] < 28]
    warned = await run(cfg, "warned")
    cfg["interventions"] = [iv for iv in cfg["interventions"] if not iv.get("trust_gated")]
    control = await run(cfg, "control")

    def shelter_share(out, tick):
        s = read_table(out, "agent_state")
        m = _np(s, "tick") == tick
        return float(np.mean(_np(s, "place_kind")[m] == "shelter"))

    assert shelter_share(warned, 7) == 0.0
    assert shelter_share(warned, 20) > 0.2
    assert shelter_share(control, 20) == 0.0
    summary = write_report(warned).parent / "summary.json"
    assert summary.exists()


async def test_ubi_raises_recipients_income_by_the_amount(run):
    cfg = scenario("ubi", agents={"count": 40}, ticks=40)
    out = await run(cfg)
    s = read_table(out, "agent_state")
    tick, ids, income = _np(s, "tick"), _np(s, "agent_id"), _np(s, "income")
    before = dict(zip(ids[tick == 29].tolist(), income[tick == 29].tolist(), strict=True))
    after = dict(zip(ids[tick == 39].tolist(), income[tick == 39].tolist(), strict=True))
    paid = {
        int(r["agent_id"]) for r in read_table(out, "events").to_pylist() if r["kind"] == "policy"
    }
    assert 5 < len(paid) < 35
    for i, value in after.items():
        expected = before[i] + 1000 if i in paid else before[i]
        assert value == pytest.approx(expected, abs=1e-6)
    hours = _np(s, "work_hours")
    rec = np.isin(ids, list(paid)) & (tick == 39) & (hours > 0)
    assert hours[rec].max() < 8.0  # recipients plan fewer hours on the next day


async def test_echo_chamber_ends_with_higher_attitude_variance(run):
    over = {
        "agents": {"count": 60},
        "ticks": 24,
        "network": {"k": 6, "homophily": 0.9, "rewire_p": 0.05},
    }
    on = await run(scenario("polarization", **over), "on")
    off = await run(scenario("polarization-open", **over), "off")

    def var_last(out):
        a = read_table(out, "attitudes")
        t = _np(a, "tick")
        return float(_np(a, "value")[t == t.max()].var())

    assert var_last(on) > var_last(off) + 1.0
