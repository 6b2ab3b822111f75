"""The `finmem` profile: paper layers, per-layer retrieval, promotion by the access counter,
demotion and clean-up by importance thresholds."""

from __future__ import annotations

import pytest

from societas.memory import GroupMemoryConfig
from societas.memory.policies.forgetting import ForgettingPolicy, finmem_forgetting, finmem_layers
from societas.memory.policies.runner import forgetting_pass

DAY = 86_400.0


def test_profile_sets_the_paper_layers_unless_the_config_sets_them():
    cfg = GroupMemoryConfig(profile="finmem")
    forgetting = cfg.policies.forgetting
    assert forgetting.enabled and forgetting.per_layer_retrieval
    assert forgetting.layers == finmem_layers()
    decays = [forgetting.layers[n].importance_decay_per_day for n in ("short", "mid", "long")]
    assert decays == [0.9, 0.967, 0.988]
    taus = [forgetting.layers[n].recency_tau_days for n in ("short", "mid", "long")]
    assert taus == [3, 90, 365]
    own = GroupMemoryConfig(profile="finmem", policies={"forgetting": {"enabled": False}})
    assert not own.policies.forgetting.enabled  # explicit config wins over the profile
    assert not GroupMemoryConfig().policies.forgetting.enabled  # default profile unchanged
    again = GroupMemoryConfig.model_validate(cfg.model_dump(mode="json"))
    assert again.policies.forgetting == forgetting


def test_demotion_and_cleanup_by_importance_thresholds():
    policy = finmem_forgetting()
    now = 10 * DAY
    # mid: importance 0.5 < 0.6 (lower jump threshold) → demoted unless the counter earned it
    assert policy.decide(0.5, "mid", now, now, now)[0] == "demote"
    assert policy.decide(0.5, "mid", now, now, now, access_count=3)[0] == "keep"
    assert policy.decide(0.7, "long", now, now, now)[0] == "demote"  # below 0.8
    assert policy.decide(0.04, "short", now, now, now)[0] == "cleanup"  # below 0.05
    # importance decays by the layer's daily factor: 0.5 × 0.9^30 ≈ 0.02 → clean-up
    assert policy.decide(0.5, "short", 0.0, now, 30 * DAY)[0] == "cleanup"
    # recency below 0.05: exp(-Δ/3 days) < 0.05 after ~9 days without access → clean-up
    assert policy.decide(0.9, "reflection", 0.0, 0.0, 10 * DAY)[0] == "keep"  # τ = 365
    old = ForgettingPolicy(enabled=True, layers=finmem_layers())
    assert old.decide(0.55, "short", now - 10 * DAY, now - 10 * DAY, now)[0] == "cleanup"
    assert policy.decide(0.65, "short", now, now, now)[0] == "promote"  # above 0.6
    assert policy.decide(0.3, "short", now, now, now, access_count=2)[0] == "keep"
    assert policy.decide(0.3, "short", now, now, now, access_count=3)[0] == "promote"


@pytest.fixture
async def finmem_group(group_factory, backend):
    forgetting = finmem_forgetting().model_copy(update={"run_every_ticks": 1})
    g = group_factory(
        backend,
        profile="finmem",
        policies={"forgetting": forgetting.model_dump()},
        tiers={"warm_max_age_days": None, "migrate_every_ticks": 1},
    )
    await g.add_agents({1: {}})
    yield g
    await g.close()


async def test_promotion_after_the_configured_accesses(finmem_group):
    g = finmem_group
    s = g.agent(1).stream
    target = await s.add("event", "the bond yield curve inverted sharply", importance=0.3)
    other = await s.add("event", "a quiet day at the harbour market", importance=0.3)
    layer_after = []
    for _ in range(6):
        hits = await s.search("bond yield curve", top_k=1)
        assert target in {h.id for h in hits}
        await g.end_tick()  # counts written, then the daily FinMem pass (every tick here)
        (rec,) = await s.get_by_ids(target)
        layer_after.append(rec.layer)
    # short → mid after 3 reads (the access counter), mid → long after 6
    assert layer_after == ["short", "short", "mid", "mid", "mid", "long"]
    (quiet,) = await s.get_by_ids(other)
    # once the target left short, the quiet memory is short's best and is read from then on
    assert quiet.layer == ("mid" if quiet.access_count >= 3 else "short")
    assert g.counters["promoted"] == 2 + (quiet.access_count >= 3)


async def test_per_layer_retrieval_returns_from_every_layer(finmem_group):
    g = finmem_group
    s = g.agent(1).stream
    ids = {}
    for layer in ("short", "mid", "long"):
        ids[layer] = [
            await s.add("event", f"{layer} note {k} about the grain market", importance=0.9)
            for k in range(3)
        ]
    ids["reflection"] = [
        await s.add("reflection", f"insight {k} on grain prices", importance=0.9) for k in range(3)
    ]
    now = g.clock.abs_seconds
    await g.sync_writes()  # queued adds written before the store is used directly
    for layer in ("mid", "long"):
        await g.store.set_payload(ids[layer], {"layer": layer, "layer_since": now})
        for memory_id in ids[layer]:
            g.hot.set_layer(memory_id, layer, 0.9, now)
    hits = await s.search("grain market prices", top_k=2)
    by_layer: dict[str, list[int]] = {}
    for h in hits:
        by_layer.setdefault(h.layer, []).append(h.id)
    assert sorted(by_layer) == ["long", "mid", "reflection", "short"]
    assert all(len(v) == 2 for v in by_layer.values())  # top_k from each layer, merged
    assert all(set(v) <= set(ids[layer]) for layer, v in by_layer.items())
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    only = await s.search("grain market prices", top_k=2, layers=["mid"])
    assert {h.layer for h in only} == {"mid"} and len(only) == 2


async def test_forgetting_pass_demotes_by_importance(finmem_group):
    g = finmem_group
    s = g.agent(1).stream
    memory_id = await s.add("event", "a middling rumour about rates", importance=0.5)
    await g.sync_writes()  # queued adds written before the store is used directly
    now = g.clock.abs_seconds
    await g.store.set_payload([memory_id], {"layer": "mid", "layer_since": now})
    g.hot.set_layer(memory_id, "mid", 0.5, now)
    out = await forgetting_pass(g)
    assert out["demoted"] == 1
    (rec,) = await s.get_by_ids(memory_id)
    assert rec.layer == "short"


def test_a_scenario_chooses_the_profile():
    from societas.agents.scenario import ScenarioConfig

    scenario = ScenarioConfig.model_validate({"memory": {"profile": "finmem"}})
    assert scenario.memory.profile == "finmem"
    assert scenario.memory.policies.forgetting.per_layer_retrieval
    with pytest.raises(ValueError, match="profile"):
        ScenarioConfig.model_validate({"memory": {"profile": "psychic"}})
